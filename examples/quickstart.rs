//! SAXPY over 16 Mi elements: one `#[kernel]`, a launch, a check on the CPU.
//!
//! `cargo run --release --example quickstart`

use std::time::Instant;

use cudajit::prelude::*;

/// `y = a * x + y`, one element per thread.
#[kernel]
fn saxpy(a: f32, x: &[f32], y: &mut [f32]) {
    let i = global_index();
    if i < y.len() {
        y[i] = a * x[i] + y[i];
    }
}

const N: usize = 16 << 20;

fn main() {
    match run() {
        Ok(true) => {}
        Ok(false) => std::process::exit(1),
        Err(error) => {
            eprintln!("quickstart failed: {error}");
            std::process::exit(1);
        }
    }
}

/// Runs SAXPY; `Ok(false)` if the GPU's result is wrong.
fn run() -> Result<bool, cudajit::Error> {
    let context = match cudajit::default_context() {
        Ok(context) => context,
        Err(cudajit::Error::NoGpu(reason)) => {
            println!("No GPU found ({reason}).");
            println!("cudajit needs an NVIDIA GPU to run kernels; a CPU simulator is planned.");
            println!("Everything up to the cubin still works here: `scripts/test.sh` tests it.");
            return Ok(true);
        }
        Err(other) => return Err(other),
    };
    let stream = context.default_stream();
    println!(
        "GPU: {} (sm_{}{})",
        context.name().unwrap_or_default(),
        context.compute_capability().map(|c| c.0).unwrap_or(0),
        context.compute_capability().map(|c| c.1).unwrap_or(0)
    );

    let a = 2.5f32;
    let x_host: Vec<f32> = (0..N).map(|i| (i % 1000) as f32 * 0.5).collect();
    let y_host: Vec<f32> = (0..N).map(|i| (i % 777) as f32 - 100.0).collect();
    let x = stream.clone_htod(&x_host)?;
    let mut y = stream.clone_htod(&y_host)?;
    stream.synchronize()?;

    let config = LaunchConfig::for_elements(N);
    let started = Instant::now();
    saxpy::launch(&stream, config, a, &x, &mut y)?;
    stream.synchronize()?;
    let first = started.elapsed();

    let loaded = saxpy::compile(&context)?;
    let report = &loaded.compiled().report;

    let started = Instant::now();
    saxpy::launch(&stream, config, a, &x, &mut y)?;
    stream.synchronize()?;
    let cached = started.elapsed();

    let result = stream.clone_dtoh(&y)?;
    let mismatches = (0..N)
        .filter(|&i| {
            let expected = a * x_host[i] + (a * x_host[i] + y_host[i]);
            (result[i] - expected).abs() > 1e-3 * expected.abs().max(1.0)
        })
        .count();

    println!("saxpy over {N} elements (ran twice): {mismatches} mismatches against the CPU");
    println!(
        "first launch: {:.2} ms (cubin from {:?}: lookup {:.2} ms, lower {:.2} ms, libNVVM {:.2} ms, nvJitLink {:.2} ms, load {:.2} ms)",
        ms(first),
        report.origin,
        ms(report.lookup),
        ms(report.lower),
        ms(report.nvvm),
        ms(report.link),
        ms(loaded.load_time())
    );
    println!("cached launch: {:.3} ms (launch and run)", ms(cached));
    match &report.cache_file {
        Some(path) => println!("cache entry: {}", path.display()),
        None => println!("disk cache: off"),
    }
    Ok(mismatches == 0)
}

fn ms(duration: std::time::Duration) -> f64 {
    duration.as_secs_f64() * 1e3
}
