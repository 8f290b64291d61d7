//! The GEMM kernels in cudajit's kernel language, on the tensor cores through
//! `cudajit::tensor` (mma.sync, ldmatrix, cp.async): Ampere-style, and run on the H200.
//!
//! `gemm_bf16_tn`: C (M×N, f32, row-major) = A (M×K, bf16, row-major) · B, with B given
//! column by column (`b[n * K + k]`, "TN"). `gemm_bf16_nn`: the same with B row-major
//! (`b[k * N + n]`), loaded through `ldmatrix.trans`.
//!
//! Block tile 128×256, k-step 64, 256 threads: 8 warps in 2 (M) × 4 (N), each computing a
//! 64×64 tile as 4×8 MMAs of m16n8k16 (128 f32 accumulators per lane, in registers): per
//! 16-wide k step a warp reads 8 `ldmatrix.x4` (4 KiB) for 32 MMAs, which keeps shared
//! memory's bandwidth at the tensor cores' pace. Tiles move from global to shared memory
//! with `cp.async` in a 3-stage pipeline (two k-steps in flight while one is computed);
//! the block's 144 KiB of shared memory are three stages of A (128 rows × 128 bytes) and B
//! (256 × 128 bytes).
//!
//! Shared rows are XOR-swizzled by 16-byte chunk so that `ldmatrix`'s eight row reads of
//! one matrix hit eight different bank groups: a 128-byte row `r` keeps chunk `c` at chunk
//! `c ^ (r % 8)` (the 128-byte swizzle of CUTLASS and TMA).
//!
//! M must be a multiple of 128, N of 256 and K of 64 (the benchmark checks).

use cudajit::bf16;
use cudajit::prelude::*;
use cudajit::tensor::copy_async::{cp_async_16, cp_async_commit, cp_async_wait_group};
use cudajit::tensor::ldmatrix::ldmatrix_x4;
use cudajit::tensor::mma::{mma_bf16, ABf16, AccF32, BBf16};

/// Words (u32) of one stage of shared memory: A (128 rows × 128 bytes) then B (128 × 128).
pub const STAGE_WORDS: usize = 8192;
/// Pipeline stages (k-tiles in shared memory at once).
pub const STAGES: usize = 3;
/// Dynamic shared memory of a block: 96 KiB (two blocks fit an SM).
pub const SHARED_BYTES: u32 = (STAGES * STAGE_WORDS * 4) as u32;
/// Threads per block: 4 warps.
pub const THREADS: u32 = 128;
/// The block tile.
pub const TILE_M: usize = 128;
pub const TILE_N: usize = 128;
pub const TILE_K: usize = 64;

/// Issues the copies of k-tile `tile` of A (128 rows) and of B stored n-major (128 rows)
/// into stage `stage`: 16 bytes a copy, eight of A and eight of B per thread.
#[device]
#[allow(clippy::too_many_arguments)]
fn load_tile_tn(
    smem: &mut [u32],
    a: &[bf16],
    b: &[bf16],
    stage: usize,
    tile: usize,
    row0: usize,
    col0: usize,
    kk: usize,
    t: usize,
) {
    let base = stage * 8192;
    let k = tile * 64;
    for i in 0..8usize {
        let q = t + 128 * i;
        let r = q / 8;
        let ch = q % 8;
        let word = base + r * 32 + (ch ^ (r % 8)) * 4;
        cp_async_16(
            shared_address(&smem[word]),
            global_address(&a[(row0 + r) * kk + k + ch * 8]),
        );
    }
    for i in 0..8usize {
        let q = t + 128 * i;
        let r = q / 8;
        let ch = q % 8;
        let word = base + 4096 + r * 32 + (ch ^ (r % 8)) * 4;
        cp_async_16(
            shared_address(&smem[word]),
            global_address(&b[(col0 + r) * kk + k + ch * 8]),
        );
    }
}

/// The output tile (block row, block column) of launch block `(bx, by)` in a `gx × gy`
/// grid: consecutive blocks take the 8 block rows of a band, then the next block column.
#[device]
fn band_order(bx: usize, by: usize, gx: usize, gy: usize) -> (usize, usize) {
    let id = by * gx + bx;
    let band = id / (8 * gx);
    let first = band * 8;
    let rows = if gy - first < 8 { gy - first } else { 8 };
    let within = id - band * 8 * gx;
    (first + within % rows, within / rows)
}

/// C = A · B with B stored column by column (`b[n * K + k]`).
#[kernel]
pub fn gemm_bf16_tn(_m: u32, n: u32, k: u32, a: &[bf16], b: &[bf16], c: &mut [f32]) {
    let smem = dynamic_shared::<u32>();
    let t = thread_idx().x as usize;
    let lane = t % 32;
    let warp = t / 32;
    // Warps in 2 (M) x 2 (N), each a 64 x 64 tile: 4 x 8 MMAs of 16 x 8.
    let wm = warp / 2;
    let wn = warp % 2;
    // Blocks walk the output in bands of 8 block rows, column by column within a band, so
    // the blocks running at once share their A rows and B columns in L2.
    let (tile_m, tile_n) = band_order(
        block_idx().x as usize,
        block_idx().y as usize,
        grid_dim().x as usize,
        grid_dim().y as usize,
    );
    let row0 = tile_m * 128;
    let col0 = tile_n * 128;
    let kk = k as usize;
    let nn = n as usize;
    let tiles = kk / 64;

    // Two k-tiles in flight before the first is used.
    for s in 0..2usize {
        if s < tiles {
            load_tile_tn(smem, a, b, s, s, row0, col0, kk, t);
        }
        cp_async_commit();
    }
    let mut acc = [0.0f32; 128];
    let mut fa = [0u32; 16];
    let mut fb = [0u32; 16];
    for kt in 0..tiles {
        // k-tile `kt` has landed (at most the one after it is still in flight) ...
        cp_async_wait_group::<1>();
        // ... for every thread, and every thread is done with the stage refilled next.
        sync_threads();
        if kt + 2 < tiles {
            load_tile_tn(smem, a, b, (kt + 2) % 3, kt + 2, row0, col0, kk, t);
        }
        cp_async_commit();
        let base = (kt % 3) * 8192;
        for ks in 0..4usize {
            // A: lane l gives row l % 16 of each 16-row tile, 16-byte chunk 2 ks + l / 16.
            for i in 0..4usize {
                let r = wm * 64 + i * 16 + lane % 16;
                let ch = ks * 2 + lane / 16;
                let (x0, x1, x2, x3) =
                    ldmatrix_x4(shared_address(&smem[base + r * 32 + (ch ^ (r % 8)) * 4]));
                fa[4 * i] = x0;
                fa[4 * i + 1] = x1;
                fa[4 * i + 2] = x2;
                fa[4 * i + 3] = x3;
            }
            // B: matrix l / 8 of each pair of 8-column tiles: column 8 ((l / 8) / 2) + l % 8,
            // chunk 2 ks + (l / 8) % 2; registers b0, b1 of the first tile, then the second.
            for j2 in 0..4usize {
                let mi = lane / 8;
                let r = wn * 64 + j2 * 16 + (mi / 2) * 8 + lane % 8;
                let ch = ks * 2 + mi % 2;
                let (y0, y1, y2, y3) = ldmatrix_x4(shared_address(
                    &smem[base + 4096 + r * 32 + (ch ^ (r % 8)) * 4],
                ));
                fb[4 * j2] = y0;
                fb[4 * j2 + 1] = y1;
                fb[4 * j2 + 2] = y2;
                fb[4 * j2 + 3] = y3;
            }
            for i in 0..4usize {
                for j in 0..8usize {
                    let at = (i * 8 + j) * 4;
                    let d = mma_bf16(
                        ABf16 {
                            a0: fa[4 * i],
                            a1: fa[4 * i + 1],
                            a2: fa[4 * i + 2],
                            a3: fa[4 * i + 3],
                        },
                        BBf16 {
                            b0: fb[2 * j],
                            b1: fb[2 * j + 1],
                        },
                        AccF32 {
                            c0: acc[at],
                            c1: acc[at + 1],
                            c2: acc[at + 2],
                            c3: acc[at + 3],
                        },
                    );
                    acc[at] = d.c0;
                    acc[at + 1] = d.c1;
                    acc[at + 2] = d.c2;
                    acc[at + 3] = d.c3;
                }
            }
        }
    }
    // Lane (g, t) holds rows g and g + 8, columns 2t and 2t + 1 of each 16×8 tile.
    let g = lane / 4;
    let tq = lane % 4;
    for i in 0..4usize {
        for j in 0..8usize {
            let at = (i * 8 + j) * 4;
            let r = row0 + wm * 64 + i * 16 + g;
            let col = col0 + wn * 64 + j * 8 + 2 * tq;
            vstore2(c, (r * nn + col) / 2, (acc[at], acc[at + 1]));
            vstore2(c, ((r + 8) * nn + col) / 2, (acc[at + 2], acc[at + 3]));
        }
    }
}
