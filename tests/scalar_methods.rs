//! The scalar methods Rust defines exactly (`tests/common/methods.rs`: bit casts, the
//! integer and float methods) against Rust's own methods on the host: on the simulator
//! (always), on the GPU (skipped without one), and the PTX they compile to (checked
//! without a GPU: the instructions a CUDA C++ programmer would get, no local memory and
//! no calls).

mod common;

use common::methods::{self, bit_casts, float_methods, int_methods};
use cudajit::codegen::compile::{linked_ptx, CompileOptions};
use cudajit::core::Scalar;
use cudajit::{Arch, Specialization, Stream};

#[test]
fn methods_on_the_simulator_are_rusts() {
    methods::check_against_rust(methods::all_cases(&Stream::simulator()).unwrap());
}

#[test]
fn methods_on_the_gpu_are_rusts() {
    let Some(context) = common::gpu_or_skip() else {
        return;
    };
    let stream = Stream::from_cuda(context.default_stream());
    methods::check_against_rust(methods::all_cases(&stream).unwrap());
}

fn ptx_of(kernel: &'static cudajit::core::CapturedKernel, ty: Option<Scalar>) -> String {
    let spec = Specialization {
        types: ty.map(|t| ("T".to_owned(), t)).into_iter().collect(),
        structs: Vec::new(),
        consts: Vec::new(),
    };
    linked_ptx(kernel, &spec, Arch::SM_90, &CompileOptions::default()).expect("linking")
}

/// What any of these kernels must not contain: a local-memory frame or a call (libdevice's
/// functions inline).
fn assert_registers_only(ptx: &str) {
    assert!(!ptx.contains(".local"), "local memory:\n{ptx}");
    assert!(!ptx.contains("call."), "a call:\n{ptx}");
}

#[test]
fn integer_methods_compile_to_single_instructions() {
    if common::toolchain_or_skip().is_none() {
        return;
    }
    let ptx = ptx_of(int_methods::KERNEL.captured(), Some(Scalar::U32));
    assert_registers_only(&ptx);
    // `llvm.bitreverse` is `brev`, a rotation a funnel shift, `swap_bytes` a `prmt`.
    for instruction in ["brev.b32", "shf.l.wrap.b32", "shf.r.wrap.b32", "prmt.b32"] {
        assert!(ptx.contains(instruction), "no {instruction}:\n{ptx}");
    }
    let ptx = ptx_of(int_methods::KERNEL.captured(), Some(Scalar::I64));
    assert_registers_only(&ptx);
    assert!(ptx.contains("brev.b64"), "{ptx}");
    // Every other width compiles too.
    for ty in [Scalar::U8, Scalar::I16, Scalar::U64] {
        assert_registers_only(&ptx_of(int_methods::KERNEL.captured(), Some(ty)));
    }
}

#[test]
fn float_methods_and_bit_casts_stay_in_registers() {
    if common::toolchain_or_skip().is_none() {
        return;
    }
    for ty in [Scalar::F32, Scalar::F64] {
        let ptx = ptx_of(float_methods::KERNEL.captured(), Some(ty));
        assert_registers_only(&ptx);
        // `trunc` is one rounding conversion, not a libdevice call.
        let trunc = if ty == Scalar::F32 {
            "cvt.rzi.f32.f32"
        } else {
            "cvt.rzi.f64.f64"
        };
        assert!(ptx.contains(trunc), "no {trunc}:\n{ptx}");
    }
    let ptx = ptx_of(bit_casts::KERNEL.captured(), None);
    assert_registers_only(&ptx);
    // Bit casts are register moves: no conversion instruction between f32 and u32.
    assert!(!ptx.contains("cvt.rn.f32.u32"), "{ptx}");
    assert!(!ptx.contains("cvt.rzi.u32.f32"), "{ptx}");
}
