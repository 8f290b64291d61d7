//! The whole pipeline on the CPU: macro → IR → NVVM IR → libNVVM → nvJitLink → cubin.

mod common;

use common::kernels::*;
use cudajit::codegen::cubin;
use cudajit::core::ir::Literal;
use cudajit::core::Scalar;
use cudajit::{Arch, CubinOrigin, Kernel, Specialization};

/// Every non-generic test kernel, so each is compiled for real on the CPU.
const KERNELS: [&Kernel; 21] = [
    &returned_values::KERNEL,
    &tuple_branches::KERNEL,
    &tuples::KERNEL,
    &apply_ops::KERNEL,
    &half_precision::KERNEL,
    &advance::KERNEL,
    &inline_ptx::KERNEL,
    &classify::KERNEL,
    &warp_helpers::KERNEL,
    &saxpy_vec4::KERNEL,
    &block_sum::KERNEL,
    &histogram::KERNEL,
    &warp_ops::KERNEL,
    &saxpy::KERNEL,
    &int_ops::KERNEL,
    &casts::KERNEL,
    &loops::KERNEL,
    &transpose::KERNEL,
    &bools::KERNEL,
    &scale_strided::KERNEL,
    &math_ops::KERNEL,
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

#[test]
fn specialisations_compile_to_their_own_entry_points() {
    let Some(_tools) = common::toolchain_or_skip() else {
        return;
    };
    let f32_spec = Specialization {
        types: vec![("T".into(), Scalar::F32)],
        structs: Vec::new(),
        consts: vec![],
    };
    let f64_spec = Specialization {
        types: vec![("T".into(), Scalar::F64)],
        structs: Vec::new(),
        consts: vec![],
    };
    let a = blend::KERNEL
        .compile_for_arch_with(Arch::SM_90, &f32_spec)
        .unwrap();
    let b = blend::KERNEL
        .compile_for_arch_with(Arch::SM_90, &f64_spec)
        .unwrap();
    assert_eq!(a.entry, "blend_f32");
    assert_eq!(b.entry, "blend_f64");
    assert_ne!(a.key, b.key, "each specialisation has its own cache entry");
    let ir = blend::KERNEL.nvvm_ir_with(&f64_spec).unwrap();
    assert!(
        ir.contains("define internal double @cudajit_dev_lerp_f64(double"),
        "{ir}"
    );

    let window = Specialization {
        types: vec![],
        structs: Vec::new(),
        consts: vec![(
            "W".into(),
            Literal::Int {
                bits: 3,
                ty: Scalar::Usize,
            },
        )],
    };
    let compiled = window_sums::KERNEL
        .compile_for_arch_with(Arch::SM_90, &window)
        .unwrap();
    assert_eq!(compiled.entry, "window_sums_3");
    let comptime = Specialization {
        types: vec![],
        structs: Vec::new(),
        consts: vec![(
            "rounds".into(),
            Literal::Int {
                bits: 7,
                ty: Scalar::U32,
            },
        )],
    };
    let ir = collatz_steps::KERNEL.nvvm_ir_with(&comptime).unwrap();
    // `rounds` is a constant, not a kernel parameter.
    assert!(
        ir.contains("define void @collatz_steps_7(i64* noalias %arg0.data.ptr"),
        "{ir}"
    );
    collatz_steps::KERNEL
        .compile_for_arch_with(Arch::SM_90, &comptime)
        .unwrap();
}

#[test]
fn a_missing_generic_value_is_an_error_not_a_panic() {
    let error = blend::KERNEL.nvvm_ir().unwrap_err().to_string();
    assert!(error.contains("generic parameter `T`"), "{error}");
}

#[test]
fn math_functions_link_libdevice_lazily() {
    let Some(_tools) = common::toolchain_or_skip() else {
        return;
    };
    let ir = math_ops::KERNEL.nvvm_ir().unwrap();
    assert!(ir.contains("declare float @__nv_sqrtf(float)"), "{ir}");
    assert!(ir.contains("@llvm.ctpop.i32"), "{ir}");
    let compiled = math_ops::KERNEL.compile_for_arch(Arch::SM_90).unwrap();
    assert!(cubin::inspect(&compiled.cubin)
        .unwrap()
        .has_function("math_ops"));
}

#[test]
fn vector_accesses_and_register_arrays_compile() {
    let Some(_tools) = common::toolchain_or_skip() else {
        return;
    };
    let ir = saxpy_vec4::KERNEL.nvvm_ir().unwrap();
    assert!(ir.contains("load <4 x float>, <4 x float>*"), "{ir}");
    assert!(ir.contains("store <4 x float>"), "{ir}");
    let spec = Specialization {
        types: vec![],
        structs: Vec::new(),
        consts: vec![(
            "R".into(),
            Literal::Int {
                bits: 4,
                ty: Scalar::Usize,
            },
        )],
    };
    let ir = row_times_columns::KERNEL.nvvm_ir_with(&spec).unwrap();
    assert!(ir.contains("alloca [4 x double]"), "{ir}");
    row_times_columns::KERNEL
        .compile_for_arch_with(Arch::SM_90, &spec)
        .unwrap();
}

#[test]
fn bounds_checks_assertions_and_printing_compile() {
    use cudajit::codegen::compile::{nvvm_ir_with, CompileOptions};
    let Some(_tools) = common::toolchain_or_skip() else {
        return;
    };
    let none = Specialization::default();
    let checked = CompileOptions {
        bounds_checks: true,
        debug_assertions: true,
        ..CompileOptions::default()
    };
    let ir = nvvm_ir_with(off_by_one::KERNEL.captured(), &none, &checked).unwrap();
    assert!(
        ir.contains("index out of bounds: the len is %llu but the index is %llu"),
        "{ir}"
    );
    assert!(ir.contains("@__assertfail"), "{ir}");
    let unchecked = nvvm_ir_with(
        off_by_one::KERNEL.captured(),
        &none,
        &CompileOptions::default(),
    )
    .unwrap();
    assert!(
        !unchecked.contains("@__assertfail"),
        "no checks unless asked: {unchecked}"
    );
    let ir = nvvm_ir_with(debug_print::KERNEL.captured(), &none, &checked).unwrap();
    assert!(
        ir.contains("value %llu = %d half %.2f positive %s hex %x"),
        "{ir}"
    );
    for kernel in [
        &off_by_one::KERNEL,
        &checked_division::KERNEL,
        &debug_print::KERNEL,
    ] {
        let compiled = cudajit::codegen::compile::compile_kernel(
            kernel.captured(),
            &none,
            Arch::SM_90,
            &checked,
        )
        .unwrap_or_else(|e| panic!("{}: {e}", kernel.name()));
        assert!(cubin::inspect(&compiled.cubin)
            .unwrap()
            .has_function(kernel.name()));
    }
}

/// `&[T]` parameters are `noalias readonly` in the NVVM IR, so the NVPTX backend reads them
/// through the read-only data cache (`ld.global.nc`, `LDG.E.CONSTANT` in SASS), as nvcc does
/// for `const T* __restrict__`; `&mut [T]` loads stay plain `ld.global`.
#[test]
fn read_only_slices_load_through_the_non_coherent_cache() {
    use cudajit::codegen::compile::{linked_ptx, CompileOptions};
    if common::toolchain_or_skip().is_none() {
        return;
    }
    let ptx = linked_ptx(
        saxpy::KERNEL.captured(),
        &Specialization::default(),
        Arch::SM_90,
        &CompileOptions::default(),
    )
    .expect("linking saxpy");
    // `x` (read-only) through the non-coherent path, `y` (read and written) not.
    assert!(ptx.contains("ld.global.nc.f32"), "{ptx}");
    assert!(ptx.contains("ld.global.f32"), "{ptx}");
}
