//! Kernels linked on the CPU against NCCL 2.32.3's shipped `libnccl_device.ltoir` through
//! cudajit's shim (nvJitLink 13.5.37), the checks the MoE and reshard link tests share.

use cudajit::codegen::compile::{linked_ptx, CompileOptions};
use cudajit::core::CapturedKernel;
use cudajit::{Arch, Specialization};

/// Whether `line` is a 16-byte access.
fn is_vector(line: &str) -> bool {
    [".v4.u32", ".v4.b32", ".v4.f32", ".v2.u64", ".v2.b64"]
        .iter()
        .any(|v| line.contains(v))
}

/// The basic blocks of `ptx`'s entry (split at its `$L__` labels), trimmed lines.
fn blocks(ptx: &str) -> impl Iterator<Item = Vec<&str>> {
    let mut blocks = vec![Vec::new()];
    for line in ptx.lines().map(str::trim) {
        if line.starts_with("$L__") && line.ends_with(':') {
            blocks.push(Vec::new());
        }
        blocks.last_mut().expect("a block").push(line);
    }
    blocks.into_iter()
}

/// Points `LoadedNccl::global()` and the linker at the cached 2.32.3 wheel and nvJitLink
/// 13.5.37; `None` after printing why the test is skipped (a panic under
/// `CUDAJIT_REQUIRE_TOOLCHAIN=1`). Sets `CUDAJIT_NCCL_LIBRARY` and `CUDAJIT_NVJITLINK`, so
/// it is for the only test of its binary: a process loads one NCCL.
pub fn ltoir_or_skip() -> Option<()> {
    let root = super::nccl_wheels();
    let library = root.join("2.32.3/nvidia/nccl/lib/libnccl.so.2");
    let nvjitlink = root.join("nvjitlink-13.5.37/nvidia/cu13/lib/libnvJitLink.so.13");
    if !library.is_file() || !nvjitlink.is_file() {
        return super::skipped_without(&format!(
            "no NCCL 2.32.3 or nvJitLink 13.5.37 under {} (nccl-device/scripts/fetch-wheels.sh)",
            root.display()
        ));
    }
    // SAFETY: the only test of this binary sets them before anything reads them.
    unsafe {
        std::env::set_var("CUDAJIT_NCCL_LIBRARY", &library);
        std::env::set_var("CUDAJIT_NVJITLINK", &nvjitlink);
    }
    super::toolchain_or_skip().expect("the toolchain");
    Some(())
}

/// Links `captured` at `spec` against 2.32.3's `.ltoir` (after [`ltoir_or_skip`]) and
/// checks it: every NCCL call inlined, no function left but `ncclCoopAny`'s methods (and
/// `vprintf`/`__assertfail`), and, unless `moves_rows` is `None`, every basic block moving
/// 16-byte vectors of global memory free of local memory and calls, such blocks present
/// exactly when `moves_rows` is `Some(true)`. Returns the PTX, for a caller's further
/// checks.
pub fn link_and_check(
    captured: &'static CapturedKernel,
    spec: &Specialization,
    moves_rows: Option<bool>,
) -> String {
    let ptx = linked_ptx(captured, spec, Arch::SM_90, &CompileOptions::default())
        .unwrap_or_else(|e| panic!("linking {} against 2.32.3: {e}", captured.name));
    let entry = cudajit::core::lower::entry_symbol(captured.name, spec);
    if let Some(dir) = std::env::var_os("CUDAJIT_NCCL_TEST_PTX_DIR") {
        let file = format!("{entry}-2.32.3.ptx");
        std::fs::write(std::path::Path::new(&dir).join(file), &ptx).unwrap();
    }
    assert!(ptx.contains(&format!(".entry {entry}")), "{ptx}");
    for symbol in [
        "cudajit_nccl_",
        "ncclGetLsaPointer",
        "ncclLsaBarrierSession",
        "ncclCoopAnyInit",
    ] {
        assert!(!ptx.contains(symbol), "{entry}: {symbol} not inlined");
    }
    for line in ptx.lines().filter(|l| l.contains(".func")) {
        assert!(
            line.contains("ncclCoopAny")
                || line.contains("vprintf")
                || line.contains("__assertfail"),
            "{entry}: unexpected function left: {line}"
        );
    }
    let Some(moves_rows) = moves_rows else {
        return ptx;
    };
    // The copy and reduce loops: every basic block that moves 16-byte vectors of global
    // memory, free of local memory and calls.
    let copies: Vec<Vec<&str>> = blocks(&ptx)
        .filter(|b| b.iter().any(|l| l.contains(".global") && is_vector(l)))
        .collect();
    assert_eq!(
        !copies.is_empty(),
        moves_rows,
        "{entry}: {} copy blocks",
        copies.len()
    );
    for block in &copies {
        for line in block {
            assert!(
                !line.contains(".local") && !line.starts_with("call"),
                "{entry}: a copy loop uses local memory or calls ({line}):\n{}",
                block.join("\n")
            );
        }
    }
    if moves_rows {
        let vectors = |op: &str| {
            copies
                .iter()
                .flatten()
                .any(|l| l.starts_with(op) && is_vector(l))
        };
        assert!(vectors("ld.global"), "{entry}: no 16-byte load");
        assert!(vectors("st.global"), "{entry}: no 16-byte store");
    }
    ptx
}

/// Links each of `kernels()` (kernel, specialisation, whether it moves 16-byte vectors)
/// against 2.32.3's `.ltoir` and checks it ([`link_and_check`]). Skips without the wheels
/// (fails under `CUDAJIT_REQUIRE_TOOLCHAIN=1`); the only test of its binary
/// ([`ltoir_or_skip`]).
pub fn link_each_against_2_32_ltoir(
    kernels: impl FnOnce() -> Vec<(&'static CapturedKernel, Specialization, bool)>,
) {
    let Some(()) = ltoir_or_skip() else {
        return;
    };
    // Each link takes seconds (the `.ltoir` is 10 MB); side by side they were slower on
    // a 2-core machine, so one after the other.
    for (captured, spec, moves_rows) in kernels() {
        link_and_check(captured, &spec, Some(moves_rows));
    }
}
