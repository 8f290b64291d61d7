//! Where a k-tile of A and B lives in shared memory, how it gets there (`cp.async`), and
//! where each lane's `ldmatrix` row addresses point: the layout half of the GEMM kernels.
//!
//! One pipeline stage is 32 KiB, in 32-bit words: A's 128 rows × 64 k (128 bytes a row),
//! then B's 16 KiB. Every 128-byte shared row `r` keeps its 16-byte chunk `c` at chunk
//! `c ^ (r % 8)` ([`swizzled`]: the 128-byte swizzle of CUTLASS and of TMA's
//! `SWIZZLE_128B`). An `ldmatrix` phase reads one 8×8 matrix: eight 16-byte rows from eight
//! consecutive shared rows at one logical chunk, which the XOR spreads over all eight
//! 16-byte bank groups, so no phase has a bank conflict; the copies in (eight threads
//! writing one row's eight chunks) are conflict-free too.
//!
//! B column by column (`b[n * K + k]`, TN) is stored n-major like A: 128 rows (columns of
//! B) of 64 k. B row by row (`b[k * N + n]`, NN) is stored k-major, as it arrives: a k row
//! of the tile holds 128 n values (256 bytes), kept as two 64-column panels of 64 rows ×
//! 128 bytes, each panel 128-byte-swizzled. An 8×8 matrix that `ldmatrix.trans` reads is
//! eight consecutive k rows at one 16-byte n chunk: with 128-byte rows the XOR by `k % 8`
//! puts them in eight bank groups. (Swizzling the whole 256-byte row by `k % 8` would be
//! conflict-free as well; the panels are what a TMA box of 64 columns with `SWIZZLE_128B`
//! writes, so the Hopper kernel can share the layout.) Each warp's 64 columns are exactly
//! one panel.

use cudajit::bf16;
use cudajit::prelude::*;
use cudajit::tensor::copy_async::cp_async_16;

/// Words (u32) of one stage of shared memory: A (128 rows × 128 bytes), then B (16 KiB).
pub const STAGE_WORDS: usize = 8192;
/// Where B starts within a stage, in words.
pub const B_WORDS_OFFSET: usize = 4096;
/// Words of one 64-column panel of a k-major B tile (64 k rows × 128 bytes).
pub const PANEL_WORDS: usize = 2048;

/// The word of 16-byte chunk `chunk` (0–7) of 128-byte shared row `row`, swizzled.
#[device]
pub fn swizzled(row: usize, chunk: usize) -> usize {
    row * 32 + (chunk ^ (row % 8)) * 4
}

/// Copies k-tile `tile` (64 k from `tile * 64`) of A's rows `row0 .. row0 + 128` and of B's
/// columns `col0 .. col0 + 128` into stage `stage`: 16 bytes a copy, eight of A and eight
/// of B per thread `t` of 128. `B_ROW_MAJOR` picks B's layout (see the module docs).
#[device]
#[allow(clippy::too_many_arguments)]
pub fn load_stage<const B_ROW_MAJOR: bool>(
    smem: &mut [u32],
    a: &[bf16],
    b: &[bf16],
    stage: usize,
    tile: usize,
    row0: usize,
    col0: usize,
    kk: usize,
    nn: usize,
    t: usize,
) {
    let base = stage * STAGE_WORDS;
    let k0 = tile * 64;
    // Eight consecutive threads copy one 128-byte row: coalesced reads, and one shared
    // row's eight chunks per eight stores.
    for i in 0..8usize {
        let q = t + 128 * i;
        let r = q / 8;
        let ch = q % 8;
        cp_async_16(
            shared_address(&smem[base + swizzled(r, ch)]),
            global_address(&a[(row0 + r) * kk + k0 + ch * 8]),
        );
    }
    let b_base = base + B_WORDS_OFFSET;
    if B_ROW_MAJOR {
        // 64 k rows of 256 bytes (16 chunks): sixteen threads read one row.
        for i in 0..8usize {
            let q = t + 128 * i;
            let r = q / 16;
            let n_chunk = q % 16;
            let panel = n_chunk / 8;
            cp_async_16(
                shared_address(&smem[b_base + panel * PANEL_WORDS + swizzled(r, n_chunk % 8)]),
                global_address(&b[(k0 + r) * nn + col0 + n_chunk * 8]),
            );
        }
    } else {
        for i in 0..8usize {
            let q = t + 128 * i;
            let r = q / 8;
            let ch = q % 8;
            cp_async_16(
                shared_address(&smem[b_base + swizzled(r, ch)]),
                global_address(&b[(col0 + r) * kk + k0 + ch * 8]),
            );
        }
    }
}

/// The word lane `lane` points `ldmatrix.x4` at for the A fragment of the warp's 16-row
/// tile `i` (rows `wm * 64 + 16 i ..`) at k step `ks` (k `16 ks ..` of the stage): row
/// `lane % 16`, 16-byte chunk `2 ks + lane / 16`, so the registers are `a0..a3` in order.
#[device]
pub fn a_fragment_word(base: usize, wm: usize, i: usize, ks: usize, lane: usize) -> usize {
    let r = wm * 64 + i * 16 + lane % 16;
    base + swizzled(r, ks * 2 + lane / 16)
}

/// The word lane `lane` points `ldmatrix.x4` (TN) or `ldmatrix.x4.trans` (NN) at for the
/// B fragments of the warp's 8-column tiles `2 j2` and `2 j2 + 1` (columns
/// `wn * 64 + 16 j2 ..`) at k step `ks`. Matrix `lane / 8` is `b0`, `b1` of the first tile,
/// then of the second, in both layouts:
/// - TN (n-major rows): column `8 (mi / 2) + lane % 8` of the pair, k chunk `2 ks + mi % 2`;
/// - NN (k-major rows, transposed by the load): k row `16 ks + 8 (mi % 2) + lane % 8` of
///   the warp's panel `wn`, n chunk `2 j2 + mi / 2`.
#[device]
pub fn b_fragment_word<const B_ROW_MAJOR: bool>(
    base: usize,
    wn: usize,
    j2: usize,
    ks: usize,
    lane: usize,
) -> usize {
    let mi = lane / 8;
    if B_ROW_MAJOR {
        let r = ks * 16 + (mi % 2) * 8 + lane % 8;
        base + B_WORDS_OFFSET + wn * PANEL_WORDS + swizzled(r, j2 * 2 + mi / 2)
    } else {
        let r = wn * 64 + j2 * 16 + (mi / 2) * 8 + lane % 8;
        base + B_WORDS_OFFSET + swizzled(r, ks * 2 + mi % 2)
    }
}

/// The output tile (block row, block column) of launch block `(bx, by)` in a `gx × gy`
/// grid: consecutive blocks take the 8 block rows of a band, then the next block column,
/// so the blocks running at once share their A rows and B columns in L2.
#[device]
pub fn band_order(bx: usize, by: usize, gx: usize, gy: usize) -> (usize, usize) {
    let id = by * gx + bx;
    let band = id / (8 * gx);
    let first = band * 8;
    let rows = if gy - first < 8 { gy - first } else { 8 };
    let within = id - band * 8 * gx;
    (first + within % rows, within / rows)
}
