//! The tensor cores from kernels: warp-level matrix multiply-accumulate (`mma.sync`), the
//! shared-memory matrix loads that feed it (`ldmatrix`), and asynchronous copies from global
//! to shared memory (`cp.async`) — the building blocks of an Ampere-style GEMM, which also
//! runs on Hopper.
//!
//! Every operation is a `#[device]` function written in the kernel language over inline
//! PTX (`ptx!` with several outputs), so it inlines into the kernel with nothing linked.
//! Fragments are `#[derive(DeviceCopy)]` structs holding exactly the per-lane registers the
//! PTX ISA defines ("Matrix fragments for mma.m16n8k16"): rustc rejects a B fragment passed
//! as A, or a bf16 fragment where f16 is expected.
//!
//! - [`mma`]: fragments of `m16n8k16` (bf16 and f16 inputs, f32 accumulators) and the MMA;
//! - [`ldmatrix`]: 8×8 matrices of 16-bit elements from shared memory into fragments;
//! - [`copy_async`]: `cp.async` of 4, 8 or 16 bytes with zero-fill, commit and wait groups;
//! - [`pack`]: two f32 into a `bf16x2`/`f16x2` register, and back.
//!
//! Addresses come from the `shared_address(&tile[i])` and `global_address(&x[i])`
//! intrinsics. The CPU simulator does not run inline PTX yet, so kernels using this module
//! run on GPUs (sm_80 and newer); see `docs/tensor-cores.md`.

pub mod copy_async;
pub mod ldmatrix;
pub mod mma;
pub mod pack;
