//! The kernels of the cudajit-vs-nvcc benchmark (`examples/kernel_bench/`) on the CPU
//! simulator, each against its CPU reference at small and awkward sizes (tails, partial
//! tiles, several blocks, grid-stride loops that go round more than once), launched with
//! the benchmark's own launch configurations. No GPU needed: CI runs these.
//! (`tests/kernels.rs` runs the benchmark's GPU checks, `kernel_bench::bench::check_small`.)

#[allow(dead_code)]
#[path = "../examples/kernel_bench/main.rs"]
mod kernel_bench;

use cudajit::prelude::*;
use cudajit::Stream;
use kernel_bench::cases::{
    histogram_config, reduce_grid, reduce_tolerance, scan_configs, sgemm_config, sgemm_tolerance,
    softmax_config, softmax_tolerance, transpose_config, SCAN_TILE,
};
use kernel_bench::checks::{check_close, check_exact, Random};
use kernel_bench::options::KERNEL_NAMES;
use kernel_bench::references::{
    histogram_ref, saxpy_ref, scan_ref, sgemm_entry, sgemm_samples, softmax_ref, transpose_ref,
};
use kernel_bench::Result;

/// The SM counts whose launch configurations (`reduce_grid`: 8 blocks of 256 threads per
/// SM, `histogram_config`: 6) run here: a small GPU's, so that the grid-stride loops go round
/// several times at sizes the simulator runs quickly, and the H200's (132 SMs), the
/// configuration the benchmark measures.
const SMALL_GPU_SMS: u32 = 2;
const H200_SMS: u32 = 132;

fn sim() -> Stream {
    Stream::simulator()
}

fn vector_add(s: &Stream, n: usize) -> Result<()> {
    let a_h = Random::f32s(1, n, -1.0, 1.0);
    let b_h = Random::f32s(2, n, -1.0, 1.0);
    let expected: Vec<f32> = a_h.iter().zip(&b_h).map(|(x, y)| x + y).collect();
    let a = s.clone_htod(&a_h)?;
    let b = s.clone_htod(&b_h)?;
    let mut c = s.alloc_zeros::<f32>(n)?;
    let config = LaunchConfig::for_elements(n.div_ceil(4));
    kernel_bench::kernels::vector_add::launch(s, config, &a, &b, &mut c)?;
    check_exact(&format!("vector_add n={n}"), &s.clone_dtoh(&c)?, &expected)
}

fn saxpy(s: &Stream, n: usize) -> Result<()> {
    let alpha = 1.5f32;
    let x_h = Random::f32s(3, n, -1.0, 1.0);
    let y_h = Random::f32s(4, n, -1.0, 1.0);
    let (expected, tolerance) = saxpy_ref(alpha, &x_h, &y_h);
    let x = s.clone_htod(&x_h)?;
    let mut y = s.clone_htod(&y_h)?;
    let config = LaunchConfig::for_elements(n.div_ceil(4));
    kernel_bench::kernels::saxpy::launch(s, config, alpha, &x, &mut y)?;
    check_close(
        &format!("saxpy n={n}"),
        &s.clone_dtoh(&y)?,
        &expected,
        &tolerance,
    )
}

/// Both passes of the reduction: the grid of `sms` SMs over `x`, then one block of 1024
/// over the per-block sums.
fn reduce(s: &Stream, n: usize, sms: u32) -> Result<()> {
    let x_h = Random::f32s(5, n, 0.0, 1.0);
    let expected: f64 = x_h.iter().map(|&v| f64::from(v)).sum();
    let x = s.clone_htod(&x_h)?;
    let first = reduce_grid(sms);
    let second = LaunchConfig::new(1, 1024);
    let mut partial = s.alloc_zeros::<f32>(first.grid.x as usize)?;
    let mut out = s.alloc_zeros::<f32>(1)?;
    kernel_bench::kernels::reduce_sum::launch(s, first, &x, &mut partial)?;
    kernel_bench::kernels::reduce_sum::launch(s, second, &partial, &mut out)?;
    check_close(
        &format!("reduce n={n} sms={sms}"),
        &s.clone_dtoh(&out)?,
        &[expected],
        &[reduce_tolerance(expected)],
    )
}

/// The three passes of the scan, as the benchmark launches them.
fn scan(s: &Stream, n: usize) -> Result<()> {
    let x_h = Random::u32s(6, n);
    let expected = scan_ref(&x_h);
    let x = s.clone_htod(&x_h)?;
    let (tiles, [p1, p2, p3]) = scan_configs(n);
    let mut sums = s.alloc_zeros::<u32>(tiles)?;
    let mut scanned = s.alloc_zeros::<u32>(tiles)?;
    let mut y = s.alloc_zeros::<u32>(n)?;
    // The benchmark passes `sums.slice(0..0)` (a cudarc view): an empty prefix, "no carry in".
    let no_prefix = s.alloc_zeros::<u32>(0)?;
    let tile = SCAN_TILE as u64;
    kernel_bench::kernels::scan_tile_sums::launch(s, p1, tile, &x, &mut sums)?;
    kernel_bench::kernels::scan_tiles::launch(
        s,
        p2,
        tiles as u64,
        &sums,
        &no_prefix,
        &mut scanned,
    )?;
    kernel_bench::kernels::scan_tiles::launch(s, p3, tile, &x, &scanned, &mut y)?;
    check_exact(&format!("scan n={n}"), &s.clone_dtoh(&y)?, &expected)
}

/// The scan's one-block pass (`scan_tiles` with the benchmark's second configuration and
/// no prefix) over `tiles` tile sums: more than 4096 take several rounds of the block.
/// (Reaching that through the whole scan takes 4097 tiles of 8192 elements: too slow to
/// simulate here; `check_small` does it on the GPU.)
fn scan_one_block_pass(s: &Stream, tiles: usize) -> Result<()> {
    let sums_h = Random::u32s(13, tiles);
    let expected = scan_ref(&sums_h);
    let (_, [_, p2, _]) = scan_configs(tiles * SCAN_TILE);
    let sums = s.clone_htod(&sums_h)?;
    let no_prefix = s.alloc_zeros::<u32>(0)?;
    let mut scanned = s.alloc_zeros::<u32>(tiles)?;
    kernel_bench::kernels::scan_tiles::launch(
        s,
        p2,
        tiles as u64,
        &sums,
        &no_prefix,
        &mut scanned,
    )?;
    check_exact(
        &format!("scan one-block pass over {tiles} tile sums"),
        &s.clone_dtoh(&scanned)?,
        &expected,
    )
}

/// `mask` narrows the bytes (0x0303_0303: 4 distinct values, heavy same-address atomics).
fn histogram(s: &Stream, words: usize, mask: u32, sms: u32) -> Result<()> {
    let w_h: Vec<u32> = Random::u32s(7, words).iter().map(|w| w & mask).collect();
    let expected = histogram_ref(&w_h);
    let w = s.clone_htod(&w_h)?;
    let mut bins = s.alloc_zeros::<u32>(256)?;
    kernel_bench::kernels::histogram256::launch(s, histogram_config(sms), &w, &mut bins)?;
    check_exact(
        &format!("histogram words={words} mask={mask:#x} sms={sms}"),
        &s.clone_dtoh(&bins)?,
        &expected,
    )
}

fn transpose(s: &Stream, rows: usize, cols: usize) -> Result<()> {
    let in_h = Random::f32s(8, rows * cols, -1.0, 1.0);
    let expected = transpose_ref(rows, cols, &in_h);
    let input = s.clone_htod(&in_h)?;
    let mut out = s.alloc_zeros::<f32>(rows * cols)?;
    let (r32, c32) = (u32::try_from(rows)?, u32::try_from(cols)?);
    let config = transpose_config(r32, c32, (32, 8));
    kernel_bench::kernels::transpose_tiled::launch::<32, 8>(s, config, r32, c32, &input, &mut out)?;
    check_exact(
        &format!("transpose {rows}x{cols}"),
        &s.clone_dtoh(&out)?,
        &expected,
    )
}

/// Every entry of the product is compared (`sgemm_samples(.., true)`).
fn sgemm(s: &Stream, (m, n, k): (usize, usize, usize)) -> Result<()> {
    let a_h = Random::f32s(9, m * k, -1.0, 1.0);
    let b_h = Random::f32s(10, k * n, -1.0, 1.0);
    let a = s.clone_htod(&a_h)?;
    let b = s.clone_htod(&b_h)?;
    let mut c = s.alloc_zeros::<f32>(m * n)?;
    let (n32, k32) = (n as u32, k as u32);
    kernel_bench::kernels::sgemm::launch(s, sgemm_config(m, n), n32, k32, &a, &b, &mut c)?;
    let samples = sgemm_samples(m, n, true);
    let mut expected = Vec::with_capacity(samples.len());
    let mut tolerance = Vec::with_capacity(samples.len());
    for &(i, j) in &samples {
        let (dot, magnitude) = sgemm_entry(&a_h, &b_h, n, k, i, j);
        expected.push(dot);
        tolerance.push(sgemm_tolerance(magnitude));
    }
    let all = s.clone_dtoh(&c)?;
    let got: Vec<f32> = samples.iter().map(|&(i, j)| all[i * n + j]).collect();
    check_close(&format!("sgemm {m}x{n}x{k}"), &got, &expected, &tolerance)
}

/// Rows of 1024 (`PER_LANE` = 32, the measured specialisation) or 128 (`PER_LANE` = 4).
fn softmax(s: &Stream, rows: usize, cols: usize) -> Result<()> {
    let x_h = Random::f32s(12, rows * cols, -8.0, 8.0);
    let expected = softmax_ref(rows, cols, &x_h);
    let tolerance = softmax_tolerance(&expected);
    let x = s.clone_htod(&x_h)?;
    let mut y = s.alloc_zeros::<f32>(rows * cols)?;
    let config = softmax_config(rows)?;
    let rows32 = u32::try_from(rows)?;
    match cols {
        1024 => kernel_bench::kernels::softmax_rows::launch::<32>(s, config, rows32, &x, &mut y)?,
        128 => kernel_bench::kernels::softmax_rows::launch::<4>(s, config, rows32, &x, &mut y)?,
        _ => return Err(format!("softmax: {cols} columns; built for 1024 and 128").into()),
    }
    check_close(
        &format!("softmax {rows}x{cols}"),
        &s.clone_dtoh(&y)?,
        &expected,
        &tolerance,
    )
}

/// Kernel `name` (one of `KERNEL_NAMES`) at every size checked here.
fn check_on_simulator(s: &Stream, name: &str) -> Result<()> {
    match name {
        "vector_add" => {
            for n in kernel_bench::bench::ELEMENTWISE_CHECK_SIZES {
                vector_add(s, n)?;
            }
        }
        "saxpy" => {
            for n in kernel_bench::bench::ELEMENTWISE_CHECK_SIZES {
                saxpy(s, n)?;
            }
        }
        "reduce" => {
            for n in [7, 1_000_003] {
                reduce(s, n, H200_SMS)?;
            }
            // On 2 SMs (4096 threads), 100_003: several rounds of the two-vector loop, an
            // odd vector left over for some threads, a 3-element tail (`check_small`'s
            // 10_000_019 on the H200's grid, the same walk, takes seconds here).
            for n in [1, 3, 4, 7, 1001, 100_003] {
                reduce(s, n, SMALL_GPU_SMS)?;
            }
        }
        "scan" => {
            for n in kernel_bench::bench::SCAN_CHECK_SIZES {
                scan(s, n)?;
            }
            scan_one_block_pass(s, 3 * 4096 + 5)?;
        }
        "histogram" => {
            for words in [5, 1_000_003] {
                histogram(s, words, u32::MAX, H200_SMS)?;
            }
            // Four distinct bytes: every block's atomics collide on four bins.
            histogram(s, 1_000_003, 0x0303_0303, H200_SMS)?;
            // A small GPU's grid: at 100_003 words the grid-stride loop goes round several
            // times (as `check_small`'s 5_000_011 do on the H200's grid, slow here).
            for words in [1, 3, 4, 5, 1001, 100_003] {
                histogram(s, words, u32::MAX, SMALL_GPU_SMS)?;
            }
        }
        "transpose" => {
            for (rows, cols) in [(1, 1), (33, 65), (1000, 777), (32, 4096)] {
                transpose(s, rows, cols)?;
            }
        }
        "sgemm" => {
            sgemm(s, (128, 128, 8))?;
            sgemm(s, (256, 384, 72))?;
        }
        "softmax" => {
            softmax(s, 3, 1024)?;
            softmax(s, 1001, 1024)?;
            softmax(s, 9, 128)?;
        }
        other => return Err(format!("no simulator check for kernel {other}").into()),
    }
    Ok(())
}

/// One test per kernel, so that CI names the one that fails (and they run in parallel).
macro_rules! kernel_tests {
    ($($test:ident: $name:literal,)*) => {
        $(
            #[test]
            fn $test() {
                let started = std::time::Instant::now();
                if let Err(error) = check_on_simulator(&sim(), $name) {
                    panic!("{}: {error}", $name);
                }
                eprintln!("{}: {:.2} s", $name, started.elapsed().as_secs_f64());
            }
        )*

        /// Every benchmark kernel has a test above: a kernel added to the benchmark
        /// without one fails here instead of going unchecked.
        #[test]
        fn every_benchmark_kernel_is_checked_on_the_simulator() {
            let tested = [$($name),*];
            for name in KERNEL_NAMES {
                assert!(tested.contains(&name), "{name} has no simulator test");
            }
        }
    };
}

kernel_tests! {
    vector_add_on_the_simulator: "vector_add",
    saxpy_on_the_simulator: "saxpy",
    reduce_on_the_simulator: "reduce",
    scan_on_the_simulator: "scan",
    histogram_on_the_simulator: "histogram",
    transpose_on_the_simulator: "transpose",
    sgemm_on_the_simulator: "sgemm",
    softmax_on_the_simulator: "softmax",
}
