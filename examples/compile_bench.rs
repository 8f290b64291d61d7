//! Cold compile and disk-cache hit of a small kernel, each in a fresh process.
//!
//! - cold: an empty cache directory (the toolchain digests already memoised, as after the
//!   first run on an installation): key, lower, libNVVM (including loading it), nvJitLink
//!   (including loading it), and, with a GPU, module load and the kernel running;
//! - warm: a fresh process with that cache: key, disk read and check, module load, kernel
//!   running; no compiler library is loaded;
//! - first ever: an empty cache directory without the memo (hashes the libraries once).
//!
//! Without a GPU it measures the compile part (`compile_for_arch(sm_90)`). Targets: cold
//! ≤ 100 ms from the launch call to the kernel running, warm ≤ 2 ms. Run:
//! `cargo run --release --example compile_bench [-- RUNS]` (default 7 runs).

use std::path::Path;
use std::process::Command;
use std::time::Instant;

use cudajit::prelude::*;
use cudajit::Arch;

#[kernel]
fn bench_saxpy(a: f32, x: &[f32], y: &mut [f32]) {
    let i = global_index();
    if i < y.len() {
        y[i] += a * x[i];
    }
}

type Result<T> = std::result::Result<T, Box<dyn std::error::Error>>;

const CHILD: &str = "CUDAJIT_COMPILE_BENCH_CHILD";
const COLUMNS: [&str; 6] = ["total", "lookup", "lower", "libnvvm", "nvjitlink", "load"];

fn main() -> Result<()> {
    if std::env::var_os(CHILD).is_some() {
        return child();
    }
    let runs: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(7);
    let gpu = cudajit::gpu_count().is_ok();
    println!(
        "compile_bench: {runs} fresh processes per case; {}",
        if gpu {
            "GPU present: first launch to kernel done"
        } else {
            "no GPU: compile for sm_90 only (load and run not measured)"
        }
    );
    let base = std::env::temp_dir().join(format!("cudajit-compile-bench-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&base);

    // The first run on an installation: nothing memoised.
    let first_dir = base.join("first");
    let first = run_child(&first_dir)?;
    let memo = first_dir.join(cudajit::codegen::cache::compiler_identity::MEMO_FILE);

    let mut cold = Vec::new();
    let mut warm = Vec::new();
    for run in 0..runs {
        let dir = base.join(format!("run{run}"));
        std::fs::create_dir_all(&dir)?;
        if memo.is_file() {
            std::fs::copy(&memo, dir.join(memo.file_name().unwrap_or_default()))?;
        }
        cold.push(run_child(&dir)?);
        warm.push(run_child(&dir)?);
    }
    println!("\nmilliseconds; median (min-max) over {runs} processes");
    header();
    row(
        "first ever (hashes toolchain)",
        std::slice::from_ref(&first),
    );
    row("cold: empty cache", &cold);
    row("warm: disk-cache hit", &warm);
    let median_total = |rows: &[Vec<(String, f64)>]| median(rows, "total");
    let (cold_ms, warm_ms) = (median_total(&cold), median_total(&warm));
    println!(
        "\ntargets: cold {cold_ms:.2} ms (≤ 100: {}), warm {warm_ms:.3} ms (≤ 2: {})",
        if cold_ms <= 100.0 { "met" } else { "NOT met" },
        if warm_ms <= 2.0 { "met" } else { "NOT met" }
    );
    println!(
        "origins: cold {:?}, warm {:?}",
        origins(&cold),
        origins(&warm)
    );
    let _ = std::fs::remove_dir_all(&base);
    Ok(())
}

/// One measurement in a fresh process with the cache in `dir`.
fn run_child(dir: &Path) -> Result<Vec<(String, f64)>> {
    let output = Command::new(std::env::current_exe()?)
        .env(CHILD, "1")
        .env("CUDAJIT_CACHE_DIR", dir)
        .env_remove("CUDAJIT_CACHE")
        .env_remove("CUDAJIT_DUMP")
        .output()?;
    let stdout = String::from_utf8_lossy(&output.stdout);
    if !output.status.success() {
        return Err(format!(
            "child failed:\n{stdout}\n{}",
            String::from_utf8_lossy(&output.stderr)
        )
        .into());
    }
    let line = stdout
        .lines()
        .find_map(|l| l.strip_prefix("RESULT "))
        .ok_or_else(|| format!("no RESULT line in:\n{stdout}"))?;
    Ok(line
        .split_whitespace()
        .filter_map(|kv| kv.split_once('='))
        .map(|(k, v)| (k.to_owned(), v.parse().unwrap_or(f64::NAN)))
        .collect())
}

/// The child: one first launch (or compile) and its breakdown.
fn child() -> Result<()> {
    let context = cudajit::default_context().ok();
    let started = Instant::now();
    let (report, load_ms) = match &context {
        Some(context) => {
            let stream = context.default_stream();
            let x = stream.clone_htod(&[1.0f32; 256])?;
            let mut y = stream.clone_htod(&[2.0f32; 256])?;
            stream.synchronize()?;
            let launched = Instant::now();
            bench_saxpy::launch(&stream, LaunchConfig::for_elements(256), 3.0, &x, &mut y)?;
            stream.synchronize()?;
            let total = launched.elapsed();
            let loaded = bench_saxpy::compile(context)?;
            let y = stream.clone_dtoh(&y)?;
            if y.iter().any(|&v| v != 5.0) {
                return Err("wrong result".into());
            }
            println!(
                "RESULT total={} lookup={} lower={} libnvvm={} nvjitlink={} load={} origin={}",
                ms(total),
                ms(loaded.compiled().report.lookup),
                ms(loaded.compiled().report.lower),
                ms(loaded.compiled().report.nvvm),
                ms(loaded.compiled().report.link),
                ms(loaded.load_time()),
                origin_code(loaded.compiled().report.origin)
            );
            return Ok(());
        }
        None => (
            bench_saxpy::KERNEL.compile_for_arch(Arch::SM_90)?.report,
            0.0,
        ),
    };
    println!(
        "RESULT total={} lookup={} lower={} libnvvm={} nvjitlink={} load={load_ms} origin={}",
        ms(started.elapsed()),
        ms(report.lookup),
        ms(report.lower),
        ms(report.nvvm),
        ms(report.link),
        origin_code(report.origin)
    );
    Ok(())
}

fn ms(d: std::time::Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// 0 memory, 1 disk, 2 compiled (RESULT values are numbers).
fn origin_code(origin: cudajit::CubinOrigin) -> u8 {
    match origin {
        cudajit::CubinOrigin::Memory => 0,
        cudajit::CubinOrigin::Disk => 1,
        cudajit::CubinOrigin::Compiled => 2,
    }
}

fn origins(rows: &[Vec<(String, f64)>]) -> Vec<&'static str> {
    rows.iter()
        .map(|r| match value(r, "origin") as u8 {
            1 => "Disk",
            2 => "Compiled",
            _ => "Memory",
        })
        .collect()
}

fn value(row: &[(String, f64)], name: &str) -> f64 {
    row.iter()
        .find(|(k, _)| k == name)
        .map_or(f64::NAN, |(_, v)| *v)
}

fn median(rows: &[Vec<(String, f64)>], name: &str) -> f64 {
    let mut values: Vec<f64> = rows.iter().map(|r| value(r, name)).collect();
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

fn header() {
    print!("{:<32}", "case");
    for column in COLUMNS {
        print!(" {column:>20}");
    }
    println!();
}

fn row(label: &str, rows: &[Vec<(String, f64)>]) {
    print!("{label:<32}");
    for column in COLUMNS {
        let mut values: Vec<f64> = rows.iter().map(|r| value(r, column)).collect();
        values.sort_by(f64::total_cmp);
        let cell = match values.as_slice() {
            [] => "-".to_owned(),
            [only] if only.is_nan() => "-".to_owned(),
            [only] => format!("{only:.3}"),
            many => format!(
                "{:.3} ({:.2}-{:.2})",
                many[many.len() / 2],
                many[0],
                many[many.len() - 1]
            ),
        };
        print!(" {cell:>20}");
    }
    println!();
}
