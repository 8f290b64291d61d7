//! The reshard kernels (`cudajit::nccl::m2n::kernels`) linked on the CPU against NCCL
//! 2.28.3's device library (cudajit's bridge, built by nvcc over the wheel's headers: the
//! release of the GPU machine): every NCCL call inlined, nothing in local memory, the
//! aligned runs moved as 16-byte vectors.
//!
//! Needs the compiler wheels of scripts/test.sh and the NCCL wheels of
//! nccl-device/scripts/fetch-wheels.sh; skips without them (fails under
//! `CUDAJIT_REQUIRE_TOOLCHAIN=1`).

mod common;
mod m2n_kernels;

/// The benchmark's own kernel (examples/m2n_bench/), linked here too.
pub type BenchResult<T> = Result<T, Box<dyn std::error::Error>>;
#[path = "../examples/m2n_bench/baseline.rs"]
#[allow(dead_code)]
mod baseline;
#[path = "../examples/bench/peer.rs"]
#[allow(dead_code)]
mod peer;

use cudajit::Specialization;

#[test]
fn the_reshard_kernels_link_against_the_2_28_bridge_with_every_call_inlined() {
    common::bridge_2_28::link_each_against_2_28_bridge(|| {
        let mut kernels = m2n_kernels::every_kernel();
        // The benchmark's concatenation of column blocks.
        kernels.push((
            baseline::concat_column_blocks::KERNEL.captured(),
            Specialization::default(),
            true,
        ));
        kernels
    });
}
