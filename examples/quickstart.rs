//! SAXPY over 16 Mi elements: one `#[kernel]`, a launch, a check on the CPU. Without a GPU
//! (or with `CUDAJIT_BACKEND=sim`) the same program runs on the CPU simulator, over 1 Mi
//! elements.
//!
//! `cargo run --release --example quickstart`

use std::time::Instant;

use cudajit::prelude::*;
use cudajit::{Backend, Stream};

/// `y = a * x + y`, one element per thread.
#[kernel]
fn saxpy(a: f32, x: &[f32], y: &mut [f32]) {
    let i = global_index();
    if i < y.len() {
        y[i] += a * x[i];
    }
}

const N: usize = 16 << 20;
/// Elements on the CPU simulator, which runs some 10^7 threads per second.
const N_SIMULATED: usize = 1 << 20;

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

/// Runs SAXPY; `Ok(false)` if the result is wrong.
fn run() -> Result<bool, cudajit::Error> {
    // cudajit's log on stderr, at the level `CUDAJIT_LOG` names (`debug`: every compile and
    // cache miss; `trace`: every simulated launch). A library installs no logger itself.
    cudajit::log::init()?;
    // The GPU if there is one, else the CPU simulator (`CUDAJIT_BACKEND=gpu|sim` decides).
    let stream = Stream::new()?;
    let n = match (stream.backend(), stream.cuda()) {
        (Backend::Gpu, Some(cuda)) => {
            let context = cuda.context();
            println!(
                "GPU: {} (sm_{}{})",
                context.name().unwrap_or_default(),
                context.compute_capability().map(|c| c.0).unwrap_or(0),
                context.compute_capability().map(|c| c.1).unwrap_or(0)
            );
            N
        }
        _ => {
            match stream.no_gpu_reason() {
                Some(reason) => println!("no GPU found, running on the CPU simulator ({reason})"),
                None => println!("running on the CPU simulator (CUDAJIT_BACKEND=sim)"),
            }
            N_SIMULATED
        }
    };

    let a = 2.5f32;
    let x_host: Vec<f32> = (0..n).map(|i| (i % 1000) as f32 * 0.5).collect();
    let y_host: Vec<f32> = (0..n).map(|i| (i % 777) as f32 - 100.0).collect();
    let x = stream.clone_htod(&x_host)?;
    let mut y = stream.clone_htod(&y_host)?;
    stream.synchronize()?;

    let config = LaunchConfig::for_elements(n);
    let started = Instant::now();
    saxpy::launch(&stream, config, a, &x, &mut y)?;
    stream.synchronize()?;
    let first = started.elapsed();

    let started = Instant::now();
    saxpy::launch(&stream, config, a, &x, &mut y)?;
    stream.synchronize()?;
    let cached = started.elapsed();

    let result = stream.clone_dtoh(&y)?;
    let mismatches = (0..n)
        .filter(|&i| {
            let expected = a * x_host[i] + (a * x_host[i] + y_host[i]);
            (result[i] - expected).abs() > 1e-3 * expected.abs().max(1.0)
        })
        .count();
    println!("saxpy over {n} elements (ran twice): {mismatches} mismatches against the CPU");

    match stream.cuda() {
        Some(cuda) => {
            let loaded = saxpy::compile(cuda.context())?;
            let report = &loaded.compiled().report;
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
        }
        None => {
            let threads_per_second = stream
                .sim()
                .and_then(|s| s.last_report())
                .map(|r| r.threads_per_second())
                .unwrap_or(0.0);
            println!(
                "first launch (lowers the kernel): {:.1} ms; second: {:.1} ms, {:.1} M simulated threads/s",
                ms(first),
                ms(cached),
                threads_per_second / 1e6
            );
        }
    }
    Ok(mismatches == 0)
}

fn ms(duration: std::time::Duration) -> f64 {
    duration.as_secs_f64() * 1e3
}
