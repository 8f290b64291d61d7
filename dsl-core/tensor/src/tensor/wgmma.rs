//! Hopper's warpgroup MMA (`wgmma.mma_async`, sm_90a): the four warps of a warpgroup (128
//! threads, warps `4w..4w+3`) multiply a 64×16 A tile by a 16×N B tile read from shared
//! memory through *matrix descriptors*, accumulating into a 64×N f32 tile held in the
//! threads' registers (N/2 per thread).
//!
//! Accumulator layout (PTX ISA, "wgmma 64xNx16 D fragments"): warp `w` of the group holds
//! rows `16w..16w+16`; within it lane `l` (`g = l / 4`, `t = l % 4`) holds, for each
//! 8-column block `j`, registers `4j..4j+4` = (g, 8j+2t), (g, 8j+2t+1), (g+8, 8j+2t),
//! (g+8, 8j+2t+1) — `mma.sync`'s m16n8 layout repeated along N.
//!
//! The instruction itself is issued with `ptx!` on a local accumulator array passed
//! in/out (`&mut acc`, one register list: a `#[device]` function cannot take the array yet):
//!
//! ```text
//! let mut acc = [0.0f32; 128];                       // 64×256 f32 over 128 threads
//! wgmma_fence();
//! ptx!("{\n.reg .pred p;\nsetp.ne.b32 p, $3, 0;\n\
//!       wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16 {$0}, $1, $2, p, 1, 1, 0, 0;\n}",
//!      &mut acc, descriptor_a, descriptor_b, 1u32);
//! wgmma_commit_group();
//! wgmma_wait_group::<0>();
//! ```
//!
//! Descriptors: [`k_major_sw128`] describes a K-major tile (rows of 64 bf16 = 128 bytes,
//! consecutive rows 128 bytes apart) written by TMA with the 128-byte swizzle into
//! 1024-byte-aligned shared memory — the layout `TensorMapSwizzle::B128` produces for a box
//! of 64 bf16 columns. The 16-deep slice `k` of a 64-deep tile starts `32·k` bytes further
//! (the swizzle is applied by the hardware on the final addresses, so the start moves
//! linearly). `examples/gemm/hopper.rs` is a whole GEMM on these.

use cudajit::device;
use cudajit_core::ptx;

/// The descriptor of a K-major, 128-byte-swizzled tile at `.shared` address `address`
/// (1024-byte aligned for slice 0; slice `k` at `address + 32 k`): start address in 16-byte
/// units (bits 0–13), leading byte offset 16 (unused by swizzled K-major layouts, bits
/// 16–29), stride byte offset 1024 between 8-row groups (bits 32–45), layout 128-byte
/// swizzle (bits 62–63 = 1).
#[device]
pub fn k_major_sw128(address: u32) -> u64 {
    let start = ((address & 0x3ffff) >> 4) as u64;
    start | (1u64 << 16) | ((1024u64 >> 4) << 32) | (1u64 << 62)
}

/// The descriptor of an MN-major, 128-byte-swizzled tile at `address`: rows of 64 bf16
/// of M (or N) 128 bytes apart, one per k, written by TMA boxes of 64 × 64 with the 128-byte
/// swizzle; consecutive 64-wide chunks of M (N) `chunk_bytes` apart (the leading byte
/// offset), 8-row groups of k 1024 bytes apart (the stride byte offset). The 16-deep slice
/// `k` of the tile starts `2048 k` bytes further. `wgmma` reads such a B with its
/// transpose flag set (`imm-trans-b` = 1).
#[device]
pub fn mn_major_sw128(address: u32, chunk_bytes: u32) -> u64 {
    let start = ((address & 0x3ffff) >> 4) as u64;
    let leading = ((chunk_bytes >> 4) & 0x3fff) as u64;
    start | (leading << 16) | ((1024u64 >> 4) << 32) | (1u64 << 62)
}

/// Orders the warpgroup's register and shared-memory accesses before the `wgmma`s that
/// follow (required before the first `wgmma` and whenever the accumulators were touched).
#[device]
pub fn wgmma_fence() {
    ptx!("wgmma.fence.sync.aligned;");
}

/// Closes the group of `wgmma`s issued since the last commit.
#[device]
pub fn wgmma_commit_group() {
    ptx!("wgmma.commit_group.sync.aligned;");
}

/// Waits until at most `N` committed groups are in flight (`N` 0 to 3; larger waits for
/// all). The accumulators of a group may be read only after it has completed.
#[device]
pub fn wgmma_wait_group<const N: u32>() {
    match N {
        1 => ptx!("wgmma.wait_group.sync.aligned 1;"),
        2 => ptx!("wgmma.wait_group.sync.aligned 2;"),
        3 => ptx!("wgmma.wait_group.sync.aligned 3;"),
        _ => ptx!("wgmma.wait_group.sync.aligned 0;"),
    }
}
