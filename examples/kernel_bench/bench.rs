//! The benchmark: checks at awkward sizes, then the measured size, then the tables.

use std::fmt::Write as _;
use std::time::Instant;

use cudajit::prelude::*;

use super::cases::*;
use super::kernels::vector_add;
use super::measure::{Env, Times, L2_FLUSH_BYTES};
use super::options::{Options, KERNEL_NAMES};
use super::report::{resources_table, results_table, Row, Work};
use super::Result;

/// Runs the checks and, when they pass, the timed case of one kernel.
fn measure(
    name: &'static str,
    size: String,
    launch: String,
    work: Work,
    run: impl FnOnce() -> Result<Option<Times>>,
) -> Row {
    let started = Instant::now();
    let outcome = match run() {
        Ok(Some(times)) => Ok(times),
        Ok(None) => Err("internal: the measured case returned no times".to_owned()),
        Err(error) => Err(error.to_string()),
    };
    let result = match &outcome {
        Ok(times) => format!(
            "correct; median cudajit {:.4} ms{}",
            times.cudajit.median,
            times
                .nvcc
                .map(|t| format!(
                    ", nvcc {:.4} ms, cudajit/nvcc {:.3}",
                    t.median,
                    times.cudajit.median / t.median
                ))
                .unwrap_or_default()
        ),
        Err(e) => format!("FAILED: {e}"),
    };
    println!(
        "  {name}: {result} ({:.1} s)",
        started.elapsed().as_secs_f64()
    );
    Row {
        name,
        size,
        launch,
        work,
        outcome,
    }
}

/// Sizes the element-wise kernels are checked at: single elements, lengths that are not a
/// multiple of the 4-wide vector accesses, and a large one with a tail.
pub(crate) const ELEMENTWISE_CHECK_SIZES: [usize; 6] = [1, 3, 4, 5, 1001, (1 << 20) + 3];

/// Sizes the scan is checked at: partial, single and several tiles, with tails.
pub(crate) const SCAN_CHECK_SIZES: [usize; 8] = [
    1,
    3,
    4,
    1025,
    SCAN_TILE,
    SCAN_TILE + 1,
    3 * SCAN_TILE + 7,
    1_000_003,
];

/// Kernel `name` (one of `KERNEL_NAMES`) against its CPU reference at small and awkward
/// sizes (tails, partial tiles, skewed data), on both sides when an nvcc cubin is loaded.
/// The benchmark runs these before timing; `tests/kernels.rs` runs them as GPU tests.
pub(crate) fn check_small(env: &Env, name: &str) -> Result<()> {
    match name {
        "vector_add" => {
            for n in ELEMENTWISE_CHECK_SIZES {
                vector_add_case(env, n, false)?;
            }
        }
        "saxpy" => {
            for n in ELEMENTWISE_CHECK_SIZES {
                saxpy_case(env, n, false)?;
            }
        }
        "reduce" => {
            // 10_000_019: several iterations of the two-vector loop per thread, an odd
            // vector left over for some, and a 3-element tail.
            for n in [1, 3, 4, 7, 1001, 1_000_003, 10_000_019] {
                reduce_case(env, n, false)?;
            }
        }
        "scan" => {
            for n in SCAN_CHECK_SIZES {
                scan_case(env, n, false)?;
            }
            // More tile sums than one round of the one-block pass (4096).
            scan_case(env, 4100 * SCAN_TILE + 5, false)?;
        }
        "histogram" => {
            for words in [1, 3, 4, 5, 1001, 1_000_003, 5_000_011] {
                histogram_case(env, words, u32::MAX, false)?;
            }
            // Four distinct bytes: every block's atomics collide on four bins.
            histogram_case(env, 1_000_003, 0x0303_0303, false)?;
        }
        "transpose" => {
            for (rows, cols) in [(1, 1), (33, 65), (1000, 777), (32, 4096)] {
                transpose_case(env, rows, cols, false)?;
            }
        }
        "sgemm" => {
            sgemm_case(env, (128, 128, 8), true, false)?;
            sgemm_case(env, (256, 384, 72), true, false)?;
        }
        "softmax" => {
            softmax_case(env, 3, 1024, false)?;
            softmax_case(env, 1001, 1024, false)?;
            softmax_case(env, 9, 128, false)?;
        }
        other => return Err(format!("no kernel named {other}").into()),
    }
    Ok(())
}

fn describe(config: &LaunchConfig) -> String {
    let dim = |d: Dim3| {
        if d.z > 1 {
            format!("{}x{}x{}", d.x, d.y, d.z)
        } else if d.y > 1 {
            format!("{}x{}", d.x, d.y)
        } else {
            format!("{}", d.x)
        }
    };
    format!("{} x {}", dim(config.grid), dim(config.block))
}

fn bench_kernel(env: &Env, name: &'static str) -> Row {
    match name {
        "vector_add" => {
            let n = 128usize << 20;
            let config = LaunchConfig::for_elements(n.div_ceil(4));
            measure(
                name,
                format!("{} Mi f32", n >> 20),
                describe(&config),
                Work::Bytes(12.0 * n as f64),
                || {
                    check_small(env, name)?;
                    vector_add_case(env, n, true)
                },
            )
        }
        "saxpy" => {
            let n = 128usize << 20;
            let config = LaunchConfig::for_elements(n.div_ceil(4));
            measure(
                name,
                format!("{} Mi f32", n >> 20),
                describe(&config),
                Work::Bytes(12.0 * n as f64),
                || {
                    check_small(env, name)?;
                    saxpy_case(env, n, true)
                },
            )
        }
        "reduce" => {
            let n = 256usize << 20;
            let config = reduce_grid(env.sms);
            measure(
                name,
                format!("{} Mi f32", n >> 20),
                format!("{} + 1 x 1024", describe(&config)),
                Work::Bytes(4.0 * n as f64),
                || {
                    check_small(env, name)?;
                    reduce_case(env, n, true)
                },
            )
        }
        "scan" => {
            let n = 128usize << 20;
            let (_, [p1, p2, p3]) = scan_configs(n);
            measure(
                name,
                format!("{} Mi u32", n >> 20),
                format!("{} + {} + {}", describe(&p1), describe(&p2), describe(&p3)),
                // Read twice (tile sums, then the scan), written once.
                Work::Bytes(12.0 * n as f64),
                || {
                    check_small(env, name)?;
                    scan_case(env, n, true)
                },
            )
        }
        "histogram" => {
            let words = 128usize << 20;
            let config = histogram_config(env.sms);
            measure(
                name,
                format!("{} Mi bytes", (4 * words) >> 20),
                describe(&config),
                Work::Bytes(4.0 * words as f64),
                || {
                    check_small(env, name)?;
                    histogram_case(env, words, u32::MAX, true)
                },
            )
        }
        "transpose" => {
            let (rows, cols) = env.transpose;
            let config = transpose_config(rows as u32, cols as u32, env.transpose_tile);
            measure(
                name,
                format!("{rows} x {cols} f32"),
                describe(&config),
                Work::Bytes(8.0 * (rows * cols) as f64),
                || {
                    check_small(env, name)?;
                    transpose_case(env, rows, cols, true)
                },
            )
        }
        "sgemm" => {
            let (m, n, k) = (4096usize, 4096usize, 4096usize);
            let config = sgemm_config(m, n);
            measure(
                name,
                format!("{m} x {n} x {k}"),
                describe(&config),
                Work::Flops(2.0 * (m * n * k) as f64),
                || {
                    check_small(env, name)?;
                    sgemm_case(env, (m, n, k), false, true)
                },
            )
        }
        "softmax" => {
            let (rows, cols) = (65536usize, 1024usize);
            let config = match softmax_config(rows) {
                Ok(config) => config,
                Err(e) => return failed(name, e),
            };
            measure(
                name,
                format!("{rows} x {cols} f32"),
                describe(&config),
                Work::Bytes(8.0 * (rows * cols) as f64),
                || {
                    check_small(env, name)?;
                    softmax_case(env, rows, cols, true)
                },
            )
        }
        other => failed("?", format!("internal: no benchmark named {other}").into()),
    }
}

fn failed(name: &'static str, error: Box<dyn std::error::Error>) -> Row {
    Row {
        name,
        size: String::new(),
        launch: String::new(),
        work: Work::Bytes(0.0),
        outcome: Err(error.to_string()),
    }
}

/// Runs every selected kernel; prints and writes the tables. Returns whether every
/// kernel was correct (targets missed are reported, not failures).
pub(crate) fn benchmark(env: &Env, options: &Options) -> Result<bool> {
    let gpu = env.context.name()?;
    let mut driver = 0i32;
    // SAFETY: a plain out-parameter query.
    unsafe { cudarc::driver::sys::cuDriverGetVersion(&mut driver) };
    let cubin = match &options.cubin {
        Some(path) => format!("nvcc cubin: {}", path.display()),
        None => "no nvcc cubin given (--cuda-cubin PATH or CUDAJIT_BENCH_CUBIN): cudajit side \
                 only, no ratios"
            .to_owned(),
    };
    println!(
        "GPU: {gpu}, {} SMs, {}; driver CUDA {}.{}\n{cubin}\nmethod: median of {} timed runs \
         after {} warm-ups, CUDA events, implementations interleaved, L2 flushed (a {} MiB read) \
         before every run",
        env.sms,
        env.arch,
        driver / 1000,
        (driver % 1000) / 10,
        env.runs,
        env.warmup,
        L2_FLUSH_BYTES >> 20
    );
    // Debug builds compile cudajit kernels with bounds checks: not the code being compared.
    let checks = vector_add::KERNEL.options()?.bounds_checks;
    if checks {
        println!(
            "WARNING: cudajit bounds checks are ON (debug build or CUDAJIT_BOUNDS_CHECKS=1): \
             the timings are not comparable; use a release build"
        );
    }
    let copy_bytes = 512usize << 20;
    let copy = env.copy_bandwidth(copy_bytes)?;
    println!(
        "device-to-device copy of {} MiB: {copy:.0} GB/s (bytes read + written)",
        copy_bytes >> 20
    );

    let mut rows = Vec::new();
    for name in KERNEL_NAMES {
        if options.wants(name) {
            println!("{name}: checking against the CPU at several sizes, then timing ...");
            rows.push(bench_kernel(env, name));
        }
    }

    let mut report = String::new();
    let _ = writeln!(
        report,
        "GPU: {gpu} ({} SMs, {}), driver CUDA {}.{}; {cubin}.",
        env.sms,
        env.arch,
        driver / 1000,
        (driver % 1000) / 10
    );
    let _ = writeln!(
        report,
        "Median of {} runs after {} warm-ups, CUDA events, cudajit and nvcc interleaved, L2 \
         flushed before each run; cudajit bounds checks {}. Device-to-device copy: \
         **{copy:.0} GB/s** ({} MiB, read + written).\n",
        env.runs,
        env.warmup,
        if checks { "ON (not comparable)" } else { "off" },
        copy_bytes >> 20
    );
    report.push_str(&results_table(&rows, copy));
    report.push('\n');
    report.push_str(&resources_table(env, options)?);
    println!("\n{report}");
    if let Some(path) = &options.markdown {
        std::fs::write(path, &report)
            .map_err(|e| format!("writing --markdown {}: {e}", path.display()))?;
        println!("(table written to {})", path.display());
    }
    let failed: Vec<&str> = rows
        .iter()
        .filter(|r| r.outcome.is_err())
        .map(|r| r.name)
        .collect();
    if !failed.is_empty() {
        println!(
            "FAILED (wrong results or errors, no timings reported): {}",
            failed.join(", ")
        );
    }
    Ok(failed.is_empty())
}
