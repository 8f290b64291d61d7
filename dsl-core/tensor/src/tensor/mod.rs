//! The tensor cores from kernels: warp-level matrix multiply-accumulate (`mma.sync`), the
//! shared-memory matrix loads that feed it (`ldmatrix`), and asynchronous copies from global
//! to shared memory (`cp.async`) — the building blocks of an Ampere-style GEMM, which also
//! runs on Hopper.
//!
//! Every operation is a `#[device]` function written in the kernel language over inline
//! PTX (`ptx!` with several outputs), so it inlines into the kernel with nothing linked.
//! Fragments are `#[derive(DeviceCopy)]` structs holding exactly the per-lane registers the
//! PTX ISA defines ("Matrix fragments for mma.m16n8k8/k16/k32"): rustc rejects a B fragment passed
//! as A, or a bf16 fragment where f16 is expected.
//!
//! - [`mma`]: fragments and MMAs of `m16n8k16` (bf16, f16 → f32; f16 → f16), `m16n8k8`
//!   (tf32 → f32) and `m16n8k32` (e4m3, e5m2 → f32; s8, u8 → s32), and accumulator
//!   elements by (row, column);
//! - [`ldmatrix`]: 8×8 matrices of 16-bit elements from shared memory into fragments;
//! - [`stmatrix`] (sm_90): 8×8 matrices of 16-bit elements from registers into shared
//!   memory, accumulators stored as tiles;
//! - [`copy_async`]: `cp.async` of 4, 8 or 16 bytes with zero-fill, commit and wait groups,
//!   the wait of a multi-stage pipeline (`cp_async_wait_stage::<STAGES>`);
//! - [`pack`]: two f32 into a `bf16x2`/`f16x2` register, and back;
//! - Hopper (sm_90/sm_90a): [`mbarrier`] (transaction barriers), [`tma`] (tensor-map box
//!   copies), [`wgmma`] (warpgroup MMA descriptors, fence, commit, wait), [`layout`]
//!   (swizzled shared tiles as types: their offsets, descriptors and tensor-map swizzle),
//!   [`warpgroup`] (`setmaxnreg`, named barriers between warpgroups),
//!   [`pipeline`] (a ring of buffers between a producer and its consumers over mbarriers).
//!
//! Addresses come from the `shared_address(&tile[i])` and `global_address(&x[i])`
//! intrinsics. Kernels using this module run on GPUs (sm_80 and newer, Hopper for
//! `mbarrier`, `tma`, `wgmma`) and on the CPU simulator, which runs the same PTX templates
//! (`docs/simulator.md`); see `docs/tensor-cores.md`.
//!
//! One warp multiplying a 16×16 bf16 tile `a` (row-major) by a 16×8 tile `b` (stored
//! column by column) into 16×8 f32: the tiles through shared memory, each lane's fragments
//! by `ldmatrix`, one `mma.sync`, and each lane's four results to where the accumulator
//! layout puts them ([`mma`] has the table):
//!
//! ```no_run
//! use cudajit::prelude::*;
//! use cudajit::tensor::ldmatrix::{load_a_bf16, load_b_bf16};
//! use cudajit::tensor::mma::{acc_zero, mma_bf16};
//! use cudajit::{bf16, LaunchConfig};
//!
//! #[kernel]
//! fn mma_tile(a: &[bf16], b: &[bf16], d: &mut [f32]) {
//!     let a_tile = shared_array::<bf16>(256);
//!     let b_tile = shared_array::<bf16>(128);
//!     let lane = lane_id() as usize;
//!     for i in 0..8usize {
//!         a_tile[lane * 8 + i] = a[lane * 8 + i];
//!     }
//!     for i in 0..4usize {
//!         b_tile[lane * 4 + i] = b[lane * 4 + i];
//!     }
//!     sync_threads();
//!     // A: lane l gives row l % 16 from column 8 (l / 16);
//!     // B: lane l gives column l % 8 from k 8 ((l / 8) % 2).
//!     let fa = load_a_bf16(shared_address(&a_tile[(lane % 16) * 16 + 8 * (lane / 16)]));
//!     let fb = load_b_bf16(shared_address(&b_tile[(lane % 8) * 16 + 8 * ((lane / 8) % 2)]));
//!     let acc = mma_bf16(fa, fb, acc_zero());
//!     let (g, t) = (lane / 4, lane % 4);
//!     d[g * 8 + 2 * t] = acc.c0;
//!     d[g * 8 + 2 * t + 1] = acc.c1;
//!     d[(g + 8) * 8 + 2 * t] = acc.c2;
//!     d[(g + 8) * 8 + 2 * t + 1] = acc.c3;
//! }
//!
//! fn main() -> Result<(), cudajit::Error> {
//!     let stream = cudajit::default_context()?.default_stream();
//!     let a = stream.clone_htod(&[bf16::from_f32(1.0); 256])?;
//!     let b = stream.clone_htod(&[bf16::from_f32(2.0); 128])?;
//!     let mut d = stream.alloc_zeros::<f32>(128)?;
//!     mma_tile::launch(&stream, LaunchConfig::new(1, 32), &a, &b, &mut d)?;
//!     assert!(stream.clone_dtoh(&d)?.iter().all(|&x| x == 32.0)); // 16 products of 1 × 2
//!     Ok(())
//! }
//! ```

pub mod cluster;
pub mod copy_async;
pub mod layout;
pub mod ldmatrix;
pub mod mbarrier;
pub mod mma;
pub mod pack;
pub mod pipeline;
pub mod stmatrix;
pub mod tma;
pub mod warpgroup;
pub mod wgmma;

/// The host side of a typed tensor-core operation (`cudajit_core::tensor_op`): the kernel
/// language compiles the call, so running it on the host is a mistake.
#[cold]
fn device_only(name: &str) -> ! {
    panic!(
        "`{name}()` is a tensor-core operation: it only has a meaning inside a `#[kernel]` \
         function launched on the GPU (or the simulator)"
    )
}
