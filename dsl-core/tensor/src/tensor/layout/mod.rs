//! Shared-memory tile layouts that TMA writes and `wgmma` reads, as types: the start of
//! cudajit's answer to CuTe's layouts, with the swizzle in the type rather than in every
//! call site.
//!
//! A K-major tile of rows `W` bytes wide (`W` = 32, 64 or 128: 16, 32 or 64 bf16) in
//! `W`-byte swizzle stores byte `b` of row `r` at `swizzle_W(r W + b)`: the 16-byte chunk
//! index (address bits 4 .. 4 + log2(W/16)) XORed with the row within its 8-row group (bits
//! 7 and up) — CUTLASS's `Swizzle<log2(W/16), 4, 3>`, what `cuTensorMapEncodeTiled`'s
//! `CU_TENSOR_MAP_SWIZZLE_{32,64,128}B` produce for a box whose inner dimension is `W`
//! bytes, and what a `wgmma` matrix descriptor with layout type 3, 2 or 1 reads ([`swizzle`]
//! has the functions, host and device alike).
//!
//! [`SharedTileSw128`], [`SharedTileSw64`] and [`SharedTileSw32`] are such tiles at a shared
//! address (aligned to the swizzle's repeat, `8 W` bytes). Each computes its own byte
//! offsets and its own `wgmma` descriptors, and tells the host's tensor map its swizzle
//! ([`TileSwizzle`], `TensorMapLayout::with_swizzle_of::<SharedTileSw128>()`), so the
//! swizzle is written once, in a type: a tile declared 128-byte-swizzled cannot give a
//! 64-byte descriptor, and a function that takes a `SharedTileSw128` does not accept a
//! `SharedTileSw64` (a rustc error at the call). The types are `DeviceCopy` structs with
//! `#[device]` impl blocks: kernels use them, and the host calls the same methods.
//!
//! [`warpgroup_acc_position`] and [`warpgroup_acc_owner`] partition a `wgmma` accumulator
//! tile among the warpgroup's threads (the warp's m16n8 partition is
//! [`crate::tensor::mma::acc_position`]).
//!
//! ```no_run
//! use cudajit::prelude::*;
//! use cudajit::tensor::layout::SharedTileSw128;
//!
//! /// The descriptors of k slice `ks` (16 bf16 = 32 bytes) of a K-major A tile and an
//! /// MN-major B tile whose 64-wide N chunks are 8 KiB apart.
//! #[device]
//! fn slice_descriptors(a: SharedTileSw128, b: SharedTileSw128, ks: u32) -> (u64, u64) {
//!     (a.k_major_descriptor(32 * ks), b.mn_major_descriptor(16 * ks, 8192))
//! }
//! # fn main() {}
//! ```

pub mod algebra;
mod partition;
pub mod swizzle;
mod tile;

pub use partition::{warpgroup_acc_owner, warpgroup_acc_position};
pub use tile::{SharedTileSw128, SharedTileSw32, SharedTileSw64, TileSwizzle};
