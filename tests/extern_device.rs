//! `#[extern_device]` on the CPU: a CUDA C++ device library built with nvcc, a Rust kernel
//! calling it compiled to a cubin, the calls inlined by LTO, the library in the cache key,
//! and a missing symbol named with its function and library.

mod common;

use std::path::PathBuf;
use std::sync::OnceLock;

use cudajit::codegen::compile::{cache_key, linked_ptx, CompileError, CompileOptions};
use cudajit::codegen::cubin;
use cudajit::codegen::toolchain::SearchEnv;
use cudajit::core::CapturedFunction;
use cudajit::prelude::*;
use cudajit::{Arch, DeviceLibrary, LibraryKind, Specialization};
use cudajit_nccl::device_code::Nvcc;

const LIBRARY_PATH: &str = concat!(
    env!("CARGO_TARGET_TMPDIR"),
    "/extern_device/fast_math.fatbin"
);

static FAST_MATH: DeviceLibrary =
    DeviceLibrary::file("fast_math", LibraryKind::Fatbin, LIBRARY_PATH);

#[extern_device(library = FAST_MATH)]
extern "C" {
    #[link_name = "fast_math_sigmoid"]
    fn sigmoid(x: f32) -> f32;
    #[link_name = "fast_math_in_range"]
    fn in_range(x: f32, lo: f32, hi: f32) -> bool;
    fn fast_math_mad(a: i32, b: i32, c: i32) -> i32;
    #[link_name = "fast_math_missing"]
    fn missing(x: f32) -> f32;
    #[link_name = "fast_math_affine"]
    fn affine(a: Affine, x: f32) -> f32;
}

/// `fast_math.cu`'s `struct Affine`.
#[derive(Clone, Copy, DeviceCopy)]
#[repr(C)]
struct Affine {
    scale: f32,
    bias: f32,
}

/// A struct by value to an external function.
#[kernel]
fn scaled(a: Affine, y: &mut [f32]) {
    let i = global_index();
    if i < y.len() {
        y[i] = affine(a, y[i]);
    }
}

#[kernel]
fn activate(x: &[f32], y: &mut [f32], tag: &mut [i32]) {
    let i = global_index();
    if i < y.len() {
        y[i] = sigmoid(x[i]);
        tag[i] = if in_range(x[i], -1.0, 1.0) {
            fast_math_mad(i as i32, 2, 1)
        } else {
            0
        };
    }
}

#[kernel]
fn calls_missing(y: &mut [f32]) {
    let i = global_index();
    if i < y.len() {
        y[i] = missing(y[i]);
    }
}

/// Builds `examples/extern_device/fast_math.cu` once with nvcc; `None` after printing why
/// the test is skipped (a failure under `CUDAJIT_REQUIRE_TOOLCHAIN=1`).
fn library_or_skip() -> Option<&'static PathBuf> {
    static BUILT: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    common::toolchain_or_skip()?;
    let built = BUILT.get_or_init(|| {
        let nvcc = Nvcc::locate(&SearchEnv::from_process()).map_err(|e| e.to_string())?;
        let output = PathBuf::from(LIBRARY_PATH);
        std::fs::create_dir_all(output.parent().unwrap()).map_err(|e| e.to_string())?;
        let source = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/examples/extern_device/fast_math.cu"
        );
        let status = nvcc
            .command(&nvcc.cuda_include)
            .args(["-dlto", "-rdc=true", "-fatbin", "-arch=sm_90", "-o"])
            .arg(&output)
            .arg(source)
            .status()
            .map_err(|e| format!("running {}: {e}", nvcc.path.display()))?;
        if !status.success() {
            return Err(format!("nvcc failed ({status}) on {source}"));
        }
        Ok(output)
    });
    match built {
        Ok(path) => Some(path),
        Err(error) if std::env::var("CUDAJIT_REQUIRE_TOOLCHAIN").as_deref() == Ok("1") => {
            panic!("nvcc is required (CUDAJIT_REQUIRE_TOOLCHAIN=1): {error}")
        }
        Err(error) => {
            eprintln!("skipped: cannot build the device library: {error}");
            None
        }
    }
}

#[test]
fn nvvm_ir_declares_the_extern_functions() {
    let ir = activate::KERNEL.nvvm_ir().expect("lowering activate");
    assert!(
        ir.contains("declare float @fast_math_sigmoid(float)"),
        "{ir}"
    );
    assert!(
        ir.contains("declare i8 @fast_math_in_range(float, float, float)"),
        "{ir}"
    );
    assert!(
        ir.contains("declare i32 @fast_math_mad(i32, i32, i32)"),
        "{ir}"
    );
    assert!(ir.contains("call float @fast_math_sigmoid("), "{ir}");
}

#[test]
fn kernel_links_the_library_into_a_cubin() {
    let Some(_) = library_or_skip() else {
        return;
    };
    let compiled = activate::KERNEL
        .compile_for_arch(Arch::SM_90)
        .expect("compiling activate with fast_math");
    let info = cubin::inspect(&compiled.cubin).expect("a cubin");
    assert!(info.has_function("activate"), "{:?}", info.functions);
}

#[test]
fn calls_into_the_library_are_inlined() {
    let Some(_) = library_or_skip() else {
        return;
    };
    let ptx = linked_ptx(
        activate::KERNEL.captured(),
        &Specialization::default(),
        Arch::SM_90,
        &CompileOptions::default(),
    )
    .expect("linking activate to PTX");
    assert!(ptx.contains(".entry activate"), "{ptx}");
    assert!(!ptx.contains("fast_math"), "a call was not inlined:\n{ptx}");
    assert!(!ptx.contains("call"), "a call remains:\n{ptx}");
    // `__expf` of fast_math_sigmoid, inlined.
    assert!(ptx.contains("ex2.approx"), "{ptx}");
}

#[test]
fn structs_pass_by_value_and_inline() {
    let ir = scaled::KERNEL.nvvm_ir().expect("lowering scaled");
    assert!(
        ir.contains("declare float @fast_math_affine(%struct.Affine, float)"),
        "{ir}"
    );
    let Some(_) = library_or_skip() else {
        return;
    };
    let ptx = linked_ptx(
        scaled::KERNEL.captured(),
        &Specialization::default(),
        Arch::SM_90,
        &CompileOptions::default(),
    )
    .expect("linking scaled");
    assert!(!ptx.contains("fast_math_affine"), "not inlined:\n{ptx}");
    // scale * y + bias, with the struct's fields read from the kernel parameter.
    assert!(
        ptx.contains("fma.rn.f32") || ptx.contains("mul.f32"),
        "{ptx}"
    );
}

#[test]
fn missing_symbol_names_function_library_and_path() {
    let Some(_) = library_or_skip() else {
        return;
    };
    let error = match calls_missing::KERNEL.compile_for_arch(Arch::SM_90) {
        Ok(_) => panic!("a kernel calling an undefined symbol linked"),
        Err(cudajit::Error::Compile(error)) => error,
        Err(other) => panic!("unexpected error: {other}"),
    };
    assert!(
        matches!(error, CompileError::MissingExtern { .. }),
        "{error:?}"
    );
    let text = error.to_string();
    for needle in [
        "`missing`",
        "`fast_math_missing`",
        "`fast_math`",
        LIBRARY_PATH,
    ] {
        assert!(text.contains(needle), "{needle} not in: {text}");
    }
}

static LIBRARY_A: DeviceLibrary =
    DeviceLibrary::embedded("fast_math", LibraryKind::Fatbin, b"version A");
static LIBRARY_B: DeviceLibrary =
    DeviceLibrary::embedded("fast_math", LibraryKind::Fatbin, b"version B");

fn library_a() -> &'static DeviceLibrary {
    &LIBRARY_A
}
fn library_b() -> &'static DeviceLibrary {
    &LIBRARY_B
}

use cudajit::__private::DeviceFunction;
static SIGMOID_A: CapturedFunction = CapturedFunction {
    library: Some(library_a),
    ..<sigmoid as DeviceFunction>::CAPTURED
};
static SIGMOID_B: CapturedFunction = CapturedFunction {
    library: Some(library_b),
    ..<sigmoid as DeviceFunction>::CAPTURED
};
fn callees_a() -> &'static [&'static CapturedFunction] {
    static CALLEES: [&CapturedFunction; 1] = [&SIGMOID_A];
    &CALLEES
}
fn callees_b() -> &'static [&'static CapturedFunction] {
    static CALLEES: [&CapturedFunction; 1] = [&SIGMOID_B];
    &CALLEES
}

#[test]
fn a_changed_library_changes_the_cache_key() {
    let Some(toolchain) = common::toolchain_or_skip() else {
        return;
    };
    let kernel = *activate::KERNEL.captured();
    let with_a: &'static CapturedFunction = Box::leak(Box::new(CapturedFunction {
        callees: callees_a,
        ..kernel
    }));
    let with_b: &'static CapturedFunction = Box::leak(Box::new(CapturedFunction {
        callees: callees_b,
        ..kernel
    }));
    let key = |captured| {
        cache_key(
            captured,
            &Specialization::default(),
            Arch::SM_90,
            &CompileOptions::default(),
            toolchain,
        )
        .key
    };
    assert_eq!(key(with_a), key(with_a));
    assert_ne!(key(with_a), key(with_b));
}

#[test]
fn extern_functions_panic_on_the_host() {
    let result = std::panic::catch_unwind(|| sigmoid(1.0));
    let message = result.expect_err("a host call must panic");
    let text = message
        .downcast_ref::<String>()
        .cloned()
        .unwrap_or_default();
    assert!(
        text.contains("`sigmoid()` is an `#[extern_device]` function"),
        "{text}"
    );
}

#[test]
fn the_simulator_reports_extern_calls_without_a_host() {
    let stream = cudajit::Stream::simulator();
    let x = stream.clone_htod(&[0.5f32; 4]).expect("upload");
    let mut y = stream.clone_htod(&[0f32; 4]).expect("upload");
    let mut tag = stream.clone_htod(&[0i32; 4]).expect("upload");
    let result = activate::launch(&stream, LaunchConfig::for_elements(4), &x, &mut y, &mut tag);
    match result {
        Err(cudajit::Error::Simulator(error)) => {
            let text = error.to_string();
            assert!(
                text.contains("`sigmoid` (`fast_math_sigmoid`) has no host implementation"),
                "{text}"
            );
        }
        Err(other) => panic!("unexpected error: {other}"),
        Ok(()) => panic!("the simulator ran an extern call without a host"),
    }
}

/// Host implementations of `fast_math.cu`'s functions, for the simulator.
#[derive(Debug)]
struct FastMathOnHost;

impl cudajit::simulator::SimExterns for FastMathOnHost {
    fn resolve(&self, symbol: &str) -> Option<u32> {
        ["fast_math_sigmoid", "fast_math_in_range", "fast_math_mad"]
            .iter()
            .position(|s| *s == symbol)
            .map(|i| i as u32)
    }

    fn call(
        &self,
        function: u32,
        call: &mut cudajit::simulator::ExternCall<'_, '_, '_>,
    ) -> Result<cudajit::simulator::ExternOutcome, String> {
        let f = |i: usize| f32::from_bits(call.arg(i) as u32);
        let i = |k: usize| call.arg(k) as u32 as i32;
        let bits = match function {
            0 => u64::from((1.0 / (1.0 + (-f(0)).exp())).to_bits()),
            1 => u64::from(f(0) >= f(1) && f(0) <= f(2)),
            _ => (i(0).wrapping_mul(i(1)).wrapping_add(i(2))) as u32 as u64,
        };
        Ok(cudajit::simulator::ExternOutcome::Return(bits))
    }
}

#[test]
fn the_simulator_runs_extern_calls_on_a_host() {
    let stream = cudajit::Stream::simulator_with(cudajit::SimOptions {
        externs: Some(std::sync::Arc::new(FastMathOnHost)),
        ..cudajit::SimOptions::default()
    });
    let x_host = [0.5f32, -2.0, 0.0, 3.0];
    let x = stream.clone_htod(&x_host).expect("upload");
    let mut y = stream.clone_htod(&[0f32; 4]).expect("upload");
    let mut tag = stream.clone_htod(&[0i32; 4]).expect("upload");
    activate::launch(&stream, LaunchConfig::for_elements(4), &x, &mut y, &mut tag)
        .expect("the host runs the extern functions");
    let y = stream.clone_dtoh(&y).expect("download");
    for (got, x) in y.iter().zip(x_host) {
        assert_eq!(*got, 1.0 / (1.0 + (-x).exp()));
    }
    assert_eq!(stream.clone_dtoh(&tag).expect("download"), vec![1, 0, 5, 0]);
    // A symbol the host does not resolve is reported with the thread.
    let mut y = stream.clone_htod(&[0f32; 4]).expect("upload");
    let text = calls_missing::launch(&stream, LaunchConfig::for_elements(4), &mut y)
        .unwrap_err()
        .to_string();
    assert!(
        text.contains("`missing` (`fast_math_missing`) has no host implementation"),
        "{text}"
    );
}
