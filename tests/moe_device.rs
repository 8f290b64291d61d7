//! The mixture-of-experts kernels (`cudajit::nccl::moe::low_latency`) linked on the CPU
//! against NCCL 2.28.3's device library (cudajit's bridge, built by nvcc over the wheel's
//! headers: the release of the GPU machine): every NCCL call inlined, nothing in local
//! memory, the token rows moved as 16-byte vectors.
//!
//! Needs the compiler wheels of scripts/test.sh and the NCCL wheels of
//! nccl-device/scripts/fetch-wheels.sh; skips without them (fails under
//! `CUDAJIT_REQUIRE_TOOLCHAIN=1`).

mod common;
mod moe_kernels;

/// The benchmark's own kernels (examples/moe_bench/), linked here too.
pub type BenchResult<T> = Result<T, Box<dyn std::error::Error>>;
#[path = "../examples/moe_bench/baseline.rs"]
#[allow(dead_code)]
mod baseline;
#[path = "../examples/moe_bench/experts.rs"]
mod experts;

use cudajit::Specialization;

#[test]
fn the_moe_kernels_link_against_the_2_28_bridge_with_every_call_inlined() {
    common::bridge_2_28::link_each_against_2_28_bridge(|| {
        let plain = Specialization::default;
        let mut kernels = moe_kernels::every_kernel();
        // The benchmark's permute, un-permute and identity experts.
        kernels.extend([
            (baseline::permute_rows::KERNEL.captured(), plain(), true),
            (
                baseline::unpermute_weighted::KERNEL.captured(),
                plain(),
                true,
            ),
            (experts::identity_experts::KERNEL.captured(), plain(), true),
        ]);
        kernels
    });
}
