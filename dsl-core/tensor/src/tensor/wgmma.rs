//! Hopper's warpgroup MMA (`wgmma.mma_async`, sm_90a): the four warps of a warpgroup (128
//! threads, warps `4w..4w+3`) multiply a 64×K A tile by a K×N B tile read from shared
//! memory through *matrix descriptors* (or A from registers), accumulating into a 64×N f32
//! tile held in the threads' registers (N/2 per thread). K is 16 for `bf16`/`f16` and 32 for
//! the FP8 types [`E4m3`]/[`E5m2`].
//!
//! Accumulator layout (PTX ISA, "wgmma 64xNx16 D fragments"): warp `w` of the group holds
//! rows `16w..16w+16`; within it lane `l` (`g = l / 4`, `t = l % 4`) holds, for each
//! 8-column block `j`, registers `4j..4j+4` = (g, 8j+2t), (g, 8j+2t+1), (g+8, 8j+2t),
//! (g+8, 8j+2t+1) — `mma.sync`'s m16n8 layout repeated along N.
//!
//! The instructions are typed operations of the kernel language ([`wgmma`],
//! [`wgmma_register_a`], [`wgmma_fence`], [`wgmma_commit_group`], [`wgmma_wait_group`]):
//! the shape comes from the accumulator array (N = 2 × its length), and a wrong count, type
//! or transpose is an error at the call when the kernel is compiled, before ptxas or the
//! simulator sees it:
//!
//! ```
//! use cudajit::prelude::*;
//! use cudajit::tensor::wgmma::{k_major_sw128, wgmma, wgmma_commit_group, wgmma_fence, wgmma_wait_group};
//!
//! /// One 64 × 256 tile of `A · Bᵀ` over one 64-deep k-tile of bf16 in shared memory.
//! #[device]
//! fn k_tile(acc: &mut [f32; 128], a_tile: u32, b_tile: u32, first: bool) {
//!     wgmma_fence();
//!     for ks in 0..4u32 {
//!         let (a, b) = (k_major_sw128(a_tile + 32 * ks), k_major_sw128(b_tile + 32 * ks));
//!         // The tile's first product overwrites the accumulators.
//!         wgmma::<bf16, false, false>(acc, a, b, !first || ks > 0);
//!     }
//!     wgmma_commit_group();
//!     wgmma_wait_group::<0>();
//! }
//! # fn main() {}
//! ```
//!
//! Descriptors: [`k_major_sw128`] describes a K-major tile (rows of 64 bf16 = 128 bytes,
//! consecutive rows 128 bytes apart) written by TMA with the 128-byte swizzle into
//! 1024-byte-aligned shared memory — the layout `TensorMapSwizzle::B128` produces for a box
//! of 64 bf16 columns. The 16-deep slice `k` of a 64-deep tile starts `32·k` bytes further
//! (the swizzle is applied by the hardware on the final addresses, so the start moves
//! linearly). `examples/gemm/hopper.rs` is a whole GEMM on these.

use super::device_only;
use cudajit::device;

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

/// The element types a [`wgmma`] multiplies: `bf16`, `f16` (K = 16) and the FP8 formats
/// [`E4m3`], [`E5m2`] (K = 32). Another type is a rustc error at the call.
pub trait WgmmaElement: sealed::Sealed {}

mod sealed {
    pub trait Sealed {}
}

/// FP8 with 4 exponent and 3 mantissa bits (OCP E4M3, finite, max 448), as a [`wgmma`]
/// element type: one byte per element in shared memory.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct E4m3;

/// FP8 with 5 exponent and 2 mantissa bits (OCP E5M2, max 57344), as a [`wgmma`] element
/// type: one byte per element in shared memory.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct E5m2;

impl sealed::Sealed for cudajit::bf16 {}
impl sealed::Sealed for cudajit::f16 {}
impl sealed::Sealed for E4m3 {}
impl sealed::Sealed for E5m2 {}
impl WgmmaElement for cudajit::bf16 {}
impl WgmmaElement for cudajit::f16 {}
impl WgmmaElement for E4m3 {}
impl WgmmaElement for E5m2 {}

/// `D (+)= A · B` on the tensor cores for the warpgroup (`wgmma.mma_async.m64nNkK`), A
/// (64 × K) and B (K × N) of element type `T` read from shared memory through their matrix
/// descriptors (`a`, `b`; see [`k_major_sw128`], [`mn_major_sw128`], and the tile types of
/// `cudajit::tensor::layout`), D the N/2 f32 accumulators `acc` of each thread (N = 2 ×
/// `acc.len()`, a multiple of 8 from 8 to 256). `TRANS_A`/`TRANS_B` read A or B MN-major
/// (16-bit types only). With `accumulate` false, D is overwritten. The warpgroup issues it
/// together, after a [`wgmma_fence`]; the product is complete (and its operand tiles free
/// to be overwritten) only once a [`wgmma_wait_group`] has retired its group.
pub fn wgmma<T: WgmmaElement, const TRANS_A: bool, const TRANS_B: bool>(
    acc: &mut [f32],
    a: u64,
    b: u64,
    accumulate: bool,
) {
    let _ = (acc, a, b, accumulate);
    device_only("wgmma")
}

/// [`wgmma`] with A from registers: `a` is the thread's fragment of the 64 × K tile, laid
/// out as `mma.sync`'s A per warp (two 16-bit or four FP8 elements a register); B from its
/// descriptor, MN-major with `TRANS_B` (16-bit types only).
pub fn wgmma_register_a<T: WgmmaElement, const TRANS_B: bool>(
    acc: &mut [f32],
    a: [u32; 4],
    b: u64,
    accumulate: bool,
) {
    let _ = (acc, a, b, accumulate);
    device_only("wgmma_register_a")
}

/// Orders the warpgroup's register and shared-memory accesses before the `wgmma`s that
/// follow (required before the first `wgmma` and whenever the accumulators were touched).
pub fn wgmma_fence() {
    device_only("wgmma_fence")
}

/// Closes the group of `wgmma`s issued since the last commit.
pub fn wgmma_commit_group() {
    device_only("wgmma_commit_group")
}

/// Waits until at most `N` committed groups are in flight (`N` 0 to 7). The accumulators
/// of a group may be read, and its operand tiles overwritten, only after it has completed.
pub fn wgmma_wait_group<const N: u32>() {
    device_only("wgmma_wait_group")
}
