//! One case per kernel: inputs, both implementations checked against the CPU, then timed;
//! the launch configurations and tolerances the cases (and the tests) use.

use cudajit::prelude::*;
use cudajit::CudaSlice;
use cudarc::driver::{CudaFunction, PushKernelArg};

use super::checks::{check_close, check_exact, rel_tolerance, Random};
use super::kernels::*;
use super::measure::{Env, Side, Times};
use super::references::*;
use super::Result;

/// cudajit's launch configuration as cudarc's, so both sides launch identically.
fn cu(config: LaunchConfig) -> cudarc::driver::LaunchConfig {
    cudarc::driver::LaunchConfig {
        grid_dim: (config.grid.x, config.grid.y, config.grid.z),
        block_dim: (config.block.x, config.block.y, config.block.z),
        shared_mem_bytes: config.shared_mem_bytes,
    }
}

/// The nvcc function of a launch on the nvcc side; an error (not a panic) if missing.
fn need(function: &Option<CudaFunction>) -> Result<&CudaFunction> {
    function
        .as_ref()
        .ok_or_else(|| "internal: nvcc launch without an nvcc cubin".into())
}

/// Launches a built cudarc launch on the nvcc side.
///
/// Every call site pushes exactly the arguments of the kernel's `extern "C"` signature in
/// benches/cuda/kernels.cu, in order.
macro_rules! nvcc_launch {
    ($env:expr, $function:expr, $config:expr, [$($arg:expr),* $(,)?]) => {{
        let mut builder = $env.stream.launch_builder(need($function)?);
        $(builder.arg($arg);)*
        // SAFETY: the arguments match the kernel's signature in kernels.cu (see above), and
        // every buffer outlives the launch (the stream is synchronised before they drop).
        unsafe { builder.launch(cu($config)) }?;
    }};
}

pub(crate) fn vector_add_case(env: &Env, n: usize, time: bool) -> Result<Option<Times>> {
    let s = &env.stream;
    let a_h = Random::f32s(1, n, -1.0, 1.0);
    let b_h = Random::f32s(2, n, -1.0, 1.0);
    let expected: Vec<f32> = a_h.iter().zip(&b_h).map(|(x, y)| x + y).collect();
    let a = s.clone_htod(&a_h)?;
    let b = s.clone_htod(&b_h)?;
    let mut c = s.alloc_zeros::<f32>(n)?;
    let config = LaunchConfig::for_elements(n.div_ceil(4));
    let f = env.nvcc_function("vector_add")?;
    let len = n as u64;
    let launch = |side: Side, c: &mut CudaSlice<f32>| -> Result<()> {
        match side {
            Side::Cudajit => vector_add::launch(s, config, &a, &b, c)?,
            Side::Nvcc => nvcc_launch!(env, &f, config, [&a, &b, c, &len]),
        }
        Ok(())
    };
    for side in env.sides() {
        s.memset_zeros(&mut c)?;
        launch(side, &mut c)?;
        let what = format!("vector_add n={n} ({})", side.label());
        check_exact(&what, &s.clone_dtoh(&c)?, &expected)?;
    }
    timed(env, time, |side| launch(side, &mut c))
}

pub(crate) fn saxpy_case(env: &Env, n: usize, time: bool) -> Result<Option<Times>> {
    let s = &env.stream;
    let alpha = 1.5f32;
    let x_h = Random::f32s(3, n, -1.0, 1.0);
    let y_h = Random::f32s(4, n, -1.0, 1.0);
    let (expected, tolerance) = saxpy_ref(alpha, &x_h, &y_h);
    let x = s.clone_htod(&x_h)?;
    let mut y = s.clone_htod(&y_h)?;
    let config = LaunchConfig::for_elements(n.div_ceil(4));
    let f = env.nvcc_function("saxpy")?;
    let len = n as u64;
    let launch = |side: Side, y: &mut CudaSlice<f32>| -> Result<()> {
        match side {
            Side::Cudajit => saxpy::launch(s, config, alpha, &x, y)?,
            Side::Nvcc => nvcc_launch!(env, &f, config, [&alpha, &x, y, &len]),
        }
        Ok(())
    };
    for side in env.sides() {
        s.memcpy_htod(&y_h, &mut y)?;
        launch(side, &mut y)?;
        let what = format!("saxpy n={n} ({})", side.label());
        check_close(&what, &s.clone_dtoh(&y)?, &expected, &tolerance)?;
    }
    // Timed runs keep updating y in place (y grows by at most 1.5 per run): harmless.
    timed(env, time, |side| launch(side, &mut y))
}

/// Blocks of the first reduction pass: enough resident 256-thread blocks to fill every SM
/// (8 x 256 = 2048 threads, an H100/H200 SM's maximum).
pub(crate) fn reduce_grid(sms: u32) -> LaunchConfig {
    LaunchConfig::new(sms * 8, 256)
}

/// The tolerance of a reduction of values in [0, 1) whose exact sum is `sum`: per-thread
/// f32 sums of ~1000 values, then two shuffle trees.
pub(crate) fn reduce_tolerance(sum: f64) -> f64 {
    2e-5 * sum + 1e-6
}

pub(crate) fn reduce_case(env: &Env, n: usize, time: bool) -> Result<Option<Times>> {
    let s = &env.stream;
    let x_h = Random::f32s(5, n, 0.0, 1.0);
    let expected: f64 = x_h.iter().map(|&v| f64::from(v)).sum();
    let x = s.clone_htod(&x_h)?;
    let first = reduce_grid(env.sms);
    let second = LaunchConfig::new(1, 1024);
    let blocks = first.grid.x as usize;
    let mut partial = s.alloc_zeros::<f32>(blocks)?;
    let mut out = s.alloc_zeros::<f32>(1)?;
    let f = env.nvcc_function("reduce_sum")?;
    let (len, partial_len) = (n as u64, blocks as u64);
    let launch = |side: Side, partial: &mut CudaSlice<f32>, out: &mut CudaSlice<f32>| {
        match side {
            Side::Cudajit => {
                reduce_sum::launch(s, first, &x, partial)?;
                reduce_sum::launch(s, second, &*partial, out)?;
            }
            Side::Nvcc => {
                nvcc_launch!(env, &f, first, [&x, &len, &mut *partial]);
                nvcc_launch!(env, &f, second, [&*partial, &partial_len, out]);
            }
        }
        Result::Ok(())
    };
    for side in env.sides() {
        s.memset_zeros(&mut out)?;
        launch(side, &mut partial, &mut out)?;
        let got = s.clone_dtoh(&out)?;
        let what = format!("reduce n={n} ({})", side.label());
        check_close(&what, &got, &[expected], &[reduce_tolerance(expected)])?;
    }
    timed(env, time, |side| launch(side, &mut partial, &mut out))
}

/// Elements per block in the scan: 8 rounds of 4 elements x 256 threads.
pub(crate) const SCAN_TILE: usize = 8 * 4 * 256;

pub(crate) fn scan_configs(n: usize) -> (usize, [LaunchConfig; 3]) {
    let tiles = n.div_ceil(SCAN_TILE).max(1);
    let per_tile = LaunchConfig::new(tiles as u32, 256);
    (tiles, [per_tile, LaunchConfig::new(1, 1024), per_tile])
}

pub(crate) fn scan_case(env: &Env, n: usize, time: bool) -> Result<Option<Times>> {
    let s = &env.stream;
    let x_h = Random::u32s(6, n);
    let expected = scan_ref(&x_h);
    let x = s.clone_htod(&x_h)?;
    let (tiles, [p1, p2, p3]) = scan_configs(n);
    let mut sums = s.alloc_zeros::<u32>(tiles)?;
    let mut scanned = s.alloc_zeros::<u32>(tiles)?;
    let mut y = s.alloc_zeros::<u32>(n)?;
    let f_sums = env.nvcc_function("scan_tile_sums")?;
    let f_scan = env.nvcc_function("scan_tiles")?;
    let (tile, len, tiles64, none) = (SCAN_TILE as u64, n as u64, tiles as u64, 0u64);
    let launch = |side: Side,
                  sums: &mut CudaSlice<u32>,
                  scanned: &mut CudaSlice<u32>,
                  y: &mut CudaSlice<u32>| {
        match side {
            Side::Cudajit => {
                scan_tile_sums::launch(s, p1, tile, &x, sums)?;
                // One block scans all tile sums; the empty prefix means "no carry in".
                scan_tiles::launch(s, p2, tiles64, &*sums, &sums.slice(0..0), scanned)?;
                scan_tiles::launch(s, p3, tile, &x, &*scanned, y)?;
            }
            Side::Nvcc => {
                nvcc_launch!(env, &f_sums, p1, [&tile, &x, &len, &mut *sums]);
                nvcc_launch!(
                    env,
                    &f_scan,
                    p2,
                    [&tiles64, &*sums, &tiles64, &*sums, &none, &mut *scanned]
                );
                nvcc_launch!(env, &f_scan, p3, [&tile, &x, &len, &*scanned, &tiles64, y]);
            }
        }
        Result::Ok(())
    };
    for side in env.sides() {
        s.memset_zeros(&mut y)?;
        launch(side, &mut sums, &mut scanned, &mut y)?;
        let what = format!("scan n={n} ({})", side.label());
        check_exact(&what, &s.clone_dtoh(&y)?, &expected)?;
    }
    timed(env, time, |side| {
        launch(side, &mut sums, &mut scanned, &mut y)
    })
}

/// Blocks of the histogram: 6 per SM, as many as fit at once with 32 KiB of bins each
/// (the H200 has 228 KiB of shared memory per SM), so the grid runs in one wave.
pub(crate) fn histogram_config(sms: u32) -> LaunchConfig {
    LaunchConfig::new(sms * 6, 256)
}

/// `mask` narrows the bytes (0x0303_0303: 4 distinct values, heavy same-address atomics).
pub(crate) fn histogram_case(
    env: &Env,
    words: usize,
    mask: u32,
    time: bool,
) -> Result<Option<Times>> {
    let s = &env.stream;
    let w_h: Vec<u32> = Random::u32s(7, words).iter().map(|w| w & mask).collect();
    let expected = histogram_ref(&w_h);
    let w = s.clone_htod(&w_h)?;
    let mut bins = s.alloc_zeros::<u32>(256)?;
    let config = histogram_config(env.sms);
    let f = env.nvcc_function("histogram256")?;
    let len = words as u64;
    let launch = |side: Side, bins: &mut CudaSlice<u32>| -> Result<()> {
        match side {
            Side::Cudajit => histogram256::launch(s, config, &w, bins)?,
            Side::Nvcc => nvcc_launch!(env, &f, config, [&w, &len, bins]),
        }
        Ok(())
    };
    for side in env.sides() {
        s.memset_zeros(&mut bins)?;
        launch(side, &mut bins)?;
        let what = format!("histogram words={words} mask={mask:#x} ({})", side.label());
        check_exact(&what, &s.clone_dtoh(&bins)?, &expected)?;
    }
    // Timed runs keep adding to the bins (at most 2^29 counts per run): no reset needed.
    timed(env, time, |side| launch(side, &mut bins))
}

/// The shapes of `transpose_tiled` the benchmark can measure (`--transpose-tile`): tile
/// side and block rows; each has a CUDA C++ twin `transpose_tiled_<TILE>x<ROWS>`.
pub(crate) const TRANSPOSE_TILES: [(u32, u32); 5] = [(32, 8), (32, 4), (32, 16), (64, 8), (64, 16)];

/// The shape measured by default: 32 x 32 tiles, 32 x 4 threads moving 8 elements each
/// (90.6 % of the copy bandwidth on the H200, where 32 x 8 reaches 89.5 % on both sides).
pub(crate) const DEFAULT_TRANSPOSE_TILE: (u32, u32) = (32, 4);

pub(crate) fn transpose_config(
    rows: u32,
    cols: u32,
    (tile, block_rows): (u32, u32),
) -> LaunchConfig {
    LaunchConfig::new(
        (cols.div_ceil(tile), rows.div_ceil(tile)),
        (tile, block_rows),
    )
}

pub(crate) fn transpose_case(
    env: &Env,
    rows: usize,
    cols: usize,
    time: bool,
) -> Result<Option<Times>> {
    let s = &env.stream;
    let in_h = Random::f32s(8, rows * cols, -1.0, 1.0);
    let expected = transpose_ref(rows, cols, &in_h);
    let input = s.clone_htod(&in_h)?;
    let mut out = s.alloc_zeros::<f32>(rows * cols)?;
    let (r32, c32) = (u32::try_from(rows)?, u32::try_from(cols)?);
    let config = transpose_config(r32, c32, env.transpose_tile);
    let f = env.nvcc_function(&match env.transpose_tile {
        (32, 8) => "transpose_tiled".to_owned(),
        (tile, rows) => format!("transpose_tiled_{tile}x{rows}"),
    })?;
    let launch = |side: Side, out: &mut CudaSlice<f32>| -> Result<()> {
        match side {
            Side::Cudajit => {
                let (a, b, x, y) = (r32, c32, &input, &mut *out);
                match env.transpose_tile {
                    (32, 4) => transpose_tiled::launch::<32, 4>(s, config, a, b, x, y)?,
                    (32, 16) => transpose_tiled::launch::<32, 16>(s, config, a, b, x, y)?,
                    (64, 8) => transpose_tiled::launch::<64, 8>(s, config, a, b, x, y)?,
                    (64, 16) => transpose_tiled::launch::<64, 16>(s, config, a, b, x, y)?,
                    _ => transpose_tiled::launch::<32, 8>(s, config, a, b, x, y)?,
                }
            }
            Side::Nvcc => nvcc_launch!(env, &f, config, [&r32, &c32, &input, out]),
        }
        Ok(())
    };
    for side in env.sides() {
        s.memset_zeros(&mut out)?;
        launch(side, &mut out)?;
        let what = format!("transpose {rows}x{cols} ({})", side.label());
        check_exact(&what, &s.clone_dtoh(&out)?, &expected)?;
    }
    timed(env, time, |side| launch(side, &mut out))
}

/// The tolerance of an SGEMM entry whose terms' magnitudes sum to `magnitude`: rounding of
/// a length-k f32 dot product grows like sqrt(k) ulps of the terms' magnitude; 1e-5 of it
/// is far above that and far below an indexing mistake.
pub(crate) fn sgemm_tolerance(magnitude: f64) -> f64 {
    1e-5 * magnitude + 1e-6
}

pub(crate) fn sgemm_config(m: usize, n: usize) -> LaunchConfig {
    LaunchConfig::new(((n / 128) as u32, (m / 128) as u32), 256)
}

pub(crate) fn sgemm_case(
    env: &Env,
    (m, n, k): (usize, usize, usize),
    full_check: bool,
    time: bool,
) -> Result<Option<Times>> {
    if m % 128 != 0 || n % 128 != 0 || k % 8 != 0 || m == 0 || n == 0 || k == 0 {
        return Err(format!("sgemm {m}x{n}x{k}: m and n must be multiples of 128, k of 8").into());
    }
    let s = &env.stream;
    let a_h = Random::f32s(9, m * k, -1.0, 1.0);
    let b_h = Random::f32s(10, k * n, -1.0, 1.0);
    let a = s.clone_htod(&a_h)?;
    let b = s.clone_htod(&b_h)?;
    let mut c = s.alloc_zeros::<f32>(m * n)?;
    let config = sgemm_config(m, n);
    let f = env.nvcc_function("sgemm")?;
    let (n32, k32) = (n as u32, k as u32);
    let launch = |side: Side, c: &mut CudaSlice<f32>| -> Result<()> {
        match side {
            Side::Cudajit => sgemm::launch(s, config, n32, k32, &a, &b, c)?,
            Side::Nvcc => nvcc_launch!(env, &f, config, [&n32, &k32, &a, &b, c]),
        }
        Ok(())
    };
    let samples = sgemm_samples(m, n, full_check);
    let mut expected = Vec::with_capacity(samples.len());
    let mut tolerance = Vec::with_capacity(samples.len());
    for &(i, j) in &samples {
        let (dot, magnitude) = sgemm_entry(&a_h, &b_h, n, k, i, j);
        expected.push(dot);
        tolerance.push(sgemm_tolerance(magnitude));
    }
    for side in env.sides() {
        s.memset_zeros(&mut c)?;
        launch(side, &mut c)?;
        let all = s.clone_dtoh(&c)?;
        let got: Vec<f32> = samples.iter().map(|&(i, j)| all[i * n + j]).collect();
        let what = format!("sgemm {m}x{n}x{k} ({})", side.label());
        check_close(&what, &got, &expected, &tolerance)?;
    }
    timed(env, time, |side| launch(side, &mut c))
}

/// Rows per 256-thread block in the softmax: one per warp.
const SOFTMAX_ROWS_PER_BLOCK: u32 = 8;

pub(crate) fn softmax_config(rows: usize) -> Result<LaunchConfig> {
    let blocks = u32::try_from(rows.div_ceil(SOFTMAX_ROWS_PER_BLOCK as usize))?;
    Ok(LaunchConfig::new(blocks, 32 * SOFTMAX_ROWS_PER_BLOCK))
}

/// The tolerances of softmax outputs `expected`: exp within 2 ulp, a sum of 1024 terms, one
/// division: far below 1e-5 relative.
pub(crate) fn softmax_tolerance(expected: &[f64]) -> Vec<f64> {
    rel_tolerance(expected, 1e-5, 1e-12)
}

/// Softmax over `rows` rows of `cols` floats: 1024 (the measured size, `PER_LANE` = 32) or
/// 128 (`PER_LANE` = 4, checked only), the two specialisations built on both sides.
pub(crate) fn softmax_case(
    env: &Env,
    rows: usize,
    cols: usize,
    time: bool,
) -> Result<Option<Times>> {
    let twin = match cols {
        1024 => "softmax_rows_32",
        128 => "softmax_rows_4",
        _ => {
            return Err(format!(
                "softmax: {cols} columns; the benchmark builds the kernel for 1024 and 128"
            )
            .into())
        }
    };
    let s = &env.stream;
    let x_h = Random::f32s(12, rows * cols, -8.0, 8.0);
    let expected = softmax_ref(rows, cols, &x_h);
    let tolerance = softmax_tolerance(&expected);
    let x = s.clone_htod(&x_h)?;
    let mut y = s.alloc_zeros::<f32>(rows * cols)?;
    let config = softmax_config(rows)?;
    let f = env.nvcc_function(twin)?;
    let rows32 = u32::try_from(rows)?;
    let launch = |side: Side, y: &mut CudaSlice<f32>| -> Result<()> {
        match (side, cols) {
            (Side::Cudajit, 1024) => softmax_rows::launch::<32>(s, config, rows32, &x, y)?,
            (Side::Cudajit, _) => softmax_rows::launch::<4>(s, config, rows32, &x, y)?,
            (Side::Nvcc, _) => nvcc_launch!(env, &f, config, [&rows32, &x, y]),
        }
        Ok(())
    };
    for side in env.sides() {
        s.memset_zeros(&mut y)?;
        launch(side, &mut y)?;
        let what = format!("softmax {rows}x{cols} ({})", side.label());
        check_close(&what, &s.clone_dtoh(&y)?, &expected, &tolerance)?;
    }
    timed(env, time, |side| launch(side, &mut y))
}

/// `env.time(launch)` when timing was asked for; the synchronised stream either way.
fn timed(env: &Env, time: bool, launch: impl FnMut(Side) -> Result<()>) -> Result<Option<Times>> {
    let times = if time { Some(env.time(launch)?) } else { None };
    env.stream.synchronize()?;
    Ok(times)
}
