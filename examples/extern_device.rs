//! Calling your own CUDA C++ device functions from a Rust kernel with `#[extern_device]`.
//!
//! 1. Build the device library (LTO-IR in a fatbin, so the calls inline into the kernel):
//!
//!    ```text
//!    cd examples/extern_device
//!    nvcc -dlto -rdc=true -fatbin -arch=sm_90 -o fast_math.fatbin fast_math.cu
//!    ```
//!
//!    (`-arch` names the GPU that runs it: `sm_80` for an A100, `sm_90` for an H100/H200.)
//! 2. `cargo run --release --example extern_device` from the repository root. Without a
//!    GPU the example says so and stops: external device functions exist only in device
//!    code, so the CPU simulator cannot run them.

use cudajit::codegen::device_library::LibraryParts;
use cudajit::prelude::*;
use cudajit::{Backend, DeviceLibrary, LibraryKind, Stream};

/// The library `fast_math.cu` compiles to, read the first time a kernel calling into it is
/// compiled. `DeviceLibrary::embedded(.., include_bytes!(..))` would put it in the binary.
static FAST_MATH: DeviceLibrary = DeviceLibrary::file(
    "fast_math",
    LibraryKind::Fatbin,
    "examples/extern_device/fast_math.fatbin",
);

/// `fast_math.cu`'s `struct Affine`, passed by value.
#[derive(Clone, Copy, Debug, DeviceCopy)]
#[repr(C)]
struct Affine {
    scale: f32,
    bias: f32,
}

#[extern_device(library = FAST_MATH)]
extern "C" {
    /// `1 / (1 + exp(-x))`, with CUDA's fast `__expf`.
    #[link_name = "fast_math_sigmoid"]
    fn sigmoid(x: f32) -> f32;
    /// Whether `lo <= x <= hi`.
    #[link_name = "fast_math_in_range"]
    fn in_range(x: f32, lo: f32, hi: f32) -> bool;
    /// `a * b + c`, wrapping; bound to its own name.
    fn fast_math_mad(a: i32, b: i32, c: i32) -> i32;
    /// `a.scale * x + a.bias`: a struct by value.
    #[link_name = "fast_math_affine"]
    fn affine(a: Affine, x: f32) -> f32;
}

/// `y = sigmoid(a.scale * x + a.bias)`; `tag = 2i + 1` where `x` is in `[-1, 1]`, else 0.
#[kernel]
fn activate(a: Affine, x: &[f32], y: &mut [f32], tag: &mut [i32]) {
    let i = global_index();
    if i < y.len() {
        y[i] = sigmoid(affine(a, x[i]));
        tag[i] = if in_range(x[i], -1.0, 1.0) {
            fast_math_mad(i as i32, 2, 1)
        } else {
            0
        };
    }
}

const N: usize = 1 << 20;

fn main() {
    match run() {
        Ok(true) => {}
        Ok(false) => std::process::exit(1),
        Err(error) => {
            eprintln!("extern_device failed: {error}");
            std::process::exit(1);
        }
    }
}

/// Runs the kernel on the GPU; `Ok(false)` if a result is wrong.
fn run() -> Result<bool, cudajit::Error> {
    let stream = Stream::new()?;
    if stream.backend() != Backend::Gpu {
        let reason = stream
            .no_gpu_reason()
            .map(|r| r.to_string())
            .unwrap_or_else(|| "CUDAJIT_BACKEND=sim".to_owned());
        println!(
            "skipped: this example needs a GPU ({reason}); `#[extern_device]` functions only \
             exist in device code, so the CPU simulator cannot run them"
        );
        return Ok(true);
    }
    if let Err(error) = FAST_MATH.bytes() {
        eprintln!("{error}\nbuild it first (see the top of examples/extern_device.rs)");
        return Ok(false);
    }

    let x_host: Vec<f32> = (0..N).map(|i| (i % 4001) as f32 * 0.001 - 2.0).collect();
    let x = stream.clone_htod(&x_host)?;
    let mut y = stream.clone_htod(&vec![0f32; N])?;
    let mut tag = stream.clone_htod(&vec![-1i32; N])?;
    let a = Affine {
        scale: 0.5,
        bias: 0.25,
    };
    activate::launch(
        &stream,
        LaunchConfig::for_elements(N),
        a,
        &x,
        &mut y,
        &mut tag,
    )?;
    let y = stream.clone_dtoh(&y)?;
    let tag = stream.clone_dtoh(&tag)?;

    let mut mismatches = 0;
    for (i, &xi) in x_host.iter().enumerate() {
        let expected_y = 1.0 / (1.0 + (-(a.scale * xi + a.bias)).exp());
        let expected_tag = if (-1.0..=1.0).contains(&xi) {
            (i as i32).wrapping_mul(2).wrapping_add(1)
        } else {
            0
        };
        if (y[i] - expected_y).abs() > 1e-5 || tag[i] != expected_tag {
            mismatches += 1;
        }
    }
    println!(
        "activate over {N} elements, calling fast_math.cu: {mismatches} mismatches against the CPU"
    );
    Ok(mismatches == 0)
}
