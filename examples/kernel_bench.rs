//! Eight classic GPU kernels written in cudajit's kernel language, each checked against a
//! CPU reference and timed against the same algorithm in CUDA C++ built by nvcc
//! (`benches/cuda/kernels.cu`), in one process run, with the same sizes and launch
//! configurations.
//!
//! | kernel | algorithm |
//! | --- | --- |
//! | vector add, SAXPY | one 16-byte vector (4 floats) per thread, scalar tail |
//! | block reduction | grid-stride loop, two 16-byte vectors per iteration, warp shuffles, per-warp sums in shared memory; a second one-block launch sums the per-block results |
//! | scan | reduce-then-scan: tile sums, one block scans them, then every tile is scanned with its offset (4 elements per thread, prefetched a round ahead, warp `shfl_up` scan, warp totals in shared memory) |
//! | histogram | 256 bins x 32 lane copies per block in shared memory (conflict-free shared atomics), merged with global atomics |
//! | transpose | 32 x 32 tiles through padded shared memory, 32 x 4 threads, 8 rows each |
//! | SGEMM | 128 x 128 block tiles, k-steps of 8 through shared memory, 8 x 8 outputs per thread in registers |
//! | softmax | one warp per row, the row in a register array, max and sum as warp butterflies |
//!
//! Kernel times are CUDA-event medians over `--runs` runs (default 30) after `--warmup`
//! warm-ups (default 5), the two implementations interleaved run by run, the L2 cache
//! flushed before every timed run. Bandwidth is compared with a device-to-device copy
//! (`cuMemcpyDtoD`, bytes read + written) measured in the same run.
//!
//! ```text
//! nvcc -O3 -arch=sm_90 -cubin -o kernels.cubin benches/cuda/kernels.cu
//! cargo run --release --example kernel_bench -- --cuda-cubin kernels.cubin --markdown perf.md
//! cargo run --example kernel_bench -- --cpu-check      # no GPU: CPU references + sm_90 compiles
//! ```
//!
//! `scripts/perf-stage.sh` and `scripts/perf-run.sh` build, stage and run it on the GPU
//! machine; `docs/performance.md` has the results.

use std::cell::RefCell;
use std::fmt::Write as _;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use cudajit::core::ir::Literal;
use cudajit::core::Scalar;
use cudajit::prelude::*;
use cudajit::{Arch, CudaContext, CudaSlice, CudaStream, Kernel, Specialization};
use cudarc::driver::sys::{CUdevice_attribute, CUfunction_attribute};
use cudarc::driver::{CudaFunction, CudaModule, PushKernelArg};

pub(crate) type Result<T> = std::result::Result<T, Box<dyn std::error::Error>>;

// ============================================================================================
// The kernels. Each has a twin of the same name in benches/cuda/kernels.cu.
// ============================================================================================

/// `c = a + b`, one 16-byte vector per thread: thread `q` handles elements `4q..4q+4`, and
/// thread `n / 4` the `n % 4` elements of the tail. Launch with `n.div_ceil(4)` threads.
#[kernel]
pub(crate) fn vector_add(a: &[f32], b: &[f32], c: &mut [f32]) {
    let q = global_index();
    let n = c.len();
    if q < n / 4 {
        let (a0, a1, a2, a3) = vload4(a, q);
        let (b0, b1, b2, b3) = vload4(b, q);
        vstore4(c, q, (a0 + b0, a1 + b1, a2 + b2, a3 + b3));
    } else if q == n / 4 {
        for i in 4 * q..n {
            c[i] = a[i] + b[i];
        }
    }
}

/// `y = alpha * x + y`, laid out as `vector_add`.
#[kernel]
pub(crate) fn saxpy(alpha: f32, x: &[f32], y: &mut [f32]) {
    let q = global_index();
    let n = y.len();
    if q < n / 4 {
        let (x0, x1, x2, x3) = vload4(x, q);
        let (y0, y1, y2, y3) = vload4(y, q);
        vstore4(
            y,
            q,
            (
                alpha * x0 + y0,
                alpha * x1 + y1,
                alpha * x2 + y2,
                alpha * x3 + y3,
            ),
        );
    } else if q == n / 4 {
        for i in 4 * q..n {
            y[i] += alpha * x[i];
        }
    }
}

/// The sum of `v` over the 32 lanes of the warp, in every lane (butterfly of
/// `shfl_xor_sync`, unrolled by the compiler: the bounds are constants).
#[device]
fn warp_sum_f32(v: f32) -> f32 {
    let mut s = v;
    for k in 0..5u32 {
        s += shfl_xor_sync(FULL_WARP, s, 16u32 >> k);
    }
    s
}

/// The maximum of `v` over the warp, in every lane.
#[device]
fn warp_max_f32(v: f32) -> f32 {
    let mut m = v;
    for k in 0..5u32 {
        m = m.max(shfl_xor_sync(FULL_WARP, m, 16u32 >> k));
    }
    m
}

/// The wrapping sum of `v` over the warp, in every lane.
#[device]
fn warp_sum_u32(v: u32) -> u32 {
    let mut s = v;
    for k in 0..5u32 {
        s += shfl_xor_sync(FULL_WARP, s, 16u32 >> k);
    }
    s
}

/// Writes the sum of `x` over this block's share of a grid-stride loop to
/// `partial[block]`. Each thread reads two 16-byte vectors per iteration before adding
/// either (32 bytes in flight per thread: 64 KiB per SM, enough to saturate HBM), the warp
/// sums with shuffles, warp 0 sums the per-warp results from shared memory. Launched
/// twice: over the input with a full grid, then with one block over the per-block sums, so
/// the result is deterministic (no float atomics).
#[kernel]
pub(crate) fn reduce_sum(x: &[f32], partial: &mut [f32]) {
    let warp_sums = shared_array::<f32>(32);
    let n = x.len();
    let quads = n / 4;
    let stride = grid_stride();
    let mut sum = 0.0f32;
    let mut q = global_index();
    while q + stride < quads {
        let (a, b, c, d) = vload4(x, q);
        let (e, f, g, h) = vload4(x, q + stride);
        sum += ((a + b) + (c + d)) + ((e + f) + (g + h));
        q += 2 * stride;
    }
    if q < quads {
        let (a, b, c, d) = vload4(x, q);
        sum += (a + b) + (c + d);
    }
    // The `n % 4` elements after the last vector.
    let tail = 4 * quads + global_index();
    if tail < n {
        sum += x[tail];
    }
    sum = warp_sum_f32(sum);
    let lane = lane_id();
    let warp = thread_idx().x / 32;
    if lane == 0 {
        warp_sums[warp as usize] = sum;
    }
    sync_threads();
    if warp == 0 {
        let warps = block_dim().x / 32;
        let v = if lane < warps {
            warp_sums[lane as usize]
        } else {
            0.0
        };
        let total = warp_sum_f32(v);
        if lane == 0 {
            partial[block_idx().x as usize] = total;
        }
    }
}

/// Scan, phase 1: `sums[b]` = wrapping sum of tile `b` (elements `b*tile .. (b+1)*tile`).
/// Same tile walk as `scan_tiles`: rounds of 4 elements per thread.
#[kernel]
pub(crate) fn scan_tile_sums(tile: u64, x: &[u32], sums: &mut [u32]) {
    let warp_sums = shared_array::<u32>(32);
    let n = x.len();
    let start = block_idx().x as usize * tile as usize;
    let end = (start + tile as usize).min(n);
    let t = thread_idx().x as usize;
    let per_round = 4 * block_dim().x as usize;
    let mut s = 0u32;
    for base in (start + 4 * t..end).step_by(per_round) {
        if base + 4 <= end {
            let (a, b, c, d) = vload4(x, base / 4);
            s += (a + b) + (c + d);
        } else {
            for i in base..end {
                s += x[i];
            }
        }
    }
    s = warp_sum_u32(s);
    let lane = lane_id();
    let warp = thread_idx().x / 32;
    if lane == 0 {
        warp_sums[warp as usize] = s;
    }
    sync_threads();
    if warp == 0 {
        let warps = block_dim().x / 32;
        let v = if lane < warps {
            warp_sums[lane as usize]
        } else {
            0
        };
        let total = warp_sum_u32(v);
        if lane == 0 {
            sums[block_idx().x as usize] = total;
        }
    }
}

/// `x[i]`, or 0 past `end`.
#[device]
fn element_or_zero(x: &[u32], i: usize, end: usize) -> u32 {
    if i < end {
        x[i]
    } else {
        0
    }
}

/// Scan, phases 2 and 3: the inclusive (wrapping) prefix sum of tile `b` of `x` into `y`,
/// plus `prefix[b - 1]` (the inclusive scan of the tile sums) when `prefix` is not empty.
/// Phase 2 runs it with one block and an empty `prefix` over the tile sums; phase 3 with
/// one block per tile.
///
/// A tile is walked in rounds of `4 * block_dim` elements: each thread scans its 4
/// consecutive elements (one 16-byte load) in registers, the warp scans the thread totals
/// with `shfl_up_sync`, lane 31 publishes the warp total in shared memory, and after one
/// barrier every thread adds the totals of the warps before it and the carry of earlier
/// rounds. The warp totals alternate between two buffers, so one barrier per round is
/// enough: a buffer is rewritten two rounds later, after every thread passed the barrier
/// that follows its last read. The next round's vector is loaded before this round's
/// barrier (software pipelining), so every thread keeps a load in flight while the block
/// synchronises.
#[kernel]
pub(crate) fn scan_tiles(tile: u64, x: &[u32], prefix: &[u32], y: &mut [u32]) {
    let warp_totals = shared_array::<u32>(64);
    let n = x.len();
    let b = block_idx().x as usize;
    let start = b * tile as usize;
    let end = (start + tile as usize).min(n);
    let t = thread_idx().x as usize;
    let lane = lane_id();
    let warp = thread_idx().x / 32;
    let warps = block_dim().x / 32;
    let per_round = 4 * block_dim().x as usize;
    let mut carry = 0u32;
    if b > 0 && prefix.len() > 0 {
        carry = prefix[b - 1];
    }
    let mut buffer = 0u32;
    // The vector of the first round. Past `end` (a partial last tile), zeros.
    let mut base = start + 4 * t;
    let mut n0: u32;
    let mut n1: u32;
    let mut n2: u32;
    let mut n3 = 0u32;
    if base + 4 <= end {
        let (a, b1, c, d) = vload4(x, base / 4);
        n0 = a;
        n1 = b1;
        n2 = c;
        n3 = d;
    } else {
        n0 = element_or_zero(x, base, end);
        n1 = element_or_zero(x, base + 1, end);
        n2 = element_or_zero(x, base + 2, end);
    }
    // Every thread of the block runs the same rounds (the bounds are block-uniform), as
    // the barrier inside requires.
    for _round in (start..end).step_by(per_round) {
        let v0 = n0;
        let v1 = n1;
        let v2 = n2;
        let v3 = n3;
        let next = base + per_round;
        if next + 4 <= end {
            let (a, b1, c, d) = vload4(x, next / 4);
            n0 = a;
            n1 = b1;
            n2 = c;
            n3 = d;
        } else if next < end {
            n0 = element_or_zero(x, next, end);
            n1 = element_or_zero(x, next + 1, end);
            n2 = element_or_zero(x, next + 2, end);
            n3 = 0;
        }
        let p1 = v0 + v1;
        let p2 = p1 + v2;
        let p3 = p2 + v3;
        let mut inclusive = p3;
        for k in 0..5u32 {
            let delta = 1u32 << k;
            let up = shfl_up_sync(FULL_WARP, inclusive, delta);
            if lane >= delta {
                inclusive += up;
            }
        }
        if lane == 31 {
            warp_totals[(buffer * 32 + warp) as usize] = inclusive;
        }
        sync_threads();
        let mut before = 0u32;
        let mut total = 0u32;
        for w in 0..warps {
            let v = warp_totals[(buffer * 32 + w) as usize];
            if w < warp {
                before += v;
            }
            total += v;
        }
        let exclusive = carry + before + (inclusive - p3);
        if base + 4 <= end {
            vstore4(
                y,
                base / 4,
                (
                    exclusive + v0,
                    exclusive + p1,
                    exclusive + p2,
                    exclusive + p3,
                ),
            );
        } else if base < end {
            y[base] = exclusive + v0;
            if base + 1 < end {
                y[base + 1] = exclusive + p1;
            }
            if base + 2 < end {
                y[base + 2] = exclusive + p2;
            }
        }
        carry += total;
        buffer ^= 1;
        base = next;
    }
}

/// A 256-bin histogram of the bytes packed little-endian in `words` (4 per `u32`: the
/// language has no byte vectors, and word loads keep the reads wide). The block keeps 32
/// copies of the bins in shared memory, bin `b` of copy `k` at `32 b + k`: lane `k` of
/// every warp counts into copy `k`, which lies in bank `k` alone, so the 32 atomics of a
/// warp never contend for a bank, whatever the bytes (one shared copy costs ~3.5-way
/// conflicts on random bytes, 32-way on equal ones). A grid-stride loop over 16-byte
/// vectors (16 bytes, 16 shared atomics per load); the block then sums the copies of
/// each bin (rotated by lane, conflict-free) and adds the non-zero sums to `bins` with
/// global atomics.
#[kernel]
pub(crate) fn histogram256(words: &[u32], bins: &mut [u32]) {
    let local = shared_array::<u32>(256 * 32);
    let t = thread_idx().x as usize;
    let threads = block_dim().x as usize;
    let lane = t % 32;
    for i in (t..256 * 32).step_by(threads) {
        local[i] = 0;
    }
    sync_threads();
    let n = words.len();
    let quads = n / 4;
    for q in (global_index()..quads).step_by(grid_stride()) {
        let (w0, w1, w2, w3) = vload4(words, q);
        for s in 0..4u32 {
            atomic_add(
                &mut local[((w0 >> (8 * s)) & 255) as usize * 32 + lane],
                1u32,
            );
        }
        for s in 0..4u32 {
            atomic_add(
                &mut local[((w1 >> (8 * s)) & 255) as usize * 32 + lane],
                1u32,
            );
        }
        for s in 0..4u32 {
            atomic_add(
                &mut local[((w2 >> (8 * s)) & 255) as usize * 32 + lane],
                1u32,
            );
        }
        for s in 0..4u32 {
            atomic_add(
                &mut local[((w3 >> (8 * s)) & 255) as usize * 32 + lane],
                1u32,
            );
        }
    }
    let tail = 4 * quads + global_index();
    if tail < n {
        let w = words[tail];
        for s in 0..4u32 {
            atomic_add(
                &mut local[((w >> (8 * s)) & 255) as usize * 32 + lane],
                1u32,
            );
        }
    }
    sync_threads();
    for bin in (t..256).step_by(threads) {
        let mut count = 0u32;
        for k in 0..32usize {
            count += local[bin * 32 + (k + lane) % 32];
        }
        if count > 0 {
            atomic_add(&mut bins[bin], count);
        }
    }
}

/// `output` (cols x rows) = transpose of `input` (rows x cols), through a `TILE` x
/// (`TILE` + 1) shared tile (the padding column keeps the column reads free of bank
/// conflicts), so global reads and writes are both coalesced. Blocks of `TILE` x `ROWS`
/// threads, each thread moving `TILE / ROWS` elements; grid (cols / TILE, rows / TILE).
#[kernel]
pub(crate) fn transpose_tiled<const TILE: usize, const ROWS: usize>(
    rows: u32,
    cols: u32,
    input: &[f32],
    output: &mut [f32],
) {
    let tile = shared_array::<f32>(TILE * (TILE + 1));
    let t = TILE as u32;
    let tx = thread_idx().x;
    let ty = thread_idx().y;
    let c = block_idx().x * t + tx;
    let r0 = block_idx().y * t + ty;
    for j in (0..t).step_by(ROWS) {
        let r = r0 + j;
        if r < rows && c < cols {
            tile[((ty + j) * (t + 1) + tx) as usize] = input[(r * cols + c) as usize];
        }
    }
    sync_threads();
    let oc = block_idx().y * t + tx;
    let or0 = block_idx().x * t + ty;
    for j in (0..t).step_by(ROWS) {
        let or = or0 + j;
        if or < cols && oc < rows {
            output[(or * rows + oc) as usize] = tile[(tx * (t + 1) + ty + j) as usize];
        }
    }
}

/// `c` (m x n) = `a` (m x k) * `b` (k x n), row-major; m and n multiples of 128, k of 8
/// (m is the grid's height: `grid = (n / 128, m / 128)`).
///
/// Block tile 128 x 128, k-step 8, 256 threads as 16 x 16, each computing 8 x 8 outputs
/// in registers: rows `4ty..4ty+4` and `64+4ty..64+4ty+4`, columns `4tx..4tx+4` and
/// `64+4tx..64+4tx+4` of the block tile. That split keeps the 16-byte shared-memory reads
/// of a warp contiguous (no bank conflicts) and the 16-byte stores of `c` coalesced.
///
/// Per k-step each thread loads one 16-byte vector of `a` (row `t/2`, k `4(t%2)..`), stored
/// transposed in `a_tile[k][m]` (row length 132: the padding spreads the transposed stores
/// over all banks and keeps rows 16-byte aligned), and one of `b` (k row `t/32`, columns
/// `4(t%32)..`) stored as is in `b_tile[k][n]`.
#[kernel]
pub(crate) fn sgemm(n: u32, k: u32, a: &[f32], b: &[f32], c: &mut [f32]) {
    let a_tile = shared_array::<f32>(8 * 132);
    let b_tile = shared_array::<f32>(8 * 128);
    let t = thread_idx().x;
    let tx = t % 16;
    let ty = t / 16;
    let row0 = block_idx().y as usize * 128;
    let col0 = block_idx().x as usize * 128;
    let kk = k as usize;
    let nn = n as usize;

    // What this thread loads each k-step.
    let a_row = (t / 2) as usize;
    let a_k = (4 * (t % 2)) as usize;
    let b_k = (t / 32) as usize;
    let b_col = (4 * (t % 32)) as usize;

    let mut acc = [0.0f32; 64];
    let mut af = [0.0f32; 8];
    let mut bf = [0.0f32; 8];
    for k0 in (0..kk).step_by(8) {
        let (a0, a1, a2, a3) = vload4(a, ((row0 + a_row) * kk + k0 + a_k) / 4);
        a_tile[(a_k * 132) + a_row] = a0;
        a_tile[((a_k + 1) * 132) + a_row] = a1;
        a_tile[((a_k + 2) * 132) + a_row] = a2;
        a_tile[((a_k + 3) * 132) + a_row] = a3;
        let (b0, b1, b2, b3) = vload4(b, ((k0 + b_k) * nn + col0 + b_col) / 4);
        vstore4(b_tile, (b_k * 128 + b_col) / 4, (b0, b1, b2, b3));
        sync_threads();
        for kq in 0..8usize {
            let (x0, x1, x2, x3) = vload4(a_tile, (kq * 132 + 4 * ty as usize) / 4);
            let (x4, x5, x6, x7) = vload4(a_tile, (kq * 132 + 64 + 4 * ty as usize) / 4);
            let (y0, y1, y2, y3) = vload4(b_tile, (kq * 128 + 4 * tx as usize) / 4);
            let (y4, y5, y6, y7) = vload4(b_tile, (kq * 128 + 64 + 4 * tx as usize) / 4);
            af[0] = x0;
            af[1] = x1;
            af[2] = x2;
            af[3] = x3;
            af[4] = x4;
            af[5] = x5;
            af[6] = x6;
            af[7] = x7;
            bf[0] = y0;
            bf[1] = y1;
            bf[2] = y2;
            bf[3] = y3;
            bf[4] = y4;
            bf[5] = y5;
            bf[6] = y6;
            bf[7] = y7;
            for i in 0..8usize {
                for j in 0..8usize {
                    acc[i * 8 + j] += af[i] * bf[j];
                }
            }
        }
        sync_threads();
    }
    for i in 0..8usize {
        let r = if i < 4 {
            4 * ty as usize + i
        } else {
            64 + 4 * ty as usize + i - 4
        };
        let base = (row0 + r) * nn + col0;
        vstore4(
            c,
            (base + 4 * tx as usize) / 4,
            (acc[i * 8], acc[i * 8 + 1], acc[i * 8 + 2], acc[i * 8 + 3]),
        );
        vstore4(
            c,
            (base + 64 + 4 * tx as usize) / 4,
            (
                acc[i * 8 + 4],
                acc[i * 8 + 5],
                acc[i * 8 + 6],
                acc[i * 8 + 7],
            ),
        );
    }
}

/// `y[row] = softmax(x[row])` for rows of `32 * PER_LANE` floats, one warp per row (8 rows
/// per 256-thread block): each lane holds `PER_LANE` floats of its row (`PER_LANE / 4`
/// 16-byte vectors) in a register array, so the row is read once and written once, and
/// the maximum and the sum are warp butterflies, without shared memory or barriers. Lane
/// `l` holds vectors `l, l + 32, ..` of the row, so each vector load of the warp reads 512
/// contiguous bytes. (`PER_LANE` rather than a vector count: Rust array lengths cannot be
/// expressions of const generics.)
#[kernel]
pub(crate) fn softmax_rows<const PER_LANE: usize>(rows: u32, x: &[f32], y: &mut [f32]) {
    let warps = block_dim().x / 32;
    let row = (block_idx().x * warps + thread_idx().x / 32) as usize;
    // Warp-uniform: whole warps leave together, so the shuffles below see full warps.
    if row < rows as usize {
        let lane = lane_id() as usize;
        let first = row * 8 * PER_LANE + lane;
        let mut v = [0.0f32; PER_LANE];
        for j in 0..PER_LANE / 4 {
            let (a, b, c, d) = vload4(x, first + 32 * j);
            v[4 * j] = a;
            v[4 * j + 1] = b;
            v[4 * j + 2] = c;
            v[4 * j + 3] = d;
        }
        let mut m = v[0];
        for i in 1..PER_LANE {
            m = m.max(v[i]);
        }
        m = warp_max_f32(m);
        let mut s = 0.0f32;
        for i in 0..PER_LANE {
            v[i] = (v[i] - m).exp();
            s += v[i];
        }
        let inv = 1.0 / warp_sum_f32(s);
        for j in 0..PER_LANE / 4 {
            vstore4(
                y,
                first + 32 * j,
                (
                    v[4 * j] * inv,
                    v[4 * j + 1] * inv,
                    v[4 * j + 2] * inv,
                    v[4 * j + 3] * inv,
                ),
            );
        }
    }
}

// ============================================================================================
// Command line
// ============================================================================================

const USAGE: &str = "\
kernel_bench: eight cudajit kernels against the same algorithms built by nvcc

usage: kernel_bench [options]
  --cuda-cubin PATH   the nvcc-built cubin of benches/cuda/kernels.cu (also env
                      CUDAJIT_BENCH_CUBIN); without it only the cudajit side runs
  --markdown PATH     also write the result table (markdown) to PATH
  --runs N            timed runs per kernel and implementation (default 30, at least 20)
  --warmup N          untimed runs before them (default 5, at least 3)
  --only A,B,..       run only these: vector_add saxpy reduce scan histogram transpose
                      sgemm softmax
  --dump-cubins DIR   write the cudajit cubins there (for cuobjdump -sass)
  --transpose RxC     the measured transpose's size (default 4096x4096)
  --transpose-tile TxR  its tile side and block rows: 32x4 (default), 32x8, 32x16, 64x8,
                      64x16
  --cpu-check         no GPU needed: check the CPU references on small inputs and
                      compile every kernel for sm_90
  --help              this text";

pub(crate) const KERNEL_NAMES: [&str; 8] = [
    "vector_add",
    "saxpy",
    "reduce",
    "scan",
    "histogram",
    "transpose",
    "sgemm",
    "softmax",
];

pub(crate) struct Options {
    cpu_check: bool,
    cubin: Option<PathBuf>,
    markdown: Option<PathBuf>,
    runs: usize,
    warmup: usize,
    only: Vec<String>,
    dump_cubins: Option<PathBuf>,
    transpose: (usize, usize),
    transpose_tile: (u32, u32),
}

impl Options {
    /// Every kernel, 30 runs after 5 warm-ups, the nvcc cubin from `CUDAJIT_BENCH_CUBIN`.
    pub(crate) fn defaults() -> Options {
        Options {
            cpu_check: false,
            cubin: std::env::var_os("CUDAJIT_BENCH_CUBIN")
                .filter(|v| !v.is_empty())
                .map(PathBuf::from),
            markdown: None,
            runs: 30,
            warmup: 5,
            only: KERNEL_NAMES.iter().map(|s| s.to_string()).collect(),
            dump_cubins: None,
            transpose: (4096, 4096),
            transpose_tile: DEFAULT_TRANSPOSE_TILE,
        }
    }

    fn parse() -> Result<Option<Options>> {
        let mut options = Options::defaults();
        let mut args = std::env::args().skip(1);
        while let Some(arg) = args.next() {
            let mut value = |name: &str| {
                args.next()
                    .ok_or_else(|| format!("{name} needs a value; see --help"))
            };
            match arg.as_str() {
                "--help" | "-h" => {
                    println!("{USAGE}");
                    return Ok(None);
                }
                "--cpu-check" => options.cpu_check = true,
                "--cuda-cubin" => options.cubin = Some(value("--cuda-cubin")?.into()),
                "--markdown" => options.markdown = Some(value("--markdown")?.into()),
                "--dump-cubins" => options.dump_cubins = Some(value("--dump-cubins")?.into()),
                "--runs" | "--warmup" => {
                    let text = value(&arg)?;
                    let count: usize = text
                        .parse()
                        .map_err(|_| format!("{arg} takes a count, got `{text}`"))?;
                    let least = if arg == "--runs" { 20 } else { 3 };
                    if count < least {
                        return Err(format!(
                            "{arg} {count}: at least {least} (medians of fewer runs are noise)"
                        )
                        .into());
                    }
                    if arg == "--runs" {
                        options.runs = count;
                    } else {
                        options.warmup = count;
                    }
                }
                "--transpose-tile" => {
                    let text = value("--transpose-tile")?;
                    let shape = text
                        .split_once('x')
                        .and_then(|(t, r)| Some((t.parse().ok()?, r.parse().ok()?)))
                        .filter(|shape| TRANSPOSE_TILES.contains(shape));
                    options.transpose_tile = shape.ok_or_else(|| {
                        let known: Vec<String> = TRANSPOSE_TILES
                            .iter()
                            .map(|(t, r)| format!("{t}x{r}"))
                            .collect();
                        format!(
                            "--transpose-tile takes one of {}, got `{text}`",
                            known.join(", ")
                        )
                    })?;
                }
                "--transpose" => {
                    let text = value("--transpose")?;
                    let size = text
                        .split_once('x')
                        .and_then(|(r, c)| Some((r.parse().ok()?, c.parse().ok()?)))
                        .filter(|&(r, c): &(usize, usize)| r > 0 && c > 0);
                    options.transpose = size.ok_or_else(|| {
                        format!("--transpose takes ROWSxCOLS (e.g. 8192x8192), got `{text}`")
                    })?;
                }
                "--only" => {
                    let list = value("--only")?;
                    options.only = list.split(',').map(|s| s.trim().to_owned()).collect();
                    for name in &options.only {
                        if !KERNEL_NAMES.contains(&name.as_str()) {
                            return Err(format!(
                                "--only: unknown kernel `{name}`; known: {}",
                                KERNEL_NAMES.join(" ")
                            )
                            .into());
                        }
                    }
                }
                other => return Err(format!("unknown argument `{other}`; see --help").into()),
            }
        }
        Ok(Some(options))
    }

    fn wants(&self, name: &str) -> bool {
        self.only.iter().any(|n| n == name)
    }
}

fn main() -> std::process::ExitCode {
    match run() {
        Ok(code) => code,
        Err(error) => {
            eprintln!("kernel_bench: {error}");
            std::process::ExitCode::from(2)
        }
    }
}

fn run() -> Result<std::process::ExitCode> {
    let Some(options) = Options::parse()? else {
        return Ok(std::process::ExitCode::SUCCESS);
    };
    if options.cpu_check {
        cpu_check(&options)?;
        return Ok(std::process::ExitCode::SUCCESS);
    }
    let context = match cudajit::default_context() {
        Ok(context) => context,
        Err(error) => {
            println!(
                "kernel_bench: no GPU here ({error}); nothing to measure. `--cpu-check` runs \
                 the CPU references and compiles the kernels."
            );
            return Ok(std::process::ExitCode::SUCCESS);
        }
    };
    let env = Env::new(context, &options)?;
    let all_ok = benchmark(&env, &options)?;
    Ok(if all_ok {
        std::process::ExitCode::SUCCESS
    } else {
        std::process::ExitCode::FAILURE
    })
}

// ============================================================================================
// The measuring environment
// ============================================================================================

/// Events that record time (cudarc's default flags disable timing).
const TIMED: cudarc::driver::sys::CUevent_flags =
    cudarc::driver::sys::CUevent_flags::CU_EVENT_DEFAULT;

/// Bytes read before every timed run so that no kernel finds its data in L2 (50 MB on an
/// H100/H200) left there by the run before. Read, not written (as a memset would): a
/// written flush leaves dirty lines whose write-back would land inside the timed run.
const L2_FLUSH_BYTES: usize = 256 << 20;

/// The implementation a launch goes to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Side {
    Cudajit,
    Nvcc,
}

impl Side {
    fn label(self) -> &'static str {
        match self {
            Side::Cudajit => "cudajit",
            Side::Nvcc => "nvcc",
        }
    }
}

pub(crate) struct Env {
    context: Arc<CudaContext>,
    stream: Arc<CudaStream>,
    arch: Arch,
    sms: u32,
    nvcc: Option<Arc<CudaModule>>,
    runs: usize,
    warmup: usize,
    /// The measured transpose's rows and columns.
    transpose: (usize, usize),
    /// The transpose's tile side and block rows (one of `TRANSPOSE_TILES`).
    transpose_tile: (u32, u32),
    /// The L2 flush: a buffer read by `reduce_sum`, and its per-block sums.
    flush: RefCell<(CudaSlice<f32>, CudaSlice<f32>)>,
}

/// Medians (and spread) of one kernel's timed runs, milliseconds.
#[derive(Clone, Copy, Debug)]
struct Stats {
    median: f64,
    min: f64,
    max: f64,
}

#[derive(Clone, Copy, Debug)]
struct Times {
    cudajit: Stats,
    nvcc: Option<Stats>,
}

impl Env {
    pub(crate) fn new(context: Arc<CudaContext>, options: &Options) -> Result<Env> {
        let stream = context.default_stream();
        let (major, minor) = context.compute_capability()?;
        let sms =
            context.attribute(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)?;
        let nvcc = match &options.cubin {
            Some(path) => {
                let bytes = std::fs::read(path).map_err(|e| {
                    format!(
                        "reading the nvcc cubin {}: {e} (build it with `nvcc -O3 -arch=sm_90 \
                         -cubin -o kernels.cubin benches/cuda/kernels.cu`)",
                        path.display()
                    )
                })?;
                let module = context
                    .load_module(cudarc::nvrtc::Ptx::from_binary(bytes))
                    .map_err(|e| format!("loading the nvcc cubin {}: {e}", path.display()))?;
                Some(module)
            }
            None => None,
        };
        let flush = (
            stream.alloc_zeros::<f32>(L2_FLUSH_BYTES / 4)?,
            stream.alloc_zeros::<f32>(sms.max(1) as usize * 8)?,
        );
        Ok(Env {
            stream,
            arch: Arch::new(major as u32, minor as u32),
            sms: sms.max(1) as u32,
            nvcc,
            runs: options.runs,
            warmup: options.warmup,
            transpose: options.transpose,
            transpose_tile: options.transpose_tile,
            flush: RefCell::new(flush),
            context,
        })
    }

    /// The implementations this run compares.
    fn sides(&self) -> Vec<Side> {
        match self.nvcc {
            Some(_) => vec![Side::Cudajit, Side::Nvcc],
            None => vec![Side::Cudajit],
        }
    }

    /// The nvcc kernel `name`, when an nvcc cubin was given.
    fn nvcc_function(&self, name: &str) -> Result<Option<CudaFunction>> {
        match &self.nvcc {
            Some(module) => Ok(Some(module.load_function(name).map_err(|e| {
                format!("the nvcc cubin has no kernel `{name}` ({e}); rebuild it from benches/cuda/kernels.cu")
            })?)),
            None => Ok(None),
        }
    }

    /// Times `launch` on every side: `warmup` untimed runs each, then `runs` timed runs
    /// interleaved (cudajit, nvcc, cudajit, ..) so that clock and thermal drift hit both
    /// alike, each after an L2 flush, each between two CUDA events.
    fn time(&self, mut launch: impl FnMut(Side) -> Result<()>) -> Result<Times> {
        let sides = self.sides();
        for _ in 0..self.warmup {
            for &side in &sides {
                launch(side)?;
            }
        }
        let mut samples: Vec<Vec<f64>> = vec![Vec::with_capacity(self.runs); sides.len()];
        for _ in 0..self.runs {
            for (k, &side) in sides.iter().enumerate() {
                self.flush_l2()?;
                let start = self.stream.record_event(Some(TIMED))?;
                launch(side)?;
                let end = self.stream.record_event(Some(TIMED))?;
                end.synchronize()?;
                samples[k].push(f64::from(start.elapsed_ms(&end)?));
            }
        }
        let stats = |mut v: Vec<f64>| {
            v.sort_by(f64::total_cmp);
            Stats {
                median: median(&v),
                min: v[0],
                max: v[v.len() - 1],
            }
        };
        let mut samples = samples.into_iter();
        let cudajit = stats(samples.next().unwrap_or_default());
        let nvcc = samples.next().map(stats);
        Ok(Times { cudajit, nvcc })
    }

    /// Replaces L2's contents with clean lines of the flush buffer (see `L2_FLUSH_BYTES`).
    fn flush_l2(&self) -> Result<()> {
        let mut flush = self.flush.borrow_mut();
        let (buffer, sums) = &mut *flush;
        reduce_sum::launch(&self.stream, reduce_grid(self.sms), &*buffer, sums)?;
        Ok(())
    }

    /// Device-to-device copy bandwidth, GB/s (bytes read + written), with the method of
    /// `time`.
    fn copy_bandwidth(&self, bytes: usize) -> Result<f64> {
        let src = self.stream.alloc_zeros::<u8>(bytes)?;
        let mut dst = self.stream.alloc_zeros::<u8>(bytes)?;
        let mut samples = Vec::new();
        for run in 0..self.warmup + self.runs {
            self.flush_l2()?;
            let start = self.stream.record_event(Some(TIMED))?;
            self.stream.memcpy_dtod(&src, &mut dst)?;
            let end = self.stream.record_event(Some(TIMED))?;
            end.synchronize()?;
            if run >= self.warmup {
                samples.push(f64::from(start.elapsed_ms(&end)?));
            }
        }
        samples.sort_by(f64::total_cmp);
        Ok(2.0 * bytes as f64 / median(&samples) / 1e6)
    }
}

fn median(sorted: &[f64]) -> f64 {
    match sorted.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => sorted[n / 2],
        n => 0.5 * (sorted[n / 2 - 1] + sorted[n / 2]),
    }
}

/// cudajit's launch configuration as cudarc's, so both sides launch identically.
fn cu(config: LaunchConfig) -> cudarc::driver::LaunchConfig {
    cudarc::driver::LaunchConfig {
        grid_dim: (config.grid.x, config.grid.y, config.grid.z),
        block_dim: (config.block.x, config.block.y, config.block.z),
        shared_mem_bytes: config.shared_mem_bytes,
    }
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

// ============================================================================================
// Inputs and checks
// ============================================================================================

/// A deterministic pseudo-random stream (SplitMix64), so failures reproduce.
pub(crate) struct Random(u64);

impl Random {
    fn new(seed: u64) -> Self {
        Random(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ 0x5eed)
    }
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    /// Uniform in [lo, hi).
    pub(crate) fn f32s(seed: u64, n: usize, lo: f32, hi: f32) -> Vec<f32> {
        let mut r = Random::new(seed);
        (0..n)
            .map(|_| lo + (hi - lo) * ((r.next() >> 40) as f32 * (1.0 / (1u64 << 24) as f32)))
            .collect()
    }
    pub(crate) fn u32s(seed: u64, n: usize) -> Vec<u32> {
        let mut r = Random::new(seed);
        (0..n).map(|_| (r.next() >> 32) as u32).collect()
    }
}

/// An error naming the first mismatches, or `Ok` when `got` equals `expected`.
pub(crate) fn check_exact<T: PartialEq + std::fmt::Debug>(
    what: &str,
    got: &[T],
    expected: &[T],
) -> Result<()> {
    if got.len() != expected.len() {
        return Err(format!("{what}: {} values, expected {}", got.len(), expected.len()).into());
    }
    let bad: Vec<usize> = (0..got.len()).filter(|&i| got[i] != expected[i]).collect();
    match bad.first() {
        None => Ok(()),
        Some(&i) => Err(format!(
            "{what}: {} of {} values wrong; first at {i}: got {:?}, expected {:?}",
            bad.len(),
            got.len(),
            got[i],
            expected[i]
        )
        .into()),
    }
}

/// `Ok` when every `|got - expected| <= tolerance[i]`.
pub(crate) fn check_close(
    what: &str,
    got: &[f32],
    expected: &[f64],
    tolerance: &[f64],
) -> Result<()> {
    if got.len() != expected.len() {
        return Err(format!("{what}: {} values, expected {}", got.len(), expected.len()).into());
    }
    let mut bad = 0usize;
    let mut first = None;
    let mut worst = 0.0f64;
    for i in 0..got.len() {
        let error = (f64::from(got[i]) - expected[i]).abs();
        // A NaN result fails too (NaN compares false).
        let within = error <= tolerance[i];
        if !within {
            bad += 1;
            first.get_or_insert(i);
        }
        if error.is_finite() {
            worst = worst.max(error / tolerance[i].max(f64::MIN_POSITIVE));
        }
    }
    match first {
        None => Ok(()),
        Some(i) => Err(format!(
            "{what}: {bad} of {} values outside tolerance; first at {i}: got {}, expected {} \
             (tolerance {:e}); worst error/tolerance {worst:.2}",
            got.len(),
            got[i],
            expected[i],
            tolerance[i]
        )
        .into()),
    }
}

fn rel_tolerance(expected: &[f64], rel: f64, abs: f64) -> Vec<f64> {
    expected.iter().map(|e| rel * e.abs() + abs).collect()
}

// ============================================================================================
// CPU references
// ============================================================================================

pub(crate) fn saxpy_ref(alpha: f32, x: &[f32], y: &[f32]) -> (Vec<f64>, Vec<f64>) {
    let exact: Vec<f64> = x
        .iter()
        .zip(y)
        .map(|(&x, &y)| f64::from(alpha) * f64::from(x) + f64::from(y))
        .collect();
    // One rounding with FMA, two without: allow two half-ulps of the operands' magnitude.
    let tolerance = x
        .iter()
        .zip(y)
        .map(|(&x, &y)| 1.2e-7 * (f64::from(alpha * x).abs() + f64::from(y).abs()) + 1e-30)
        .collect();
    (exact, tolerance)
}

/// The inclusive prefix sum with `u32` wrapping, as the kernels compute it.
pub(crate) fn scan_ref(x: &[u32]) -> Vec<u32> {
    let mut sum = 0u32;
    x.iter()
        .map(|&v| {
            sum = sum.wrapping_add(v);
            sum
        })
        .collect()
}

/// Counts of the bytes packed little-endian in `words`.
pub(crate) fn histogram_ref(words: &[u32]) -> Vec<u32> {
    let mut bins = vec![0u32; 256];
    for &w in words {
        for byte in w.to_le_bytes() {
            bins[usize::from(byte)] += 1;
        }
    }
    bins
}

pub(crate) fn transpose_ref(rows: usize, cols: usize, input: &[f32]) -> Vec<f32> {
    let mut out = vec![0.0; rows * cols];
    for r in 0..rows {
        for c in 0..cols {
            out[c * rows + r] = input[r * cols + c];
        }
    }
    out
}

/// Entry (i, j) of `a * b` (row-major, inner dimension k) in f64, and the sum of the
/// magnitudes of its terms, which bounds the f32 rounding error.
pub(crate) fn sgemm_entry(
    a: &[f32],
    b: &[f32],
    n: usize,
    k: usize,
    i: usize,
    j: usize,
) -> (f64, f64) {
    let mut dot = 0.0f64;
    let mut magnitude = 0.0f64;
    for p in 0..k {
        let term = f64::from(a[i * k + p]) * f64::from(b[p * n + j]);
        dot += term;
        magnitude += term.abs();
    }
    (dot, magnitude)
}

/// The (i, j) entries an SGEMM check compares: all of them for small products; for large
/// ones the four corners, the first and last row and column of a few block tiles, and
/// pseudo-random entries (the full CPU product of 4096^3 would take minutes).
pub(crate) fn sgemm_samples(m: usize, n: usize, full: bool) -> Vec<(usize, usize)> {
    if full {
        return (0..m).flat_map(|i| (0..n).map(move |j| (i, j))).collect();
    }
    let mut samples = vec![(0, 0), (0, n - 1), (m - 1, 0), (m - 1, n - 1)];
    for t in [0, 127, 128, 255, 300] {
        if t < m.min(n) {
            for u in 0..128.min(n) {
                samples.push((t, u));
                samples.push((u.min(m - 1), t));
            }
        }
    }
    let mut r = Random::new(11);
    for _ in 0..4096 {
        samples.push((
            (r.next() % m as u64) as usize,
            (r.next() % n as u64) as usize,
        ));
    }
    samples
}

pub(crate) fn softmax_ref(rows: usize, cols: usize, x: &[f32]) -> Vec<f64> {
    let mut out = Vec::with_capacity(rows * cols);
    for row in x.chunks(cols).take(rows) {
        let max = row
            .iter()
            .fold(f64::NEG_INFINITY, |m, &v| m.max(f64::from(v)));
        let exps: Vec<f64> = row.iter().map(|&v| (f64::from(v) - max).exp()).collect();
        let sum: f64 = exps.iter().sum();
        out.extend(exps.iter().map(|e| e / sum));
    }
    out
}

// ============================================================================================
// One case per kernel: inputs, both implementations checked against the CPU, then timed
// ============================================================================================

fn vector_add_case(env: &Env, n: usize, time: bool) -> Result<Option<Times>> {
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

fn saxpy_case(env: &Env, n: usize, time: bool) -> Result<Option<Times>> {
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

fn reduce_case(env: &Env, n: usize, time: bool) -> Result<Option<Times>> {
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

fn scan_case(env: &Env, n: usize, time: bool) -> Result<Option<Times>> {
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
fn histogram_case(env: &Env, words: usize, mask: u32, time: bool) -> Result<Option<Times>> {
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

fn transpose_case(env: &Env, rows: usize, cols: usize, time: bool) -> Result<Option<Times>> {
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

fn sgemm_case(
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
fn softmax_case(env: &Env, rows: usize, cols: usize, time: bool) -> Result<Option<Times>> {
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

// ============================================================================================
// The benchmark: checks at awkward sizes, then the measured size, then the tables
// ============================================================================================

/// What a kernel's time is measured against.
#[derive(Clone, Copy, Debug)]
enum Work {
    /// Bytes the algorithm must read and write: a bandwidth-bound kernel.
    Bytes(f64),
    /// Floating-point operations: a compute-bound kernel.
    Flops(f64),
}

struct Row {
    name: &'static str,
    size: String,
    launch: String,
    work: Work,
    outcome: std::result::Result<Times, String>,
}

const RATIO_TARGET: f64 = 1.05;
const BANDWIDTH_TARGET: f64 = 0.90;

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

/// Every kernel compiled for `arch` (no GPU needed); the entry names and cubin sizes.
pub(crate) fn compile_all(arch: Arch) -> Result<Vec<(String, usize)>> {
    let mut compiled = Vec::new();
    for (kernel, spec, _) in kernel_list() {
        let cubin = kernel
            .compile_for_arch_with(arch, &spec)
            .map_err(|e| format!("compiling {}: {e}", kernel.name()))?;
        compiled.push((cubin.entry.clone(), cubin.cubin.len()));
    }
    Ok(compiled)
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
fn benchmark(env: &Env, options: &Options) -> Result<bool> {
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
    let checks = vector_add::KERNEL.options().bounds_checks;
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

fn results_table(rows: &[Row], copy_gbs: f64) -> String {
    let mut t = String::from(
        "| kernel | size | grid x block | cudajit ms | nvcc ms | cudajit / nvcc | cudajit throughput | nvcc throughput | ratio ≤ 1.05 | ≥ 90 % of copy |\n\
         | --- | --- | --- | ---: | ---: | ---: | ---: | ---: | --- | --- |\n",
    );
    let throughput = |work: Work, ms: f64| match work {
        Work::Bytes(bytes) => {
            let gbs = bytes / ms / 1e6;
            format!("{gbs:.0} GB/s ({:.1} %)", 100.0 * gbs / copy_gbs)
        }
        Work::Flops(flops) => format!("{:.1} TFLOP/s", flops / ms / 1e9),
    };
    for row in rows {
        match &row.outcome {
            Err(error) => {
                let _ = writeln!(
                    t,
                    "| {} | {} | {} | FAILED: {} | | | | | | |",
                    row.name,
                    row.size,
                    row.launch,
                    error.replace('|', "/")
                );
            }
            Ok(times) => {
                let ours = times.cudajit.median;
                let (nvcc, ratio, nvcc_tp, ratio_ok) = match times.nvcc {
                    Some(theirs) => {
                        let ratio = ours / theirs.median;
                        (
                            format!("{:.4}", theirs.median),
                            format!("**{ratio:.3}**"),
                            throughput(row.work, theirs.median),
                            if ratio <= RATIO_TARGET {
                                "yes"
                            } else {
                                "**no**"
                            }
                            .to_owned(),
                        )
                    }
                    None => ("—".into(), "—".into(), "—".into(), "—".into()),
                };
                let bandwidth_ok = match row.work {
                    Work::Bytes(bytes) => {
                        if bytes / ours / 1e6 >= BANDWIDTH_TARGET * copy_gbs {
                            "yes"
                        } else {
                            "**no**"
                        }
                    }
                    Work::Flops(_) => "n/a (compute-bound)",
                };
                let _ = writeln!(
                    t,
                    "| {} | {} | {} | {:.4} | {nvcc} | {ratio} | {} | {nvcc_tp} | {ratio_ok} | {bandwidth_ok} |",
                    row.name,
                    row.size,
                    row.launch,
                    ours,
                    throughput(row.work, ours)
                );
            }
        }
    }
    let _ = writeln!(t, "\nSpread (min–max ms over the timed runs):\n");
    for row in rows {
        if let Ok(times) = &row.outcome {
            let spread = |s: Stats| format!("{:.4}–{:.4}", s.min, s.max);
            let _ = writeln!(
                t,
                "- {}: cudajit {}{}",
                row.name,
                spread(times.cudajit),
                times
                    .nvcc
                    .map(|s| format!(", nvcc {}", spread(s)))
                    .unwrap_or_default()
            );
        }
    }
    t
}

/// Every kernel with its specialisation and its twin's name in kernels.cu.
fn kernel_list() -> Vec<(&'static Kernel, Specialization, &'static str)> {
    let plain = Specialization::default;
    let usize_const = |name: &str, value: u64| {
        (
            name.to_owned(),
            Literal::Int {
                bits: value,
                ty: Scalar::Usize,
            },
        )
    };
    vec![
        (&vector_add::KERNEL, plain(), "vector_add"),
        (&saxpy::KERNEL, plain(), "saxpy"),
        (&reduce_sum::KERNEL, plain(), "reduce_sum"),
        (&scan_tile_sums::KERNEL, plain(), "scan_tile_sums"),
        (&scan_tiles::KERNEL, plain(), "scan_tiles"),
        (&histogram256::KERNEL, plain(), "histogram256"),
        (
            &transpose_tiled::KERNEL,
            Specialization {
                types: vec![],
                consts: vec![usize_const("TILE", 32), usize_const("ROWS", 4)],
            },
            // The measured shape by default (`DEFAULT_TRANSPOSE_TILE`).
            "transpose_tiled_32x4",
        ),
        (&sgemm::KERNEL, plain(), "sgemm"),
        (
            &softmax_rows::KERNEL,
            Specialization {
                types: vec![],
                consts: vec![usize_const("PER_LANE", 32)],
            },
            "softmax_rows_32",
        ),
    ]
}

/// Registers, local memory (spills) and static shared memory of both implementations of
/// every kernel, as the driver reports them; with `--dump-cubins`, the cudajit cubins.
fn resources_table(env: &Env, options: &Options) -> Result<String> {
    let mut t = String::from(
        "\nResources per thread / block (driver attributes): registers, local memory bytes \
         (spills), static shared bytes.\n\n\
         | kernel | cudajit regs | cudajit local B | cudajit shared B | nvcc regs | nvcc local B | nvcc shared B |\n\
         | --- | ---: | ---: | ---: | ---: | ---: | ---: |\n",
    );
    let attributes = |f: &CudaFunction| -> Result<[i32; 3]> {
        Ok([
            f.get_attribute(CUfunction_attribute::CU_FUNC_ATTRIBUTE_NUM_REGS)?,
            f.get_attribute(CUfunction_attribute::CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES)?,
            f.get_attribute(CUfunction_attribute::CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES)?,
        ])
    };
    for (kernel, spec, twin) in kernel_list() {
        let compiled = kernel.compile_for_arch_with(env.arch, &spec)?;
        if let Some(dir) = &options.dump_cubins {
            dump_cubin(dir, &compiled.entry, &compiled.cubin)?;
        }
        let module = env
            .context
            .load_module(cudarc::nvrtc::Ptx::from_binary(compiled.cubin.to_vec()))?;
        let [r, l, s] = attributes(&module.load_function(&compiled.entry)?)?;
        let theirs = match env.nvcc_function(twin) {
            Ok(Some(f)) => {
                let [r, l, s] = attributes(&f)?;
                format!("{r} | {l} | {s}")
            }
            Ok(None) => "— | — | —".to_owned(),
            Err(e) => format!("{e} | | "),
        };
        let _ = writeln!(t, "| {twin} | {r} | {l} | {s} | {theirs} |");
    }
    Ok(t)
}

fn dump_cubin(dir: &std::path::Path, entry: &str, cubin: &[u8]) -> Result<()> {
    std::fs::create_dir_all(dir)
        .map_err(|e| format!("--dump-cubins: creating {}: {e}", dir.display()))?;
    let path = dir.join(format!("{entry}.cubin"));
    std::fs::write(&path, cubin)
        .map_err(|e| format!("--dump-cubins: writing {}: {e}", path.display()))?;
    Ok(())
}

// ============================================================================================
// --cpu-check: what can be checked without a GPU
// ============================================================================================

fn cpu_check(options: &Options) -> Result<()> {
    println!("CPU references on small inputs:");
    let expect = |ok: bool, what: &str| -> Result<()> {
        if ok {
            println!("  ok   {what}");
            Ok(())
        } else {
            Err(format!("CPU reference check failed: {what}").into())
        }
    };

    let (exact, tolerance) = saxpy_ref(2.0, &[1.0, -0.5, 3.0], &[0.5, 0.5, 1.0]);
    expect(
        exact == [2.5, -0.5, 7.0] && tolerance.iter().all(|&t| t > 0.0 && t < 1e-5),
        "saxpy_ref: values and tolerances",
    )?;

    let x = Random::f32s(1, 1000, 0.0, 1.0);
    expect(
        x.iter().all(|&v| (0.0..1.0).contains(&v))
            && (x.iter().sum::<f32>() / 1000.0 - 0.5).abs() < 0.05,
        "Random::f32s: uniform in [0, 1)",
    )?;

    let ones = vec![1u32; 10_000];
    let scan = scan_ref(&ones);
    expect(
        scan.iter().enumerate().all(|(i, &v)| v as usize == i + 1),
        "scan_ref of ones is 1..=n",
    )?;
    let words = Random::u32s(2, 9999);
    let scan = scan_ref(&words);
    let total = words.iter().fold(0u32, |s, &w| s.wrapping_add(w));
    expect(
        scan.last() == Some(&total),
        "scan_ref wraps and ends at the wrapping sum",
    )?;

    let bins = histogram_ref(&words);
    expect(
        bins.iter().map(|&b| b as usize).sum::<usize>() == 4 * words.len(),
        "histogram_ref counts every byte",
    )?;
    expect(
        histogram_ref(&[0x0102_0304])[1..=4] == [1, 1, 1, 1],
        "histogram_ref reads bytes little-endian",
    )?;

    let m = Random::f32s(3, 33 * 65, -1.0, 1.0);
    expect(
        transpose_ref(65, 33, &transpose_ref(33, 65, &m)) == m,
        "transpose_ref twice is the identity",
    )?;

    let (mm, nn, kk) = (8, 12, 8);
    let a = Random::f32s(4, mm * kk, -1.0, 1.0);
    let identity: Vec<f32> = (0..kk * kk)
        .map(|i| if i / kk == i % kk { 1.0 } else { 0.0 })
        .collect();
    let a_times_identity = (0..mm).all(|i| {
        (0..kk).all(|j| sgemm_entry(&a, &identity, kk, kk, i, j).0 == f64::from(a[i * kk + j]))
    });
    expect(a_times_identity, "sgemm_entry: A x I = A")?;
    let samples = sgemm_samples(4096, 4096, false);
    expect(
        samples.len() > 4096 && samples.iter().all(|&(i, j)| i < 4096 && j < 4096),
        "sgemm_samples stay inside the matrix",
    )?;
    expect(
        sgemm_samples(mm, nn, true).len() == mm * nn,
        "sgemm_samples(full) is every entry",
    )?;

    let x = Random::f32s(5, 4 * 1024, -8.0, 8.0);
    let y = softmax_ref(4, 1024, &x);
    let sums_to_one = y
        .chunks(1024)
        .all(|row| (row.iter().sum::<f64>() - 1.0).abs() < 1e-12);
    expect(sums_to_one, "softmax_ref rows sum to 1")?;

    println!("\nEvery kernel compiled for sm_90 (libNVVM -> nvJitLink):");
    let started = Instant::now();
    for (entry, bytes) in compile_all(Arch::SM_90)? {
        println!("  ok   {entry:<24} cubin {bytes:>6} bytes");
    }
    println!(
        "  ({:.0} ms, compiles and cache hits)",
        started.elapsed().as_secs_f64() * 1e3
    );
    if let Some(dir) = &options.dump_cubins {
        for (kernel, spec, _) in kernel_list() {
            let compiled = kernel.compile_for_arch_with(Arch::SM_90, &spec)?;
            dump_cubin(dir, &compiled.entry, &compiled.cubin)?;
        }
        println!("  cubins written to {}", dir.display());
    }
    println!("\ncpu-check passed");
    Ok(())
}
