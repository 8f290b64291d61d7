//! A FlashAttention-2-style forward pass in cudajit's kernel language, on the tensor cores
//! through `cudajit::tensor` (mma.sync, ldmatrix, cp.async).
//!
//! `attention_fwd::<T, D, KV, F16>` (element type `T`, bf16 or f16, with `F16` saying which;
//! head dimension `D` = 64, 128 or 256; `KV` keys per tile): for every batch `b`, query head
//! `h` and query row `i`,
//! `o[b, h, i] = softmax(q[b, h, i] · k[b, h_kv]ᵀ · scale) · v[b, h_kv]` with
//! `h_kv = h / (heads / kv_heads)` (grouped-query attention), inputs and output in `T`, f32
//! softmax statistics, and the log-sum-exp of every row (`lse[b, h, i]`, natural log, what
//! a backward pass needs). Tensors are `[batch, heads, seq, D]`, contiguous. `causal`
//! masks keys after the query. Any sequence length: the last tile's rows past the end are
//! zero-filled by `cp.async` and their keys masked. [`launch`] picks `F16` from `T`, so the
//! two cannot disagree.
//!
//! A block takes 64 query rows of one head with 4 warps, 16 rows each. Its Q tile is loaded
//! once (cp.async); up to `D = 128` each warp then keeps its rows as `D / 16` A fragments in
//! registers, at `D = 256` (whose 16 × 256 f32 output already takes 128 registers per lane)
//! it reloads them from shared memory with `ldmatrix` at every k step, as FlashAttention-2
//! does for that head dimension. Then, tile by tile of `KV` keys, K and V come into shared
//! memory with cp.async, double-buffered so the next tile's copy overlaps this tile's math:
//!
//! 1. `S = Q Kᵀ` (16 × `KV` per warp): `D / 16` k-steps × `KV / 8` MMAs; K is stored key by
//!    key, each key's `D` values contiguous, which is the "col" B layout `ldmatrix` loads as
//!    is.
//! 2. Online softmax in registers: lane `(g, t)` holds rows `g` and `g + 8`; the row maxima
//!    and sums combine over the 4 lanes of a quad with two `shfl_xor`s; exponentials are
//!    `ex2.approx` of `(s · scale − m) · log2 e`, and the running output is rescaled by
//!    `2^(m_old − m_new)`.
//! 3. `O += P V` (16 × `D` per warp): the f32 accumulators of `S` become A fragments of `P`
//!    (in `T`) in place (two adjacent 16×8 accumulator tiles are one 16×16 A fragment), and
//!    V, stored key by key (k-major for this product), loads through `ldmatrix.trans`.
//!
//! Shared rows are `2 D` bytes (128, 256 or 512); 16-byte chunk `c` of row `r` is stored at
//! chunk `c ^ (r % 8)`, so the eight rows of every `ldmatrix` matrix hit eight bank groups.
//!
//! The tile of keys is the knob that trades registers and shared memory for fewer barriers
//! and softmax passes per key: [`kv_tile`] gives the one each head dimension runs with.

use cudajit::prelude::*;
use cudajit::tensor::copy_async::{cp_async_16_zfill, cp_async_commit, cp_async_wait_group};
use cudajit::tensor::ldmatrix::{ldmatrix_x4, ldmatrix_x4_trans};
use cudajit::tensor::mma::{mma_bf16, mma_f16, ABf16, AHalf, AccF32, BBf16, BHalf};
use cudajit::tensor::pack::{pack_bf16x2, pack_f16x2};
use cudajit::{bf16, f16};

/// Query rows per block (4 warps × 16).
pub const BLOCK_Q: usize = 64;
/// Threads per block.
pub const THREADS: u32 = 128;

/// The element types of the inputs and the output, and the kernel's `F16` for each.
pub trait Element:
    DeviceScalar
    + cudajit::tensor::wgmma::WgmmaElement
    + cudarc::driver::DeviceRepr
    + cudarc::driver::ValidAsZeroBits
{
    /// `attention_fwd`'s `F16`: f16 MMAs and packs rather than bf16 ones.
    const F16: bool;
    /// The name the benchmark tables print.
    const NAME: &'static str;
    /// `x` rounded to this type (to nearest even).
    fn from_f32(x: f32) -> Self;
    /// The value as an f32 (exact).
    fn to_f32(self) -> f32;
}

impl Element for bf16 {
    const F16: bool = false;
    const NAME: &'static str = "bf16";
    fn from_f32(x: f32) -> Self {
        bf16::from_f32(x)
    }
    fn to_f32(self) -> f32 {
        bf16::to_f32(self)
    }
}

impl Element for f16 {
    const F16: bool = true;
    const NAME: &'static str = "f16";
    fn from_f32(x: f32) -> Self {
        f16::from_f32(x)
    }
    fn to_f32(self) -> f32 {
        f16::to_f32(self)
    }
}

/// The keys per tile each head dimension runs with: 64 at `D` = 64 and 128, 32 at 256 (Q
/// 32 KiB + two stages of K and V 64 KiB: 96 KiB of shared memory, so two blocks share an
/// SM, and 16 score registers next to the 128 of the output). At `D = 64` a 128-key tile
/// halves the barriers and softmax passes per key, but its 202 registers leave 2 blocks per
/// SM instead of 3: on the H200 it ran 2–6 % slower (docs/performance.md).
pub fn kv_tile(d: usize) -> usize {
    match d {
        256 => 32,
        _ => 64,
    }
}

/// Dynamic shared memory of [`attention_fwd`] for head dimension `d` and `kv` keys per
/// tile: Q (64 × `d`), then two stages of K and V (`kv` × `d` each), 16-bit elements
/// (80 KiB for 128 / 64, 72 KiB for 64 / 128, 96 KiB for 256 / 32).
pub fn shared_bytes(d: usize, kv: usize) -> u32 {
    (2 * d * (BLOCK_Q + 4 * kv)) as u32
}

/// `2^x` with the SFU's approximation, as FlashAttention uses.
#[device]
pub fn exp2_approx(x: f32) -> f32 {
    ptx!(f32: "ex2.approx.ftz.f32 $0, $1;", x)
}

/// `acc + a · b` on the tensor cores in the element type (`F16`: f16, else bf16): A's four
/// registers and B's two, as `ldmatrix` loaded them.
#[device]
fn mma<const F16: bool>(
    a0: u32,
    a1: u32,
    a2: u32,
    a3: u32,
    b0: u32,
    b1: u32,
    acc: AccF32,
) -> AccF32 {
    if F16 {
        return mma_f16(AHalf { a0, a1, a2, a3 }, BHalf { b0, b1 }, acc);
    }
    mma_bf16(ABf16 { a0, a1, a2, a3 }, BBf16 { b0, b1 }, acc)
}

/// `lo` and `hi` rounded to the element type, in one register (`lo` in the low half).
#[device]
fn pack<const F16: bool>(lo: f32, hi: f32) -> u32 {
    if F16 {
        return pack_f16x2(lo, hi);
    }
    pack_bf16x2(lo, hi)
}

/// The word of 16-byte chunk `chunk` (0..D/8) of row `row` of a swizzled tile at `base`
/// (rows of `D` 16-bit elements: `D / 2` words).
#[device]
fn swizzled<const D: usize>(base: usize, row: usize, chunk: usize) -> usize {
    base + row * (D / 2) + (chunk ^ (row % 8)) * 4
}

/// Copies the `ROWS` × `D` tile of rows `row0..` of `x` (rows of `D`, `rows` of them in
/// all) into the tile at word `base`: `ROWS · D / 1024` 16-byte copies per thread; rows
/// past the end are zero-filled, reading nothing.
#[device]
#[allow(clippy::too_many_arguments)]
fn load_tile<T: DeviceScalar, const D: usize, const ROWS: usize>(
    smem: &mut [u32],
    base: usize,
    x: &[T],
    first: usize,
    row0: usize,
    rows: usize,
    t: usize,
) {
    for i in 0..ROWS * D / 1024 {
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

/// The row maximum of a quad: the four lanes `4g .. 4g + 4` combined (the lanes that
/// hold one row of an MMA accumulator tile; the wgmma attention's too).
#[device]
pub fn quad_max(v: f32) -> f32 {
    let a = v.max(shfl_xor_sync(FULL_WARP, v, 1));
    a.max(shfl_xor_sync(FULL_WARP, a, 2))
}

/// The row sum of a quad.
#[device]
pub fn quad_sum(v: f32) -> f32 {
    let a = v + shfl_xor_sync(FULL_WARP, v, 1);
    a + shfl_xor_sync(FULL_WARP, a, 2)
}

/// The forward pass (see the module's documentation); launch it through [`launch`].
#[kernel]
#[allow(clippy::too_many_arguments)]
pub fn attention_fwd<T: DeviceScalar, const D: usize, const KV: usize, const F16: bool>(
    q: &[T],
    k: &[T],
    v: &[T],
    o: &mut [T],
    lse: &mut [f32],
    seq: u32,
    heads: u32,
    kv_heads: u32,
    scale: f32,
    causal: bool,
) {
    let smem = dynamic_shared::<u32>();
    let q_words = 32 * D;
    let kv_words = KV * D / 2;
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
    let q_row0 = q_tile * 64;
    // Key tiles this block looks at: all, or up to its last query row.
    let all_tiles = (s + KV - 1) / KV;
    let tiles = if causal {
        all_tiles.min((q_row0 + 64 + KV - 1) / KV)
    } else {
        all_tiles
    };
    let scale_log2 = scale * core::f32::consts::LOG2_E;
    // Q stays in registers up to D = 128; at 256 it is read from shared memory each time.
    let q_in_registers = D <= 128;

    load_tile::<T, D, 64>(smem, 0, q, (q_head + q_row0) * D, q_row0, s, t);
    load_tile::<T, D, KV>(smem, q_words, k, kv_first, 0, s, t);
    load_tile::<T, D, KV>(smem, q_words + kv_words, v, kv_first, 0, s, t);
    cp_async_commit();

    // Sized for the largest specialisation (S and P: KV = 128; Q and O: D = 256); a
    // smaller one leaves the tail unused, and the compiler removes it.
    let mut qf = [0u32; 64];
    let mut acc_s = [0.0f32; 64];
    let mut acc_o = [0.0f32; 128];
    let mut pf = [0u32; 32];
    let mut row_max = [-f32::INFINITY; 2];
    let mut row_sum = [0.0f32; 2];
    for j in 0..tiles {
        cp_async_wait_group::<0>();
        sync_threads();
        if q_in_registers && j == 0 {
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
            let stage = q_words + ((j + 1) % 2) * 2 * kv_words;
            let next = kv_first + (j + 1) * KV * D;
            load_tile::<T, D, KV>(smem, stage, k, next, (j + 1) * KV, s, t);
            load_tile::<T, D, KV>(smem, stage + kv_words, v, next, (j + 1) * KV, s, t);
        }
        cp_async_commit();
        let k_base = q_words + (j % 2) * 2 * kv_words;
        let v_base = k_base + kv_words;

        // S = Q Kᵀ: KV / 8 key tiles of 8, over D / 16 k chunks of 16.
        for i in 0..KV / 2 {
            acc_s[i] = 0.0;
        }
        for kc in 0..D / 16 {
            let a0: u32;
            let a1: u32;
            let a2: u32;
            let a3: u32;
            if q_in_registers {
                a0 = qf[4 * kc];
                a1 = qf[4 * kc + 1];
                a2 = qf[4 * kc + 2];
                a3 = qf[4 * kc + 3];
            } else {
                let row = warp * 16 + lane % 16;
                let (x0, x1, x2, x3) = ldmatrix_x4(shared_address(
                    &smem[swizzled::<D>(0, row, 2 * kc + lane / 16)],
                ));
                a0 = x0;
                a1 = x1;
                a2 = x2;
                a3 = x3;
            }
            for n2 in 0..KV / 16 {
                let mi = lane / 8;
                let key = n2 * 16 + (mi / 2) * 8 + lane % 8;
                let (b0, b1, b2, b3) = ldmatrix_x4(shared_address(
                    &smem[swizzled::<D>(k_base, key, 2 * kc + mi % 2)],
                ));
                let lo = 8 * n2;
                let d = mma::<F16>(
                    a0,
                    a1,
                    a2,
                    a3,
                    b0,
                    b1,
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
                let e = mma::<F16>(
                    a0,
                    a1,
                    a2,
                    a3,
                    b2,
                    b3,
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
        // Keys past the end of the sequence, and in a causal pass keys after the query,
        // get -inf: only the tiles that reach past the block's first row need looking at.
        let diagonal = causal && (j + 1) * KV > q_row0 + 1;
        if diagonal || (j + 1) * KV > s {
            for n in 0..KV / 8 {
                for e in 0..4usize {
                    let row = q_row0 + warp * 16 + g + 8 * (e / 2);
                    let key = j * KV + n * 8 + 2 * tq + e % 2;
                    if key >= s || (diagonal && key > row) {
                        acc_s[4 * n + e] = -f32::INFINITY;
                    }
                }
            }
        }
        // Online softmax, rows g (elements 0, 1 of each tile) and g + 8 (elements 2, 3).
        // The first tile holds key 0, which no row masks, so every maximum is finite.
        for half in 0..2usize {
            let mut m = row_max[half];
            for n in 0..KV / 8 {
                m = m.max(acc_s[4 * n + 2 * half] * scale_log2);
                m = m.max(acc_s[4 * n + 2 * half + 1] * scale_log2);
            }
            let m_new = quad_max(m);
            let correction = exp2_approx(row_max[half] - m_new);
            row_max[half] = m_new;
            let mut sum = 0.0f32;
            for n in 0..KV / 8 {
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
        // P as KV / 16 A fragments (keys in chunks of 16): tiles 2c and 2c + 1 side by side.
        for c in 0..KV / 16 {
            pf[4 * c] = pack::<F16>(acc_s[8 * c], acc_s[8 * c + 1]);
            pf[4 * c + 1] = pack::<F16>(acc_s[8 * c + 2], acc_s[8 * c + 3]);
            pf[4 * c + 2] = pack::<F16>(acc_s[8 * c + 4], acc_s[8 * c + 5]);
            pf[4 * c + 3] = pack::<F16>(acc_s[8 * c + 6], acc_s[8 * c + 7]);
        }
        // O += P V: D / 8 head-dim tiles of 8, over KV / 16 key chunks of 16; V through
        // `.trans`.
        for c in 0..KV / 16 {
            let (a0, a1, a2, a3) = (pf[4 * c], pf[4 * c + 1], pf[4 * c + 2], pf[4 * c + 3]);
            for n2 in 0..D / 16 {
                let mi = lane / 8;
                let key = c * 16 + (mi % 2) * 8 + lane % 8;
                let (b0, b1, b2, b3) = ldmatrix_x4_trans(shared_address(
                    &smem[swizzled::<D>(v_base, key, 2 * n2 + mi / 2)],
                ));
                let lo = 8 * n2;
                let d = mma::<F16>(
                    a0,
                    a1,
                    a2,
                    a3,
                    b0,
                    b1,
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
                let e = mma::<F16>(
                    a0,
                    a1,
                    a2,
                    a3,
                    b2,
                    b3,
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
    // O / l as pairs in T, and the log-sum-exp (natural log) of each row inside the sequence.
    // SAFETY: the words are `o`'s own memory (D is even), each written by one thread.
    let out = unsafe { slice_at_mut::<u32>(global_address(&o[0]) as usize, o.len() / 2) };
    for half in 0..2usize {
        let inv = 1.0 / row_sum[half];
        let row = q_row0 + warp * 16 + g + 8 * half;
        if row < s {
            let first = (q_head + row) * D;
            for n in 0..D / 8 {
                out[(first + n * 8 + 2 * tq) / 2] = pack::<F16>(
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

/// The shape of one launch of [`attention_fwd`]: `[batch, heads, seq, dim]` queries and
/// outputs, `[batch, kv_heads, seq, dim]` keys and values, `kv` keys per tile.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Problem {
    pub dim: usize,
    pub kv: usize,
    pub batch: usize,
    pub heads: usize,
    pub kv_heads: usize,
    pub seq: usize,
    pub causal: bool,
}

impl Problem {
    /// The grid (query tiles × heads × batch), 128 threads, and the shared memory.
    pub fn config(&self) -> cudajit::LaunchConfig {
        cudajit::LaunchConfig::new(
            (
                self.seq.div_ceil(BLOCK_Q) as u32,
                self.heads as u32,
                self.batch as u32,
            ),
            THREADS,
        )
        .with_shared_mem(shared_bytes(self.dim, self.kv))
    }
}

/// The specialisations there are, as (head dimension, keys per tile): the tile each head
/// dimension runs with ([`kv_tile`]) and the neighbours the benchmark compares it with.
pub const FORMS: [(usize, usize); 6] = [
    (64, 64),
    (64, 128),
    (128, 64),
    (128, 128),
    (256, 32),
    (256, 64),
];

/// Launches [`attention_fwd`] on `stream` (a GPU or the simulator) for `problem`, with the
/// `F16` of `T`; `problem.dim` and `problem.kv` must be one of [`FORMS`].
#[allow(clippy::too_many_arguments)]
pub fn launch<T: Element>(
    stream: &impl cudajit::LaunchStream,
    problem: &Problem,
    q: &impl cudajit::KernelSlice<T>,
    k: &impl cudajit::KernelSlice<T>,
    v: &impl cudajit::KernelSlice<T>,
    o: &mut impl cudajit::KernelSliceMut<T>,
    lse: &mut impl cudajit::KernelSliceMut<f32>,
) -> Result<(), Box<dyn std::error::Error>> {
    if problem.kv_heads == 0 || !problem.heads.is_multiple_of(problem.kv_heads) {
        return Err(format!(
            "{} query heads cannot share {} KV heads: the query heads must be a multiple",
            problem.heads, problem.kv_heads
        )
        .into());
    }
    let config = problem.config();
    let (seq, heads, kv_heads) = (
        problem.seq as u32,
        problem.heads as u32,
        problem.kv_heads as u32,
    );
    let scale = 1.0 / (problem.dim as f32).sqrt();
    let causal = problem.causal;
    // The specialisation's constants are type-level: one arm per form and element type.
    macro_rules! form {
        ($d:literal, $kv:literal) => {
            if T::F16 {
                attention_fwd::launch::<T, $d, $kv, true>(
                    stream, config, q, k, v, o, lse, seq, heads, kv_heads, scale, causal,
                )?
            } else {
                attention_fwd::launch::<T, $d, $kv, false>(
                    stream, config, q, k, v, o, lse, seq, heads, kv_heads, scale, causal,
                )?
            }
        };
    }
    match (problem.dim, problem.kv) {
        (64, 64) => form!(64, 64),
        (64, 128) => form!(64, 128),
        (128, 64) => form!(128, 64),
        (128, 128) => form!(128, 128),
        (256, 32) => form!(256, 32),
        (256, 64) => form!(256, 64),
        (d, kv) => {
            return Err(format!(
                "head dimension {d} with {kv}-key tiles: the kernel takes (head dim, keys) in {FORMS:?}"
            )
            .into())
        }
    }
    Ok(())
}

/// The specialisation `attention_fwd::<T, D, KV, F16>` with `T` the 16-bit float `ty`
/// (and `F16` what it implies), for compiling without a launch.
pub fn specialization(ty: cudajit::core::Scalar, dim: usize, kv: usize) -> cudajit::Specialization {
    use cudajit::core::ir::Literal;
    let size = |name: &str, value: usize| {
        (
            name.to_owned(),
            Literal::Int {
                bits: value as u64,
                ty: cudajit::core::Scalar::Usize,
            },
        )
    };
    cudajit::Specialization {
        types: vec![("T".to_owned(), ty)],
        structs: Vec::new(),
        consts: vec![
            size("D", dim),
            size("KV", kv),
            (
                "F16".to_owned(),
                Literal::Bool(ty == cudajit::core::Scalar::F16),
            ),
        ],
    }
}
