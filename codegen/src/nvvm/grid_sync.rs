//! Writing `grid_sync()`: the grid barrier of CUDA's cooperative groups
//! (`cooperative_groups::this_grid().sync()`, CCCL's `__grid_sync`), as nvcc compiles it.
//!
//! A cooperative launch gives the kernel a grid workspace, `{ u32 size; u32 barrier; }`,
//! whose address the driver passes in `%envreg1` (high half) and `%envreg2` (low half);
//! a launch that is not cooperative passes 0. The barrier word counts arrivals: thread 0
//! of block 0 adds `0x80000000 - (blocks - 1)`, thread 0 of every other block adds 1, so
//! the top bit flips exactly when the last block arrives, whatever the word held before
//! (it is never reset: each barrier flips it once more). Each block's thread 0 adds with
//! release semantics (publishing its block's writes, ordered before by the block's
//! `bar.sync`), polls with acquire loads until the bit differs from the one it saw, and the
//! block's second `bar.sync` hands what it acquired on to the other threads.

use cudajit_core::Span;

use super::function::Writer;

impl Writer<'_> {
    /// `grid_sync()`. With bounds checks on, a launch that is not cooperative (no workspace)
    /// stops the kernel with a message naming the fix, as CCCL asserts in debug builds.
    pub(super) fn grid_sync(&mut self, span: Span) {
        self.declare("declare void @llvm.nvvm.barrier0() convergent nounwind".into());
        self.line("call void @llvm.nvvm.barrier0()".into());
        let thread = self.or_of_axes("tid");
        let leader = self.value(format!("icmp eq i32 {thread}, 0"));
        let arrive = self.label("grid_sync.arrive");
        let poll = self.label("grid_sync.poll");
        let done = self.label("grid_sync.done");
        self.line(format!("br i1 {leader}, label %{arrive}, label %{done}"));
        self.terminated = true;

        self.start(&arrive);
        let workspace = self.value(
            "call i64 asm sideeffect \"mov.b64 $0, {%envreg2, %envreg1};\", \"=l\"()".into(),
        );
        if self.options.bounds_checks {
            let missing = self.value(format!("icmp eq i64 {workspace}, 0"));
            let fail = self.label("grid_sync.not_cooperative");
            let ok = self.label("grid_sync.cooperative");
            self.line(format!("br i1 {missing}, label %{fail}, label %{ok}"));
            self.terminated = true;
            self.start(&fail);
            self.trap(
                "grid_sync() in a launch that is not cooperative: launch with LaunchConfig::cooperative()",
                span,
            );
            self.line("unreachable".into());
            self.terminated = true;
            self.start(&ok);
        }
        let barrier = self.value(format!("add i64 {workspace}, 4"));
        let x = self.sreg("nctaid", "x");
        let y = self.sreg("nctaid", "y");
        let z = self.sreg("nctaid", "z");
        let xy = self.value(format!("mul i32 {x}, {y}"));
        let blocks = self.value(format!("mul i32 {xy}, {z}"));
        let block = self.or_of_axes("ctaid");
        let first_block = self.value(format!("icmp eq i32 {block}, 0"));
        // 0x80000000 - (blocks - 1), in wrapping u32 arithmetic.
        let first_adds = self.value(format!("sub i32 -2147483647, {blocks}"));
        let adds = self.value(format!("select i1 {first_block}, i32 {first_adds}, i32 1"));
        let before = self.value(format!(
            "call i32 asm sideeffect \"atom.add.release.gpu.u32 $0, [$1], $2;\", \"=r,l,r,~{{memory}}\"(i64 {barrier}, i32 {adds})"
        ));
        self.line(format!("br label %{poll}"));
        self.terminated = true;

        self.start(&poll);
        let now = self.value(format!(
            "call i32 asm sideeffect \"ld.acquire.gpu.u32 $0, [$1];\", \"=r,l,~{{memory}}\"(i64 {barrier})"
        ));
        let changed = self.value(format!("xor i32 {before}, {now}"));
        let top = self.value(format!("and i32 {changed}, -2147483648"));
        let flipped = self.value(format!("icmp ne i32 {top}, 0"));
        self.line(format!("br i1 {flipped}, label %{done}, label %{poll}"));
        self.terminated = true;

        self.start(&done);
        self.line("call void @llvm.nvvm.barrier0()".into());
    }

    /// `%<register>.x | %<register>.y | %<register>.z`: zero exactly for the first thread
    /// (`tid`) or block (`ctaid`).
    fn or_of_axes(&mut self, register: &str) -> String {
        let x = self.sreg(register, "x");
        let y = self.sreg(register, "y");
        let z = self.sreg(register, "z");
        let xy = self.value(format!("or i32 {x}, {y}"));
        self.value(format!("or i32 {xy}, {z}"))
    }

    fn sreg(&mut self, register: &str, axis: &str) -> String {
        let name = format!("llvm.nvvm.read.ptx.sreg.{register}.{axis}");
        self.declare(format!("declare i32 @{name}() nounwind readnone"));
        self.value(format!("call i32 @{name}()"))
    }
}
