//! A `#[kernel]` on memory that plain cudarc code owns: the context, the stream and the
//! buffers come from cudarc (`CudaContext::new`, `alloc_zeros`, `clone_htod`), the kernel's
//! launcher takes them as they are, and the result is read back with cudarc's
//! `clone_dtoh`. cudajit re-exports these types (`cudajit::CudaStream`, `cudajit::CudaSlice`)
//! from the same cudarc, so there is nothing to convert; see docs/cudarc.md.
//!
//! cudarc's memory lives on a GPU, so this example needs one: without a GPU it says so and
//! exits successfully without running anything (`examples/quickstart.rs` shows the portable
//! `cudajit::Stream`, which falls back to the CPU simulator).
//!
//! `cargo run --release --example cudarc_interop`

use std::process::ExitCode;

use cudajit::prelude::*;
use cudarc::driver::{CudaContext, CudaSlice, DriverError};

/// `y[i] = a * x[i] + y[i]`, one element per thread.
#[kernel]
fn axpy(a: f32, x: &[f32], y: &mut [f32]) {
    let i = global_index();
    if i < y.len() {
        y[i] += a * x[i];
    }
}

const N: usize = 1 << 20;

fn main() -> ExitCode {
    // cudarc would panic on a machine without the driver library; cudajit's probe says why
    // there is no GPU instead.
    if let Err(reason) = cudajit::gpu_count() {
        println!("SKIPPED: cudarc_interop needs a GPU (cudarc's memory lives on one): {reason}");
        return ExitCode::SUCCESS;
    }
    match run() {
        Ok(0) => ExitCode::SUCCESS,
        Ok(mismatches) => {
            eprintln!("cudarc_interop: {mismatches} elements differ from the CPU's result");
            ExitCode::FAILURE
        }
        Err(error) => {
            eprintln!("cudarc_interop failed: {error}");
            ExitCode::FAILURE
        }
    }
}

/// Runs the kernel on cudarc's buffers; the number of elements that differ from the CPU.
fn run() -> Result<usize, Box<dyn std::error::Error>> {
    // Code that already uses cudarc has these; nothing here is cudajit's.
    let context = CudaContext::new(0)?;
    let stream = context.new_stream()?;
    let x_host: Vec<f32> = (0..N).map(|i| (i % 1000) as f32 * 0.25).collect();
    let y_host: Vec<f32> = (0..N).map(|i| (i % 333) as f32 - 50.0).collect();
    let x: CudaSlice<f32> = stream.clone_htod(&x_host)?;
    let mut y: CudaSlice<f32> = stream.clone_htod(&y_host)?;
    let mut zeros: CudaSlice<f32> = stream.alloc_zeros(N)?;

    // The launcher takes cudarc's stream and slices directly.
    let a = 3.0f32;
    axpy::launch(&stream, LaunchConfig::for_elements(N), a, &x, &mut y)?;
    // And views of them: the second half of `zeros` gets `a * x` of the first half.
    {
        let x_front = x.slice(0..N / 2);
        let mut zeros_back = zeros.slice_mut(N / 2..);
        axpy::launch(
            &stream,
            LaunchConfig::for_elements(N / 2),
            a,
            &x_front,
            &mut zeros_back,
        )?;
    }

    // Read back with cudarc (`clone_dtoh` waits for the stream).
    let y_out: Vec<f32> = stream.clone_dtoh(&y)?;
    let zeros_out: Vec<f32> = stream.clone_dtoh(&zeros)?;
    let close = |got: f32, want: f32| (got - want).abs() <= 1e-5 * want.abs().max(1.0);
    let mismatches = (0..N)
        .filter(|&i| !close(y_out[i], a * x_host[i] + y_host[i]))
        .count()
        + (0..N)
            .filter(|&i| {
                let want = if i < N / 2 {
                    0.0
                } else {
                    a * x_host[i - N / 2]
                };
                !close(zeros_out[i], want)
            })
            .count();
    println!(
        "axpy on cudarc buffers ({} elements, {}): {mismatches} mismatches against the CPU",
        N,
        context
            .name()
            .unwrap_or_else(|e: DriverError| e.to_string())
    );
    Ok(mismatches)
}
