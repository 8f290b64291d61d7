//! The CPU simulator's speed: SAXPY over 1 Mi elements and a 256 × 256 tiled SGEMM
//! (shared memory, two barriers per tile), reporting simulated threads per second.
//!
//! `cargo run --release --example sim_bench [workers]` (default: every core, or
//! `CUDAJIT_SIM_THREADS`). Results on the development machine: docs/performance.md.

use std::time::Instant;

use cudajit::prelude::*;
use cudajit::{SimOptions, SimStream};

#[kernel]
fn saxpy(a: f32, x: &[f32], y: &mut [f32]) {
    let i = global_index();
    if i < y.len() {
        y[i] += a * x[i];
    }
}

/// `c = a * b` for `n` × `n` row-major matrices, in `TILE` × `TILE` tiles staged through
/// shared memory.
#[kernel]
fn sgemm_tiled<const TILE: usize>(n: u32, a: &[f32], b: &[f32], c: &mut [f32]) {
    let tile_a = shared_array::<f32>(TILE * TILE);
    let tile_b = shared_array::<f32>(TILE * TILE);
    let t = TILE as u32;
    let tx = thread_idx().x;
    let ty = thread_idx().y;
    let row = block_idx().y * t + ty;
    let col = block_idx().x * t + tx;
    let mut acc = 0.0f32;
    let tiles = (n + t - 1) / t;
    for k in 0..tiles {
        let a_col = k * t + tx;
        let b_row = k * t + ty;
        tile_a[(ty * t + tx) as usize] = if row < n && a_col < n {
            a[(row * n + a_col) as usize]
        } else {
            0.0
        };
        tile_b[(ty * t + tx) as usize] = if b_row < n && col < n {
            b[(b_row * n + col) as usize]
        } else {
            0.0
        };
        sync_threads();
        for j in 0..TILE {
            acc += tile_a[ty as usize * TILE + j] * tile_b[j * TILE + tx as usize];
        }
        sync_threads();
    }
    if row < n && col < n {
        c[(row * n + col) as usize] = acc;
    }
}

fn main() -> Result<(), cudajit::Error> {
    let workers = std::env::args()
        .nth(1)
        .and_then(|w| w.parse().ok())
        .unwrap_or(0);
    let options = SimOptions {
        workers,
        ..SimOptions::default()
    };
    println!(
        "CPU simulator, {} host threads",
        options.resolved_workers()?
    );
    let stream = SimStream::with_options(options.clone());

    // SAXPY, 1 Mi elements.
    let n = 1 << 20;
    let x: Vec<f32> = (0..n).map(|i| (i % 1000) as f32 * 0.5).collect();
    let y0: Vec<f32> = (0..n).map(|i| (i % 777) as f32).collect();
    let dx = stream.clone_htod(&x)?;
    let mut dy = stream.clone_htod(&y0)?;
    // The first launch lowers the kernel; time the second.
    saxpy::launch(&stream, LaunchConfig::for_elements(n), 2.0, &dx, &mut dy)?;
    stream.memcpy_htod(&y0, &mut dy)?;
    let started = Instant::now();
    saxpy::launch(&stream, LaunchConfig::for_elements(n), 2.0, &dx, &mut dy)?;
    let wall = started.elapsed();
    let report = stream.last_report().unwrap_or_default();
    let y = stream.clone_dtoh(&dy)?;
    let wrong = (0..n).filter(|&i| y[i] != 2.0 * x[i] + y0[i]).count();
    println!(
        "saxpy  1 Mi elements: {:8.1} ms, {:6.1} M simulated threads/s, {wrong} wrong",
        wall.as_secs_f64() * 1e3,
        report.threads_per_second() / 1e6
    );

    // SGEMM, 256 x 256, 16 x 16 tiles.
    const TILE: usize = 16;
    let m = 256usize;
    let a: Vec<f32> = (0..m * m).map(|i| ((i * 7) % 13) as f32 - 6.0).collect();
    let b: Vec<f32> = (0..m * m).map(|i| ((i * 5) % 11) as f32 * 0.25).collect();
    let da = stream.clone_htod(&a)?;
    let db = stream.clone_htod(&b)?;
    let mut dc = stream.alloc_zeros::<f32>(m * m)?;
    let blocks = (m / TILE) as u32;
    let config = LaunchConfig::new((blocks, blocks), (TILE as u32, TILE as u32));
    sgemm_tiled::launch::<TILE>(&stream, config, m as u32, &da, &db, &mut dc)?;
    let started = Instant::now();
    sgemm_tiled::launch::<TILE>(&stream, config, m as u32, &da, &db, &mut dc)?;
    let wall = started.elapsed();
    let report = stream.last_report().unwrap_or_default();
    let c = stream.clone_dtoh(&dc)?;
    let mut wrong = 0;
    for r in 0..m {
        for col in 0..m {
            let mut expected = 0.0f32;
            for k in 0..m {
                expected += a[r * m + k] * b[k * m + col];
            }
            if c[r * m + col] != expected {
                wrong += 1;
            }
        }
    }
    println!(
        "sgemm  256 x 256:     {:8.1} ms, {:6.1} M simulated threads/s, {} barriers, {wrong} wrong",
        wall.as_secs_f64() * 1e3,
        report.threads_per_second() / 1e6,
        report.barriers
    );
    let flops = 2.0 * (m * m * m) as f64;
    println!(
        "       ({:.1} M multiply-adds/s of kernel work)",
        flops / 2.0 / wall.as_secs_f64() / 1e6
    );
    Ok(())
}
