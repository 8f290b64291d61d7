//! NCCL's device API in `#[kernel]`s, on the CPU: the kernels of the LSA examples lowered
//! to NVVM IR, then linked by nvJitLink against the device library of a real NCCL
//! release (the 2.28.3 wheel, the release of the GPU machine: cudajit's bridge built by
//! nvcc over its headers), with every NCCL call inlined and the barrier session and
//! communicator kept out of local memory (the checks of tests/common/bridge_2_28.rs, which
//! the MoE and reshard link tests share).
//!
//! Needs the compiler wheels of scripts/test.sh and the NCCL wheels of
//! nccl-device/scripts/fetch-wheels.sh; skips without them (fails under
//! `CUDAJIT_REQUIRE_TOOLCHAIN=1`).

mod common;

#[path = "../examples/lsa/kernels.rs"]
mod kernels;

use cudajit::core::CapturedKernel;
use cudajit::Specialization;

#[test]
fn nvvm_ir_passes_comm_session_and_window_as_c_does() {
    let ir = kernels::peer_read::KERNEL
        .nvvm_ir()
        .expect("lowering peer_read");
    for needle in [
        "declare i32 @cudajit_nccl_lsa_rank(i8*)",
        "declare void @cudajit_nccl_lsa_barrier_init(i8*, i8*, i32)",
        "declare void @cudajit_nccl_lsa_barrier_sync(i8*, i32)",
        "declare i64 @cudajit_nccl_lsa_pointer(i64, i64, i32)",
        "byval align 16",
    ] {
        assert!(ir.contains(needle), "{needle} not in:\n{ir}");
    }
}

fn spec(ty: Option<cudajit::core::Scalar>) -> Specialization {
    Specialization {
        types: ty.map(|t| ("T".to_owned(), t)).into_iter().collect(),
        structs: Vec::new(),
        consts: Vec::new(),
    }
}

/// Every NCCL call inlined, no function left but the device-side assertion's cold report
/// (`assert!` on the LSA team size), nothing in local memory (the session and the
/// communicator stay in registers and parameters), and LSA data moved as 16-byte vectors
/// of global memory (but for the kernels of the other cooperative groups' sessions, which
/// copy element by element): tests/common/bridge_2_28.rs's checks.
#[test]
fn the_example_kernels_link_against_the_bridge_with_every_call_inlined() {
    common::bridge_2_28::link_each_against_2_28_bridge(|| {
        use cudajit::core::Scalar;
        let kernels: [(&'static CapturedKernel, Option<Scalar>); 16] = [
            (kernels::peer_read::KERNEL.captured(), None),
            (kernels::peer_read_warps::KERNEL.captured(), None),
            (kernels::peer_read_warp_spans::KERNEL.captured(), None),
            (kernels::peer_read_half_warps::KERNEL.captured(), None),
            (kernels::peer_read_threads::KERNEL.captured(), None),
            (
                kernels::all_reduce_one_shot::KERNEL.captured(),
                Some(Scalar::F32),
            ),
            (
                kernels::all_reduce_one_shot::KERNEL.captured(),
                Some(Scalar::I32),
            ),
            (
                kernels::all_reduce_two_shot::KERNEL.captured(),
                Some(Scalar::F32),
            ),
            (
                kernels::all_reduce_two_shot::KERNEL.captured(),
                Some(Scalar::I32),
            ),
            (kernels::all_reduce_one_shot_bf16::KERNEL.captured(), None),
            (kernels::all_reduce_two_shot_bf16::KERNEL.captured(), None),
            (kernels::all_gather::KERNEL.captured(), Some(Scalar::F32)),
            (
                kernels::all_reduce_two_shot_push::KERNEL.captured(),
                Some(Scalar::F32),
            ),
            (kernels::all_to_all::KERNEL.captured(), Some(Scalar::I32)),
            (
                kernels::all_reduce_one_shot_64::KERNEL.captured(),
                Some(Scalar::F64),
            ),
            (
                kernels::all_reduce_one_shot_16::KERNEL.captured(),
                Some(Scalar::F16),
            ),
        ];
        kernels
            .into_iter()
            .map(|(captured, ty)| {
                let moves_rows = !captured.name.starts_with("peer_read_");
                (captured, spec(ty), moves_rows)
            })
            .collect()
    });
}
