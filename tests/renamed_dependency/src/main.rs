//! Kernels, device functions, an external declaration and a `DeviceCopy` type written
//! against cudajit renamed to `gpu`, and reached through a re-export; run on the CPU
//! simulator, and with a GPU also on memory from this crate's own cudarc dependency.
//! Warnings are errors here: clean kernels give none.

#![deny(warnings)]

use gpu::prelude::*;
use gpu::{DeviceLibrary, LibraryKind};

/// cudajit re-exported by another module, as a crate built on cudajit would.
mod engine {
    pub use gpu as cudajit;
}

#[derive(Clone, Copy, DeviceCopy)]
#[cudajit(crate = gpu)]
#[repr(C)]
struct Affine {
    scale: f32,
    offset: f32,
}

#[device(crate = gpu)]
fn apply(a: Affine, x: f32) -> f32 {
    a.scale * x + a.offset
}

#[device(crate = crate::engine::cudajit)]
fn twice(x: f32) -> f32 {
    2.0 * x
}

static NEVER_LINKED: DeviceLibrary =
    DeviceLibrary::embedded("never_linked", LibraryKind::Fatbin, b"");

// Declared only: no kernel launched here calls it.
#[extern_device(library = NEVER_LINKED, crate = gpu)]
extern "C" {
    fn external_sigmoid(x: f32) -> f32;
}

#[kernel(crate = gpu)]
fn affine(a: Affine, x: &[f32], y: &mut [f32]) {
    let i = global_index();
    if i < y.len() {
        y[i] = apply(a, x[i]);
    }
}

#[kernel(crate = crate::engine::cudajit)]
fn doubled(x: &[f32], y: &mut [f32]) {
    let i = global_index();
    if i < y.len() {
        y[i] = twice(x[i]);
    }
}

fn main() -> Result<(), gpu::Error> {
    if std::env::args().any(|arg| arg == "--time-first-compile") {
        return time_first_compile();
    }
    let stream = gpu::Stream::simulator();
    let n = 64;
    let host: Vec<f32> = (0..n).map(|i| i as f32).collect();
    let x = stream.clone_htod(&host)?;
    let mut y = stream.alloc_zeros::<f32>(n)?;

    let a = Affine {
        scale: 3.0,
        offset: 1.0,
    };
    affine::launch(&stream, LaunchConfig::for_elements(n), a, &x, &mut y)?;
    let out = stream.clone_dtoh(&y)?;
    assert!(out.iter().zip(&host).all(|(y, x)| *y == 3.0 * x + 1.0));

    doubled::launch(&stream, LaunchConfig::for_elements(n), &x, &mut y)?;
    let out = stream.clone_dtoh(&y)?;
    assert!(out.iter().zip(&host).all(|(y, x)| *y == 2.0 * x));

    if gpu::gpu_count().is_ok() {
        on_cudarc_memory()?;
    }

    // The host stub of an external function panics; it is only named here.
    let _ = (external_sigmoid as fn(f32) -> f32, &NEVER_LINKED);
    println!("renamed dependency: ok");
    Ok(())
}

/// A kernel on memory from this crate's own cudarc dependency (a GPU is needed: cudarc's
/// memory lives on one). That it compiles at all is the check that matters: the launcher
/// takes the user's `cudarc::driver::CudaSlice`, which is cudajit's.
fn on_cudarc_memory() -> Result<(), gpu::Error> {
    let context = cudarc::driver::CudaContext::new(0)?;
    let stream: std::sync::Arc<cudarc::driver::CudaStream> = context.default_stream();
    let host: Vec<f32> = (0..64).map(|i| i as f32).collect();
    let x: cudarc::driver::CudaSlice<f32> = stream.clone_htod(&host)?;
    let mut y: cudarc::driver::CudaSlice<f32> = stream.alloc_zeros(host.len())?;
    doubled::launch(&stream, LaunchConfig::for_elements(host.len()), &x, &mut y)?;
    let out = stream.clone_dtoh(&y)?;
    assert!(out.iter().zip(&host).all(|(y, x)| *y == 2.0 * x));
    println!("renamed dependency: kernel on its own cudarc's memory ok");
    Ok(())
}

/// A dependant's first compile of its first kernel, for sm_90 (no GPU needed): with an
/// empty `CUDAJIT_CACHE_DIR` this includes hashing the compiler libraries once, in this
/// crate's profile (docs/performance.md, "A dependant's first kernel").
fn time_first_compile() -> Result<(), gpu::Error> {
    let start = std::time::Instant::now();
    let compiled = affine::KERNEL.compile_for_arch(gpu::Arch::SM_90)?;
    let total = start.elapsed();
    let ms = |d: std::time::Duration| d.as_secs_f64() * 1e3;
    let report = &compiled.report;
    println!(
        "first kernel compile ({}): {:.1} ms (key and lookup {:.1}, lower {:.1}, libNVVM {:.1}, nvJitLink {:.1})",
        if cfg!(debug_assertions) { "debug" } else { "release" },
        ms(total),
        ms(report.lookup),
        ms(report.lower),
        ms(report.nvvm),
        ms(report.link),
    );
    Ok(())
}
