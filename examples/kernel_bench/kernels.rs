//! The eight kernels in cudajit's kernel language (see the table in `main.rs`), each with
//! a twin of the same name in benches/cuda/kernels.cu, and the list of every kernel with
//! the specialisation that is measured.
//!
//! Every `#[kernel]` and `#[device]` function below stands on the line it had when the
//! benchmark was one file (`examples/kernel_bench.rs`): a kernel's captured source records
//! the line and column of its tokens, that text is hashed into the kernel's cache key, and
//! the GPU results are compared with runs of that source. So this header is exactly 48
//! lines long, and the first kernel's doc comment starts on line 49; keep it so (move a
//! kernel only knowing that its captured source, and so its cache key, changes).
//!
//! | kernel | its twin(s) in kernels.cu |
//! | --- | --- |
//! | `vector_add` | `vector_add` |
//! | `saxpy` | `saxpy` |
//! | `reduce_sum` (launched twice) | `reduce_sum` |
//! | `scan_tile_sums`, `scan_tiles` | `scan_tile_sums`, `scan_tiles` |
//! | `histogram256` | `histogram256` |
//! | `transpose_tiled<TILE, ROWS>` | `transpose_tiled_<TILE>x<ROWS>` |
//! | `sgemm` | `sgemm` |
//! | `softmax_rows<PER_LANE>` | `softmax_rows_<PER_LANE>` |
//!
//! The device functions (`warp_sum_f32`, `warp_max_f32`, `warp_sum_u32`,
//! `element_or_zero`) are the kernels' helpers; nothing else calls them.
//!
//! `kernel_list` names every kernel with the specialisation the benchmark compiles and
//! measures and its twin, and `compile_all` compiles them all for one architecture (no
//! GPU needed: `--cpu-check` and `tests/kernels.rs` use it).
//!
//! `tests/sim_kernels.rs` runs every kernel on the CPU simulator and `tests/kernels.rs` on a
//! GPU, both through this module.
//!
//! Line positions, for reference: `vector_add` 51, `saxpy` 67, `warp_sum_f32` 93,
//! `warp_max_f32` 103, `warp_sum_u32` 113, `reduce_sum` 128, `scan_tile_sums` 174,
//! `element_or_zero` 215, `scan_tiles` 238, `histogram256` 352, `transpose_tiled` 417,
//! `sgemm` 459, `softmax_rows` 550 (the line of each `#[kernel]` or `#[device]`).

use cudajit::core::ir::Literal;
use cudajit::core::Scalar;
use cudajit::prelude::*;
use cudajit::{Arch, Kernel, Specialization};

use super::Result;

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

/// Every kernel with its specialisation and its twin's name in kernels.cu.
pub(crate) fn kernel_list() -> Vec<(&'static Kernel, Specialization, &'static str)> {
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
                structs: Vec::new(),
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
                structs: Vec::new(),
                consts: vec![usize_const("PER_LANE", 32)],
            },
            "softmax_rows_32",
        ),
    ]
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
