//! Typed tensor-core operations (`cudajit::tensor::wgmma`, `cudajit::tensor::warpgroup`):
//! what the instruction cannot take is an error at the call when the kernel is compiled —
//! before ptxas or the simulator sees it — on both back ends, and what it can take compiles
//! to the instruction. (The operations' results are checked against the host by
//! `tests/pipeline_hazards.rs`, `tests/gemm.rs` and `tests/attention_wgmma.rs`, whose
//! kernels are written with them.) `tests/compile_fail/wgmma_*.rs`: a wrong element type
//! is rustc's error, missing generics the macro's.

mod common;

use cudajit::prelude::*;
use cudajit::tensor::warpgroup::{named_barrier_sync, setmaxnreg_inc};
use cudajit::tensor::wgmma::{wgmma, wgmma_commit_group, wgmma_fence, wgmma_wait_group, E5m2};
use cudajit::{bf16, Error, LaunchConfig, SimStream};

/// One wgmma of `2 × ACC` columns (it never runs: the kernel does not compile unless `ACC`
/// is a count the instruction takes). The descriptors are parameters: nvJitLink 13.0's LTO
/// crashes (SIGSEGV) on a wgmma whose descriptors fold to the constant 0.
#[kernel(arch = "sm_90a", max_threads = 128)]
fn columns<const ACC: usize>(a: u64, b: u64, out: &mut [f32]) {
    let mut acc = [0.0f32; ACC];
    wgmma_fence();
    wgmma::<bf16, false, false>(&mut acc, a, b, false);
    wgmma_commit_group();
    wgmma_wait_group::<0>();
    out[0] = acc[0];
}

/// An FP8 wgmma asked to read B transposed.
#[kernel(arch = "sm_90a", max_threads = 128)]
fn fp8_transposed(out: &mut [f32]) {
    let mut acc = [0.0f32; 32];
    wgmma::<E5m2, false, true>(&mut acc, 0, 0, false);
    out[0] = acc[0];
}

/// Counts the tensor cores and the barrier cannot take.
#[kernel(arch = "sm_90a", max_threads = 128)]
fn bad_counts<const WHICH: u32>(out: &mut [f32]) {
    if WHICH == 0 {
        wgmma_wait_group::<9>();
    } else if WHICH == 1 {
        setmaxnreg_inc::<20>();
    } else {
        named_barrier_sync::<48>(1);
    }
    out[0] = 1.0;
}

/// The compile error of a launch on the simulator: its message.
fn compile_error(result: Result<(), Error>) -> String {
    match result {
        Err(Error::Compile(error)) => error.to_string(),
        Err(other) => panic!("expected a compile error, got {other}"),
        Ok(()) => panic!("expected a compile error, the launch ran"),
    }
}

#[test]
fn a_wgmma_whose_accumulators_are_no_shape_is_an_error_at_its_call() {
    let stream = SimStream::new();
    let mut out = stream.alloc_zeros::<f32>(1).unwrap();
    let config = LaunchConfig::new(1, 128);
    let message = compile_error(columns::launch::<18>(&stream, config, 0, 0, &mut out));
    assert!(message.contains("N = 36"), "{message}");
    assert!(
        message.contains("tests/tensor_ops.rs:23"),
        "the call's line: {message}"
    );
    let message = compile_error(columns::launch::<256>(&stream, config, 0, 0, &mut out));
    assert!(message.contains("N = 512"), "{message}");
    let message = compile_error(fp8_transposed::launch(&stream, config, &mut out));
    assert!(message.contains("K-major only"), "{message}");
    for (which, want) in [(0, "0 to 7"), (1, "from 24 to 256"), (2, "multiple of 32")] {
        let message = compile_error(match which {
            0 => bad_counts::launch::<0>(&stream, config, &mut out),
            1 => bad_counts::launch::<1>(&stream, config, &mut out),
            _ => bad_counts::launch::<2>(&stream, config, &mut out),
        });
        assert!(message.contains(want), "{which}: {message}");
    }
}

#[test]
fn every_accumulator_count_compiles_to_its_instruction() {
    use cudajit::codegen::compile::{linked_ptx, CompileOptions};
    use cudajit::core::ir::Literal;
    use cudajit::core::Scalar;
    use cudajit::{Arch, Specialization};
    if common::toolchain_or_skip().is_none() {
        return;
    }
    for acc in [4u64, 20, 64, 128] {
        let spec = Specialization {
            types: Vec::new(),
            structs: Vec::new(),
            consts: vec![(
                "ACC".to_owned(),
                Literal::Int {
                    bits: acc,
                    ty: Scalar::Usize,
                },
            )],
        };
        let ptx = linked_ptx(
            columns::KERNEL.captured(),
            &spec,
            Arch::SM_90A,
            &CompileOptions::default(),
        )
        .unwrap();
        let instruction = format!(
            "wgmma.mma_async.sync.aligned.m64n{}k16.f32.bf16.bf16",
            2 * acc
        );
        assert_eq!(ptx.matches(&instruction).count(), 1, "{instruction}");
        assert_eq!(ptx.matches("wgmma.wait_group.sync.aligned 0;").count(), 1);
    }
}
