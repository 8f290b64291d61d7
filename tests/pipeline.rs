//! The whole pipeline on the CPU: macro → IR → NVVM IR → libNVVM → nvJitLink → cubin.

mod common;

use common::kernels::*;
use cudajit::codegen::cubin;
use cudajit::{Arch, CubinOrigin, Kernel};

/// Every test kernel, so each is compiled for real on the CPU.
const KERNELS: [&Kernel; 7] = [
    &saxpy::KERNEL,
    &int_ops::KERNEL,
    &casts::KERNEL,
    &loops::KERNEL,
    &transpose::KERNEL,
    &bools::KERNEL,
    &scale_strided::KERNEL,
];

#[test]
fn nvvm_ir_has_the_kernel_and_its_metadata() {
    let ir = saxpy::KERNEL.nvvm_ir().expect("lowering saxpy");
    assert!(ir.contains("define void @saxpy(float %arg0.a, float* noalias readonly %arg1.x.ptr, i64 %arg1.x.len, float* noalias %arg2.y.ptr, i64 %arg2.y.len)"), "{ir}");
    assert!(ir.contains("!\"kernel\", i32 1}"), "{ir}");
    assert!(ir.contains("@llvm.used"), "{ir}");
    assert!(ir.contains("!nvvmir.version"), "{ir}");
}

#[test]
fn cubins_for_sm90_and_sm80_contain_the_entry() {
    let Some(_tools) = common::toolchain_or_skip() else {
        return;
    };
    for arch in [Arch::SM_90, Arch::SM_80] {
        let compiled = saxpy::KERNEL
            .compile_for_arch(arch)
            .expect("compiling saxpy");
        let info = cubin::inspect(&compiled.cubin).expect("a cubin");
        assert!(
            info.has_function("saxpy"),
            "{arch}: functions {:?}",
            info.functions
        );
        assert_eq!(compiled.arch, arch);
        assert!(matches!(
            compiled.report.origin,
            CubinOrigin::Compiled | CubinOrigin::Disk | CubinOrigin::Memory
        ));
        eprintln!(
            "{arch}: cubin {} bytes, flags {:#x}, {:?}",
            compiled.cubin.len(),
            info.flags,
            compiled.report
        );
    }
}

#[test]
fn every_test_kernel_compiles_to_a_cubin() {
    let Some(_tools) = common::toolchain_or_skip() else {
        return;
    };
    for kernel in KERNELS {
        let compiled = kernel.compile_for_arch(Arch::SM_90).unwrap_or_else(|e| {
            panic!(
                "{}: {e}\n{}",
                kernel.name(),
                kernel.nvvm_ir().unwrap_or_default()
            )
        });
        let info = cubin::inspect(&compiled.cubin).expect("a cubin");
        assert!(
            info.has_function(kernel.name()),
            "{}: {:?}",
            kernel.name(),
            info.functions
        );
    }
}

/// Statements at the end of a block without `;`, as rustfmt leaves them.
#[cudajit::kernel]
fn statements_without_semicolons(x: &[f32], y: &mut [f32]) {
    let i = cudajit::prelude::global_index();
    if i >= y.len() {
        return;
    }
    if x[i] > 1.0 {
        y[i] = 1.0
    } else {
        y[i] = x[i]
    }
    for _k in 0..2 {
        y[i] += 1.0
    }
}

#[test]
fn statements_without_semicolons_lower() {
    let ir = statements_without_semicolons::KERNEL
        .nvvm_ir()
        .expect("lowering");
    assert!(ir.contains("define void @statements_without_semicolons"));
}
