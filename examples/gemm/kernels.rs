//! The GEMM kernels in cudajit's kernel language, on the tensor cores through
//! `cudajit::tensor` (mma.sync, ldmatrix, cp.async): Ampere-style, and run on the H200.
//!
//! C (M×N, row-major) = A (M×K, bf16, row-major) · B, f32 accumulate. `B_ROW_MAJOR` picks
//! B's layout: `false` is B given column by column (`b[n * K + k]`, "TN", the layout both
//! operands of `mma` want), `true` is B row-major (`b[k * N + n]`, "NN"), stored k-major in
//! shared memory and loaded through `ldmatrix.trans`. [`gemm_bf16`] writes C in f32,
//! [`gemm_bf16_to_bf16`] rounds it to bf16 (`cvt.rn.bf16x2`, two values per 32-bit store).
//! `benches/cuda/gemm_mma.cu` is the same algorithm in CUDA C++, instruction for
//! instruction, for the cudajit/nvcc comparison.
//!
//! Block tile 128×128, k-tile 64, 128 threads: 4 warps in 2 (M) × 2 (N), each computing a
//! 64×64 tile as 4×8 MMAs of m16n8k16 (128 f32 accumulators per lane, in registers): per
//! 16-wide k step a warp reads 8 `ldmatrix.x4` (4 KiB) for 32 MMAs, which keeps shared
//! memory's bandwidth at the tensor cores' pace. Tiles move from global to shared memory
//! with `cp.async` in a 3-stage pipeline (two k-tiles in flight while one is computed):
//! 96 KiB of shared memory, so two blocks fit an SM and one's barrier overlaps the other's
//! MMAs. The shared layouts and their swizzle are in `tiles.rs`.
//!
//! M must be a multiple of 128, N of 128 and K of 64 (the benchmark checks).

use cudajit::bf16;
use cudajit::prelude::*;
use cudajit::tensor::copy_async::{cp_async_commit, cp_async_wait_stage};
use cudajit::tensor::ldmatrix::{ldmatrix_x4, ldmatrix_x4_trans};
use cudajit::tensor::mma::{mma_bf16, ABf16, AccF32, BBf16};
use cudajit::tensor::pack::pack_bf16x2;

use super::tiles::{a_fragment_word, b_fragment_word, band_order, load_stage, STAGE_WORDS};

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

/// The four registers of `ldmatrix.x4` for B: plain for n-major rows (TN), `.trans` for
/// k-major rows (NN), which delivers each 8×8 matrix transposed, as the B fragment wants.
#[device]
fn ldmatrix_b<const B_ROW_MAJOR: bool>(address: u32) -> (u32, u32, u32, u32) {
    if B_ROW_MAJOR {
        let (y0, y1, y2, y3) = ldmatrix_x4_trans(address);
        return (y0, y1, y2, y3);
    }
    let (y0, y1, y2, y3) = ldmatrix_x4(address);
    (y0, y1, y2, y3)
}

/// C = A · B in f32. B column by column (`b[n * K + k]`) or, with `B_ROW_MAJOR`, row by
/// row (`b[k * N + n]`).
#[kernel]
pub fn gemm_bf16<const B_ROW_MAJOR: bool>(
    _m: u32,
    n: u32,
    k: u32,
    a: &[bf16],
    b: &[bf16],
    c: &mut [f32],
) {
    let smem = dynamic_shared::<u32>();
    let t = thread_idx().x as usize;
    let lane = t % 32;
    let warp = t / 32;
    // Warps in 2 (M) x 2 (N), each a 64 x 64 tile: 4 x 8 MMAs of 16 x 8.
    let wm = warp / 2;
    let wn = warp % 2;
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
            load_stage::<B_ROW_MAJOR>(smem, a, b, s, s, row0, col0, kk, nn, t);
        }
        cp_async_commit();
    }
    let mut acc = [0.0f32; 128];
    let mut fa = [0u32; 16];
    let mut fb = [0u32; 16];
    for kt in 0..tiles {
        // k-tile `kt` has landed (at most the one after it is still in flight) ...
        cp_async_wait_stage::<3>();
        // ... for every thread, and every thread is done with the stage refilled next.
        sync_threads();
        if kt + 2 < tiles {
            load_stage::<B_ROW_MAJOR>(smem, a, b, (kt + 2) % 3, kt + 2, row0, col0, kk, nn, t);
        }
        cp_async_commit();
        let base = (kt % 3) * STAGE_WORDS;
        for ks in 0..4usize {
            for i in 0..4usize {
                let (x0, x1, x2, x3) = ldmatrix_x4(shared_address(
                    &smem[a_fragment_word(base, wm, i, ks, lane)],
                ));
                fa[4 * i] = x0;
                fa[4 * i + 1] = x1;
                fa[4 * i + 2] = x2;
                fa[4 * i + 3] = x3;
            }
            // Registers b0, b1 of 8-column tile 2 j2, then of tile 2 j2 + 1.
            for j2 in 0..4usize {
                let word = b_fragment_word::<B_ROW_MAJOR>(base, wn, j2, ks, lane);
                let (y0, y1, y2, y3) = ldmatrix_b::<B_ROW_MAJOR>(shared_address(&smem[word]));
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
    // Lane (g, t) holds rows g and g + 8, columns 2t and 2t + 1 of each 16×8 tile: one
    // 8-byte store per row.
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

/// C = A · B rounded to bf16 (to nearest even), B as in [`gemm_bf16`]. The main loop is
/// `gemm_bf16`'s: the 128 accumulators live in registers only as a kernel's local array,
/// which a `#[device]` function cannot take, so the loop is written out again.
#[kernel]
pub fn gemm_bf16_to_bf16<const B_ROW_MAJOR: bool>(
    _m: u32,
    n: u32,
    k: u32,
    a: &[bf16],
    b: &[bf16],
    c: &mut [bf16],
) {
    let smem = dynamic_shared::<u32>();
    let t = thread_idx().x as usize;
    let lane = t % 32;
    let warp = t / 32;
    let wm = warp / 2;
    let wn = warp % 2;
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

    for s in 0..2usize {
        if s < tiles {
            load_stage::<B_ROW_MAJOR>(smem, a, b, s, s, row0, col0, kk, nn, t);
        }
        cp_async_commit();
    }
    let mut acc = [0.0f32; 128];
    let mut fa = [0u32; 16];
    let mut fb = [0u32; 16];
    for kt in 0..tiles {
        cp_async_wait_stage::<3>();
        sync_threads();
        if kt + 2 < tiles {
            load_stage::<B_ROW_MAJOR>(smem, a, b, (kt + 2) % 3, kt + 2, row0, col0, kk, nn, t);
        }
        cp_async_commit();
        let base = (kt % 3) * STAGE_WORDS;
        for ks in 0..4usize {
            for i in 0..4usize {
                let (x0, x1, x2, x3) = ldmatrix_x4(shared_address(
                    &smem[a_fragment_word(base, wm, i, ks, lane)],
                ));
                fa[4 * i] = x0;
                fa[4 * i + 1] = x1;
                fa[4 * i + 2] = x2;
                fa[4 * i + 3] = x3;
            }
            for j2 in 0..4usize {
                let word = b_fragment_word::<B_ROW_MAJOR>(base, wn, j2, ks, lane);
                let (y0, y1, y2, y3) = ldmatrix_b::<B_ROW_MAJOR>(shared_address(&smem[word]));
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
    // C's two adjacent bf16 values of a lane as one 32-bit word (CUDA C++'s store of a
    // `__nv_bfloat162`), through `c` viewed as words. SAFETY: the words are `c`'s own
    // memory (N is even, so no word straddles its end), 4-byte aligned as every
    // allocation is, and each is written by one lane only.
    let words = unsafe { slice_at_mut::<u32>(global_address(&c[0]) as usize, c.len() / 2) };
    let g = lane / 4;
    let tq = lane % 4;
    for i in 0..4usize {
        for j in 0..8usize {
            let at = (i * 8 + j) * 4;
            let r = row0 + wm * 64 + i * 16 + g;
            let col = col0 + wn * 64 + j * 8 + 2 * tq;
            words[(r * nn + col) / 2] = pack_bf16x2(acc[at], acc[at + 1]);
            words[((r + 8) * nn + col) / 2] = pack_bf16x2(acc[at + 2], acc[at + 3]);
        }
    }
}
