//! A FlashAttention-2-style forward pass in cudajit's kernel language, on the tensor cores
//! through `cudajit::tensor` (mma.sync, ldmatrix, cp.async).
//!
//! `attention_fwd::<D>` (head dimension `D` = 64 or 128): for every batch `b`, query head
//! `h` and query row `i`,
//! `o[b, h, i] = softmax(q[b, h, i] · k[b, h_kv]ᵀ · scale) · v[b, h_kv]` with
//! `h_kv = h / (heads / kv_heads)` (grouped-query attention), bf16 inputs and output, f32
//! softmax statistics, and the log-sum-exp of every row (`lse[b, h, i]`, natural log, what
//! a backward pass needs). Tensors are `[batch, heads, seq, D]`, contiguous. `causal`
//! masks keys after the query. Any sequence length: the last tile's rows past the end are
//! zero-filled by `cp.async` and their keys masked.
//!
//! A block takes 64 query rows of one head with 4 warps, 16 rows each. Its Q tile is loaded
//! once (cp.async, then `ldmatrix` into `D / 16` A fragments per warp, kept in registers); then,
//! tile by tile of 64 keys, K and V come into shared memory with cp.async, double-buffered
//! so the next tile's copy overlaps this tile's math:
//!
//! 1. `S = Q Kᵀ` (16 × 64 per warp): `D / 16` k-steps × 8 MMAs; K is stored key by key, each key's
//!    `D` values contiguous, which is the "col" B layout `ldmatrix` loads as is.
//! 2. Online softmax in registers: lane `(g, t)` holds rows `g` and `g + 8`; the row maxima
//!    and sums combine over the 4 lanes of a quad with two `shfl_xor`s; exponentials are
//!    `ex2.approx` of `(s · scale − m) · log2 e`, and the running output is rescaled by
//!    `2^(m_old − m_new)`.
//! 3. `O += P V` (16 × `D` per warp): the f32 accumulators of `S` become bf16 A fragments
//!    of `P` in place (two adjacent 16×8 accumulator tiles are one 16×16 A fragment), and V,
//!    stored key by key (k-major for this product), loads through `ldmatrix.trans`.
//!
//! Shared rows are `2 D` bytes (128 or 256); 16-byte chunk `c` of row `r` is stored at chunk
//! `c ^ (r % 8)`, so the eight rows of every `ldmatrix` matrix hit eight bank groups.

use cudajit::bf16;
use cudajit::prelude::*;
use cudajit::tensor::copy_async::{cp_async_16_zfill, cp_async_commit, cp_async_wait_group};
use cudajit::tensor::ldmatrix::{ldmatrix_x4, ldmatrix_x4_trans};
use cudajit::tensor::mma::{mma_bf16, ABf16, AccF32, BBf16};
use cudajit::tensor::pack::pack_bf16x2;

/// Query rows per block (4 warps × 16).
pub const BLOCK_Q: usize = 64;
/// Threads per block.
pub const THREADS: u32 = 128;

/// `2^x` with the SFU's approximation, as FlashAttention uses.
#[device]
fn exp2_approx(x: f32) -> f32 {
    ptx!(f32: "ex2.approx.ftz.f32 $0, $1;", x)
}

/// The word of 16-byte chunk `chunk` (0..D/8) of row `row` of a swizzled tile at `base`
/// (rows of `D` bf16: `D / 2` words).
#[device]
fn swizzled<const D: usize>(base: usize, row: usize, chunk: usize) -> usize {
    base + row * (D / 2) + (chunk ^ (row % 8)) * 4
}

/// Copies the 64 × `D` bf16 tile of rows `row0..` of `x` (rows of `D`, `rows` of them
/// in all) into the tile at word `base`: `D / 16` 16-byte copies per thread; rows past the
/// end are zero-filled, reading nothing.
#[device]
#[allow(clippy::too_many_arguments)]
fn load_tile<const D: usize>(
    smem: &mut [u32],
    base: usize,
    x: &[bf16],
    first: usize,
    row0: usize,
    rows: usize,
    t: usize,
) {
    for i in 0..D / 16 {
        let q = t + 128 * i;
        let row = q / (D / 8);
        let chunk = q % (D / 8);
        let inside = row0 + row < rows;
        // A row past the end copies 0 bytes from the tile's first row (a valid address).
        let from = if inside {
            first + row * D + chunk * 8
        } else {
            first
        };
        cp_async_16_zfill(
            shared_address(&smem[swizzled::<D>(base, row, chunk)]),
            global_address(&x[from]),
            if inside { 16 } else { 0 },
        );
    }
}

/// The row maximum of a quad: the four lanes `4g .. 4g + 4` combined.
#[device]
fn quad_max(v: f32) -> f32 {
    let a = v.max(shfl_xor_sync(FULL_WARP, v, 1));
    a.max(shfl_xor_sync(FULL_WARP, a, 2))
}

/// The row sum of a quad.
#[device]
fn quad_sum(v: f32) -> f32 {
    let a = v + shfl_xor_sync(FULL_WARP, v, 1);
    a + shfl_xor_sync(FULL_WARP, a, 2)
}

/// The forward pass for head dimension `D` (64 or 128; see the module's documentation).
#[kernel]
#[allow(clippy::too_many_arguments)]
pub fn attention_fwd<const D: usize>(
    q: &[bf16],
    k: &[bf16],
    v: &[bf16],
    o: &mut [bf16],
    lse: &mut [f32],
    seq: u32,
    heads: u32,
    kv_heads: u32,
    scale: f32,
    causal: bool,
) {
    let smem = dynamic_shared::<u32>();
    let tile_words = 32 * D;
    let t = thread_idx().x as usize;
    let lane = t % 32;
    let warp = t / 32;
    let g = lane / 4;
    let tq = lane % 4;
    let s = seq as usize;
    let q_tile = block_idx().x as usize;
    let head = block_idx().y as usize;
    let batch = block_idx().z as usize;
    let kv_head = head / (heads / kv_heads) as usize;
    let q_head = (batch * heads as usize + head) * s;
    let kv_first = (batch * kv_heads as usize + kv_head) * s * D;
    // Key tiles this block looks at: all, or up to its last query row.
    let tiles = if causal { q_tile + 1 } else { (s + 63) / 64 };
    let scale_log2 = scale * core::f32::consts::LOG2_E;

    load_tile::<D>(smem, 0, q, (q_head + q_tile * 64) * D, q_tile * 64, s, t);
    load_tile::<D>(smem, tile_words, k, kv_first, 0, s, t);
    load_tile::<D>(smem, 2 * tile_words, v, kv_first, 0, s, t);
    cp_async_commit();

    // Sized for D = 128; a smaller D leaves the tail unused (and removed by the compiler).
    let mut qf = [0u32; 32];
    let mut acc_s = [0.0f32; 32];
    let mut acc_o = [0.0f32; 64];
    let mut pf = [0u32; 16];
    let mut row_max = [-f32::INFINITY; 2];
    let mut row_sum = [0.0f32; 2];
    for j in 0..tiles {
        cp_async_wait_group::<0>();
        sync_threads();
        if j == 0 {
            // This warp's 16 query rows as D / 16 A fragments (k chunks of 16).
            for kc in 0..D / 16 {
                let row = warp * 16 + lane % 16;
                let (x0, x1, x2, x3) = ldmatrix_x4(shared_address(
                    &smem[swizzled::<D>(0, row, 2 * kc + lane / 16)],
                ));
                qf[4 * kc] = x0;
                qf[4 * kc + 1] = x1;
                qf[4 * kc + 2] = x2;
                qf[4 * kc + 3] = x3;
            }
        }
        // The next tile's K and V into the other stage while this one is used.
        if j + 1 < tiles {
            let stage = tile_words + ((j + 1) % 2) * 2 * tile_words;
            let next = kv_first + (j + 1) * 64 * D;
            load_tile::<D>(smem, stage, k, next, (j + 1) * 64, s, t);
            load_tile::<D>(smem, stage + tile_words, v, next, (j + 1) * 64, s, t);
        }
        cp_async_commit();
        let k_base = tile_words + (j % 2) * 2 * tile_words;
        let v_base = k_base + tile_words;

        // S = Q Kᵀ: 8 key tiles of 8, over D / 16 k chunks of 16.
        for i in 0..32usize {
            acc_s[i] = 0.0;
        }
        for kc in 0..D / 16 {
            for n2 in 0..4usize {
                let mi = lane / 8;
                let key = n2 * 16 + (mi / 2) * 8 + lane % 8;
                let (b0, b1, b2, b3) = ldmatrix_x4(shared_address(
                    &smem[swizzled::<D>(k_base, key, 2 * kc + mi % 2)],
                ));
                let a = ABf16 {
                    a0: qf[4 * kc],
                    a1: qf[4 * kc + 1],
                    a2: qf[4 * kc + 2],
                    a3: qf[4 * kc + 3],
                };
                let lo = 8 * n2;
                let d = mma_bf16(
                    a,
                    BBf16 { b0, b1 },
                    AccF32 {
                        c0: acc_s[lo],
                        c1: acc_s[lo + 1],
                        c2: acc_s[lo + 2],
                        c3: acc_s[lo + 3],
                    },
                );
                acc_s[lo] = d.c0;
                acc_s[lo + 1] = d.c1;
                acc_s[lo + 2] = d.c2;
                acc_s[lo + 3] = d.c3;
                let hi = 8 * n2 + 4;
                let e = mma_bf16(
                    a,
                    BBf16 { b0: b2, b1: b3 },
                    AccF32 {
                        c0: acc_s[hi],
                        c1: acc_s[hi + 1],
                        c2: acc_s[hi + 2],
                        c3: acc_s[hi + 3],
                    },
                );
                acc_s[hi] = e.c0;
                acc_s[hi + 1] = e.c1;
                acc_s[hi + 2] = e.c2;
                acc_s[hi + 3] = e.c3;
            }
        }
        // Keys past the end of the sequence, and on the diagonal tile of a causal pass
        // keys after the query, get -inf.
        let diagonal = causal && j == q_tile;
        if diagonal || (j + 1) * 64 > s {
            for n in 0..8usize {
                for e in 0..4usize {
                    let row = q_tile * 64 + warp * 16 + g + 8 * (e / 2);
                    let key = j * 64 + n * 8 + 2 * tq + e % 2;
                    if key >= s || (diagonal && key > row) {
                        acc_s[4 * n + e] = -f32::INFINITY;
                    }
                }
            }
        }
        // Online softmax, rows g (elements 0, 1 of each tile) and g + 8 (elements 2, 3).
        for half in 0..2usize {
            let mut m = row_max[half];
            for n in 0..8usize {
                m = m.max(acc_s[4 * n + 2 * half] * scale_log2);
                m = m.max(acc_s[4 * n + 2 * half + 1] * scale_log2);
            }
            let m_new = quad_max(m);
            let correction = exp2_approx(row_max[half] - m_new);
            row_max[half] = m_new;
            let mut sum = 0.0f32;
            for n in 0..8usize {
                let p0 = exp2_approx(acc_s[4 * n + 2 * half] * scale_log2 - m_new);
                let p1 = exp2_approx(acc_s[4 * n + 2 * half + 1] * scale_log2 - m_new);
                acc_s[4 * n + 2 * half] = p0;
                acc_s[4 * n + 2 * half + 1] = p1;
                sum += p0 + p1;
            }
            row_sum[half] = row_sum[half] * correction + quad_sum(sum);
            for n in 0..D / 8 {
                acc_o[4 * n + 2 * half] *= correction;
                acc_o[4 * n + 2 * half + 1] *= correction;
            }
        }
        // P as 4 A fragments (keys in chunks of 16): tiles 2c and 2c + 1 side by side.
        for c in 0..4usize {
            pf[4 * c] = pack_bf16x2(acc_s[8 * c], acc_s[8 * c + 1]);
            pf[4 * c + 1] = pack_bf16x2(acc_s[8 * c + 2], acc_s[8 * c + 3]);
            pf[4 * c + 2] = pack_bf16x2(acc_s[8 * c + 4], acc_s[8 * c + 5]);
            pf[4 * c + 3] = pack_bf16x2(acc_s[8 * c + 6], acc_s[8 * c + 7]);
        }
        // O += P V: D / 8 head-dim tiles of 8, over 4 key chunks of 16; V through `.trans`.
        for c in 0..4usize {
            let a = ABf16 {
                a0: pf[4 * c],
                a1: pf[4 * c + 1],
                a2: pf[4 * c + 2],
                a3: pf[4 * c + 3],
            };
            for n2 in 0..D / 16 {
                let mi = lane / 8;
                let key = c * 16 + (mi % 2) * 8 + lane % 8;
                let (b0, b1, b2, b3) = ldmatrix_x4_trans(shared_address(
                    &smem[swizzled::<D>(v_base, key, 2 * n2 + mi / 2)],
                ));
                let lo = 8 * n2;
                let d = mma_bf16(
                    a,
                    BBf16 { b0, b1 },
                    AccF32 {
                        c0: acc_o[lo],
                        c1: acc_o[lo + 1],
                        c2: acc_o[lo + 2],
                        c3: acc_o[lo + 3],
                    },
                );
                acc_o[lo] = d.c0;
                acc_o[lo + 1] = d.c1;
                acc_o[lo + 2] = d.c2;
                acc_o[lo + 3] = d.c3;
                let hi = 8 * n2 + 4;
                let e = mma_bf16(
                    a,
                    BBf16 { b0: b2, b1: b3 },
                    AccF32 {
                        c0: acc_o[hi],
                        c1: acc_o[hi + 1],
                        c2: acc_o[hi + 2],
                        c3: acc_o[hi + 3],
                    },
                );
                acc_o[hi] = e.c0;
                acc_o[hi + 1] = e.c1;
                acc_o[hi + 2] = e.c2;
                acc_o[hi + 3] = e.c3;
            }
        }
    }
    // O / l as bf16 pairs, and the log-sum-exp (natural log) of each row inside the sequence.
    let out = unsafe { slice_at_mut::<u32>(global_address(&o[0]) as usize, o.len() / 2) };
    for half in 0..2usize {
        let inv = 1.0 / row_sum[half];
        let row = q_tile * 64 + warp * 16 + g + 8 * half;
        if row < s {
            let first = (q_head + row) * D;
            for n in 0..D / 8 {
                out[(first + n * 8 + 2 * tq) / 2] = pack_bf16x2(
                    acc_o[4 * n + 2 * half] * inv,
                    acc_o[4 * n + 2 * half + 1] * inv,
                );
            }
            if tq == 0 {
                lse[q_head + row] =
                    (row_max[half] + row_sum[half].log2()) * core::f32::consts::LN_2;
            }
        }
    }
}

/// Dynamic shared memory of [`attention_fwd`] for head dimension `d`: Q, then two stages
/// of K and V, each a 64 × `d` bf16 tile (80 KiB for 128, 40 KiB for 64).
pub fn shared_bytes(d: usize) -> u32 {
    (5 * 32 * d * 4) as u32
}
