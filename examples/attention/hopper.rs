//! A FlashAttention-3-style forward pass in cudajit's kernel language: TMA + wgmma,
//! warp-specialised producer and consumer warpgroups over an mbarrier pipeline
//! (`cudajit::tensor::{tma, mbarrier, wgmma}`), for sm_90a; head dimension 64 or 128, bf16
//! or f16.
//!
//! The same computation as [`super::kernels::attention_fwd`] (same tensors, GQA, causal
//! mask, masked tails, log-sum-exp). A block takes 128 query rows of one head with three
//! warpgroups (384 threads):
//!
//! - **warpgroup 0, the producer**, gives up registers (`setmaxnreg.dec` to 24); one of its
//!   threads loads the Q tile once and then streams the K and V tiles of 128 keys into
//!   two-stage rings with TMA (boxes of 64 head-dim columns × 128 rows, 128-byte swizzled,
//!   `D / 64` per tile). K and V have barriers of their own, so `S = Q Kᵀ` can start while V is
//!   still arriving; a stage is refilled when both consumers have released it.
//! - **warpgroups 1 and 2, the consumers**, take registers (`setmaxnreg.inc` to 240) and
//!   each owns 64 of the query rows. Per key tile: `S = Q Kᵀ` with `D / 16`
//!   `wgmma.m64n128k16` reading Q and K from shared memory (64 f32 per thread); the mask;
//!   the online softmax in registers (a row's 128 scores are spread over the four lanes
//!   of a quad: two `shfl_xor`s); then `O += P V` with eight `wgmma.m64nDk16` whose A
//!   operand, P, comes from registers: the f32 scores of two adjacent 8-column blocks
//!   packed into 16-bit pairs are exactly wgmma's register-A fragment of 16 keys, so P never
//!   touches shared memory. V is stored key by key (MN-major for this product) and read
//!   transposed through its descriptor.
//! - FlashAttention-3's two overlaps: within a consumer, tile j's `S = Q Kᵀ` and tile
//!   j − 1's `O += P V` are issued together and the softmax of tile j runs while the second
//!   is still on the tensor cores; between the consumers, turns on two named barriers
//!   ("ping-pong") make one issue its products while the other computes its softmax.
//!
//! Tensors are `[batch, heads, seq, D]`; the tensor maps see them as 3-D
//! (`D × seq × batch·heads`), so a tile running past the end of a sequence is filled
//! with zeros by TMA instead of reading the next head's rows; those keys are masked and
//! those query rows are not written.

use super::kernels::{exp2_approx, quad_max, quad_sum, Element};
use cudajit::prelude::*;
use cudajit::tensor::mbarrier::{mbarrier_arrive_expect_tx, mbarrier_init, mbarrier_wait_parity};
use cudajit::tensor::pack::{pack_bf16x2, pack_f16x2};
use cudajit::tensor::pipeline::Ring;
use cudajit::tensor::tma::tma_load_3d;
use cudajit::tensor::warpgroup::{
    named_barrier_arrive, named_barrier_sync, setmaxnreg_dec, setmaxnreg_inc,
};
use cudajit::tensor::wgmma::{
    k_major_sw128, mn_major_sw128, wgmma, wgmma_commit_group, wgmma_fence, wgmma_register_a,
    wgmma_wait_group, WgmmaElement,
};
use cudajit::tensor_map::TensorMap;

/// Query rows per block (two consumer warpgroups × 64).
pub const BLOCK_Q: usize = 128;
/// Keys per K/V tile.
pub const BLOCK_KV: usize = 128;
/// Three warpgroups: the producer and two consumers.
pub const THREADS: u32 = 384;
/// One box: 128 rows of 64 16-bit elements (128 bytes, the swizzle's span).
const BOX_BYTES: u32 = 128 * 128;

/// Dynamic shared memory for head dimension `d`: Q, two stages of K and V (tiles of 128
/// rows of `d` 16-bit elements), the barriers, and up to 1 KiB to align the tiles to the
/// 128-byte swizzle's 1024-byte repeat.
pub fn shared_bytes(d: usize) -> u32 {
    1024 + 5 * (d as u32 / 64) * BOX_BYTES + 72
}

/// Issues `S = Q Kᵀ` for a consumer's 64 rows of Q at `q_rows` and the K tile at `k_tile`:
/// `D / 16` k-steps of 16 over the head dimension, 4 per 64-column box 16 KiB apart; the
/// first overwrites the accumulators (scale-d 0).
#[device]
fn scores<T: DeviceScalar + WgmmaElement, const D: usize>(
    acc_s: &mut [f32; 64],
    q_rows: u32,
    k_tile: u32,
) {
    for ks in 0..(D / 16) as u32 {
        let offset = (ks / 4) * BOX_BYTES + 32 * (ks % 4);
        let (a, b) = (
            k_major_sw128(q_rows + offset),
            k_major_sw128(k_tile + offset),
        );
        wgmma::<T, false, false>(acc_s, a, b, ks > 0);
    }
}

/// Issues `O += P V` for the V tile at `v_tile`: 8 k-steps of 16 keys; P's fragment for
/// keys `16 c..` is registers `4 c..4 c + 4` of `p` (see [`pack_probabilities`]). V's
/// 16-key slice `c` is 2 KiB on, its 64-column boxes 16 KiB apart; it is read transposed
/// (MN-major). `O_REGS` is `D / 2`, the accumulators of a 64 × D tile per thread.
#[device]
fn accumulate<T: DeviceScalar + WgmmaElement, const O_REGS: usize>(
    acc_o: &mut [f32; O_REGS],
    p: &[u32; 32],
    v_tile: u32,
) {
    for c in 0..8usize {
        let a = [p[4 * c], p[4 * c + 1], p[4 * c + 2], p[4 * c + 3]];
        let b = mn_major_sw128(v_tile + 2048 * c as u32, BOX_BYTES);
        // N = 2 × O_REGS: the head dimension.
        wgmma_register_a::<T, true>(acc_o, a, b, true);
    }
}

/// Two f32 as one register of two 16-bit values of the input type, `lo` in the low half.
#[device]
fn pack<const HALF: bool>(lo: f32, hi: f32) -> u32 {
    if HALF {
        pack_f16x2(lo, hi)
    } else {
        pack_bf16x2(lo, hi)
    }
}

/// Waits for this consumer's turn to issue its wgmmas: named barrier `1 + consumer`, which
/// the other consumer's 128 threads arrive on when they have issued theirs (FA3's
/// "ping-pong": one warpgroup's products run while the other computes its softmax).
#[device]
fn wait_turn(consumer: u32) {
    named_barrier_sync::<256>(1 + consumer);
}

/// Hands the turn to the other consumer.
#[device]
fn pass_turn(consumer: u32) {
    named_barrier_arrive::<256>(2 - consumer);
}

/// Sets the scores of keys past the end of the sequence, and on a causal pass of keys
/// after the row, to -inf. The thread holds rows `row_lo` and `row_lo + 8`, columns
/// `8 n + 2 tq` and `8 n + 2 tq + 1` of the tile of keys `key0..`.
#[device]
fn mask(acc_s: &mut [f32; 64], row_lo: usize, key0: usize, seq: usize, causal: bool, tq: usize) {
    for n in 0..16usize {
        for e in 0..4usize {
            let row = row_lo + 8 * (e / 2);
            let key = key0 + n * 8 + 2 * tq + e % 2;
            if key >= seq || (causal && key > row) {
                acc_s[4 * n + e] = -f32::INFINITY;
            }
        }
    }
}

/// The online softmax of one tile of scores, rows g (elements 0, 1 of each 8-column block)
/// and g + 8 (elements 2, 3): the scores become `2^(s · scale · log2 e − m)` with the new
/// row maxima `m`, the row sums are updated, and the factors the output must be rescaled
/// by, `2^(m_old − m_new)`, are written to `correction`.
#[device]
fn softmax(
    acc_s: &mut [f32; 64],
    row_max: &mut [f32; 2],
    row_sum: &mut [f32; 2],
    correction: &mut [f32; 2],
    scale_log2: f32,
) {
    for half in 0..2usize {
        let mut m = row_max[half];
        for n in 0..16usize {
            m = m.max(acc_s[4 * n + 2 * half] * scale_log2);
            m = m.max(acc_s[4 * n + 2 * half + 1] * scale_log2);
        }
        let m_new = quad_max(m);
        correction[half] = exp2_approx(row_max[half] - m_new);
        row_max[half] = m_new;
        let mut sum = 0.0f32;
        for n in 0..16usize {
            let p0 = exp2_approx(acc_s[4 * n + 2 * half] * scale_log2 - m_new);
            let p1 = exp2_approx(acc_s[4 * n + 2 * half + 1] * scale_log2 - m_new);
            acc_s[4 * n + 2 * half] = p0;
            acc_s[4 * n + 2 * half + 1] = p1;
            sum += p0 + p1;
        }
        row_sum[half] = row_sum[half] * correction[half] + quad_sum(sum);
    }
}

/// Multiplies the output rows by their softmax corrections.
#[device]
fn rescale<const O_REGS: usize>(acc_o: &mut [f32; O_REGS], correction: &[f32; 2]) {
    for n in 0..O_REGS / 4 {
        for e in 0..4usize {
            acc_o[4 * n + e] *= correction[e / 2];
        }
    }
}

/// The probabilities as wgmma's register-A fragments: the fragment of keys `16 c..` is the
/// f32 scores of 8-column blocks `2 c` and `2 c + 1` as 16-bit pairs (rows g, g + 8, g,
/// g + 8).
#[device]
fn pack_probabilities<const HALF: bool>(acc_s: &[f32; 64], p: &mut [u32; 32]) {
    for c in 0..8usize {
        p[4 * c] = pack::<HALF>(acc_s[8 * c], acc_s[8 * c + 1]);
        p[4 * c + 1] = pack::<HALF>(acc_s[8 * c + 2], acc_s[8 * c + 3]);
        p[4 * c + 2] = pack::<HALF>(acc_s[8 * c + 4], acc_s[8 * c + 5]);
        p[4 * c + 3] = pack::<HALF>(acc_s[8 * c + 6], acc_s[8 * c + 7]);
    }
}

/// The forward pass for head dimension `D` (64 or 128, `O_REGS` = `D / 2`) on 16-bit
/// inputs `T` (bf16, or f16 with `HALF`); see the module's documentation. `q_map` is
/// `D × seq × batch·heads` in boxes of `64 × 128 × 1`; `k_map` and `v_map` the same over
/// `batch·kv_heads`.
#[kernel(arch = "sm_90a", max_threads = 384)]
#[allow(clippy::too_many_arguments)]
pub fn attention_wgmma<
    T: DeviceScalar + WgmmaElement,
    const D: usize,
    const HALF: bool,
    const O_REGS: usize,
>(
    q_map: TensorMap,
    k_map: TensorMap,
    v_map: TensorMap,
    o: &mut [T],
    lse: &mut [f32],
    seq: u32,
    heads: u32,
    kv_heads: u32,
    scale: f32,
    causal: bool,
) {
    let smem = dynamic_shared::<u32>();
    let t = thread_idx().x;
    let warpgroup = t / 128;
    let raw = shared_address(&smem[0]);
    let q_tile_base = raw + (1024 - raw % 1024) % 1024;
    let boxes = (D / 64) as u32;
    let tile_bytes = boxes * BOX_BYTES;
    // K stage s at `kv + 2 s tile`, V stage s right after it.
    let kv = q_tile_base + tile_bytes;
    // Barriers: Q's, then the K ring's and the V ring's (two stages each: full, full,
    // empty, empty), 8 bytes each. Tile j of the keys is item j of both rings.
    let bars = q_tile_base + 5 * tile_bytes;
    let q_full = bars;
    let k_ring = Ring::new(bars + 8, 2);
    let v_ring = Ring::new(bars + 40, 2);
    let s = seq as usize;
    let tiles_q = (s + BLOCK_Q - 1) / BLOCK_Q;
    // The longest blocks (causal: the last query tiles) first.
    let q_tile = if causal {
        tiles_q - 1 - block_idx().x as usize
    } else {
        block_idx().x as usize
    };
    let head = block_idx().y as usize;
    let batch = block_idx().z as usize;
    let kv_head = head / (heads / kv_heads) as usize;
    let bh = batch * heads as usize + head;
    let bh_kv = batch * kv_heads as usize + kv_head;
    let row0 = q_tile * BLOCK_Q;
    let tiles = if causal {
        ((row0 + BLOCK_Q).min(s) + BLOCK_KV - 1) / BLOCK_KV
    } else {
        (s + BLOCK_KV - 1) / BLOCK_KV
    };
    if t == 0 {
        mbarrier_init(q_full, 1);
        // Full: the producer's arrival and the TMA bytes; empty: both consumers. (The rings'
        // `init` ends in the fence that publishes every barrier initialised so far, Q's too.)
        k_ring.init(1, 2);
        v_ring.init(1, 2);
    }
    sync_threads();
    if warpgroup == 0 {
        setmaxnreg_dec::<24>();
        if t == 0 {
            let q_address = tensor_map_address(&q_map);
            let k_address = tensor_map_address(&k_map);
            let v_address = tensor_map_address(&v_map);
            mbarrier_arrive_expect_tx(q_full, tile_bytes);
            for half in 0..boxes {
                tma_load_3d(
                    q_tile_base + half * BOX_BYTES,
                    q_address,
                    (64 * half) as i32,
                    row0 as i32,
                    bh as i32,
                    q_full,
                );
            }
            for j in 0..tiles as u32 {
                let stage = k_ring.stage(j);
                let k_tile = kv + 2 * stage * tile_bytes;
                let key0 = j as i32 * BLOCK_KV as i32;
                // Both consumers have released this stage's previous K tile.
                k_ring.acquire(j);
                let k_full = k_ring.full(j);
                mbarrier_arrive_expect_tx(k_full, tile_bytes);
                for half in 0..boxes {
                    let x = (64 * half) as i32;
                    tma_load_3d(
                        k_tile + half * BOX_BYTES,
                        k_address,
                        x,
                        key0,
                        bh_kv as i32,
                        k_full,
                    );
                }
                v_ring.acquire(j);
                let v_full = v_ring.full(j);
                mbarrier_arrive_expect_tx(v_full, tile_bytes);
                for half in 0..boxes {
                    let x = (64 * half) as i32;
                    tma_load_3d(
                        k_tile + tile_bytes + half * BOX_BYTES,
                        v_address,
                        x,
                        key0,
                        bh_kv as i32,
                        v_full,
                    );
                }
            }
        }
    } else {
        setmaxnreg_inc::<240>();
        let consumer = warpgroup - 1;
        let lane = (t % 32) as usize;
        let warp = ((t % 128) / 32) as usize;
        let g = lane / 4;
        let tq = lane % 4;
        // This thread's two rows of the block (g and g + 8 of its warp's 16).
        let row_lo = row0 + consumer as usize * 64 + warp * 16 + g;
        let first_row = row0 + consumer as usize * 64;
        let scale_log2 = scale * core::f32::consts::LOG2_E;
        let mut acc_s = [0.0f32; 64];
        let mut acc_o = [0.0f32; O_REGS];
        let mut p = [0u32; 32];
        let mut row_max = [-f32::INFINITY; 2];
        let mut row_sum = [0.0f32; 2];
        // This consumer's 64 rows of Q: 64 rows × 128 bytes into each box.
        let q_rows = q_tile_base + consumer * (BOX_BYTES / 2);
        mbarrier_wait_parity(q_full, 0);
        let masked = |j: usize| {
            let key0 = j * BLOCK_KV;
            (causal && key0 + BLOCK_KV > first_row) || key0 + BLOCK_KV > s
        };
        // Tile 0's scores and probabilities first; then step j (1..tiles) issues
        // S_j = Q K_jᵀ and O += P_(j-1) V_(j-1) together and runs the softmax of S_j while
        // the second product is still on the tensor cores; the last tile's product ends.
        // The wgmmas are written out in each place (not behind branches) so that ptxas
        // sees straight-line pipeline stages and keeps the products asynchronous.
        // Consumer 0 issues first; every issue step is one turn (`tiles + 1` each), and
        // consumer 1 passes its last turn at the start instead of the end, so every
        // arrival on a turn barrier meets a wait.
        if consumer == 1 {
            pass_turn(consumer);
        }
        k_ring.wait(0);
        wait_turn(consumer);
        wgmma_fence();
        scores::<T, D>(&mut acc_s, q_rows, kv);
        wgmma_commit_group();
        pass_turn(consumer);
        wgmma_wait_group::<0>();
        if t % 128 == 0 {
            k_ring.release(0);
        }
        if masked(0) {
            mask(&mut acc_s, row_lo, 0, s, causal, tq);
        }
        let mut correction = [1.0f32; 2];
        softmax(
            &mut acc_s,
            &mut row_max,
            &mut row_sum,
            &mut correction,
            scale_log2,
        );
        pack_probabilities::<HALF>(&acc_s, &mut p);
        for j in 1..tiles {
            let g = j as u32;
            let stage = k_ring.stage(g);
            let previous = v_ring.stage(g - 1);
            k_ring.wait(g);
            v_ring.wait(g - 1);
            wait_turn(consumer);
            wgmma_fence();
            scores::<T, D>(&mut acc_s, q_rows, kv + 2 * stage * tile_bytes);
            wgmma_commit_group();
            accumulate::<T, O_REGS>(&mut acc_o, &p, kv + (2 * previous + 1) * tile_bytes);
            wgmma_commit_group();
            pass_turn(consumer);
            // The scores have landed (the product with V may still run): K's stage is free.
            wgmma_wait_group::<1>();
            if t % 128 == 0 {
                k_ring.release(g);
            }
            if masked(j) {
                mask(&mut acc_s, row_lo, j * BLOCK_KV, s, causal, tq);
            }
            softmax(
                &mut acc_s,
                &mut row_max,
                &mut row_sum,
                &mut correction,
                scale_log2,
            );
            wgmma_wait_group::<0>();
            if t % 128 == 0 {
                v_ring.release(g - 1);
            }
            rescale::<O_REGS>(&mut acc_o, &correction);
            pack_probabilities::<HALF>(&acc_s, &mut p);
        }
        let last = tiles as u32 - 1;
        v_ring.wait(last);
        wait_turn(consumer);
        wgmma_fence();
        let last_stage = v_ring.stage(last);
        accumulate::<T, O_REGS>(&mut acc_o, &p, kv + (2 * last_stage + 1) * tile_bytes);
        wgmma_commit_group();
        if consumer == 0 {
            pass_turn(consumer);
        }
        wgmma_wait_group::<0>();
        // O / l as 16-bit pairs, and the log-sum-exp (natural log) of each row inside the
        // sequence. SAFETY: the words are `o`'s own memory (`D` columns per row), each
        // written by one thread only.
        let out = unsafe { slice_at_mut::<u32>(global_address(&o[0]) as usize, o.len() / 2) };
        for half in 0..2usize {
            let row = row_lo + 8 * half;
            if row < s {
                let inv = 1.0 / row_sum[half];
                let first = (bh * s + row) * D;
                for n in 0..D / 8 {
                    out[(first + n * 8 + 2 * tq) / 2] = pack::<HALF>(
                        acc_o[4 * n + 2 * half] * inv,
                        acc_o[4 * n + 2 * half + 1] * inv,
                    );
                }
                if tq == 0 {
                    lse[bh * s + row] =
                        (row_max[half] + row_sum[half].log2()) * core::f32::consts::LN_2;
                }
            }
        }
    }
}

/// The tensor maps' name of `T`.
fn map_element<T: Element>() -> cudajit::tensor_map::TensorMapElement {
    use cudajit::tensor_map::TensorMapElement;
    if T::F16 {
        TensorMapElement::F16
    } else {
        TensorMapElement::Bf16
    }
}

/// The layout of `[outer, seq, dim]` (`outer` = batch · heads) the tensor maps see: boxes
/// of 64 × 128 × 1, 128-byte swizzled, zeros outside the sequence.
fn tensor_layout<T: Element>(
    dim: usize,
    seq: usize,
    outer: usize,
) -> cudajit::tensor_map::TensorMapLayout {
    use cudajit::tensor_map::{TensorMapLayout, TensorMapSwizzle};
    TensorMapLayout::tiled(
        map_element::<T>(),
        &[dim as u64, seq as u64, outer as u64],
        &[64, BLOCK_KV as u32, 1],
    )
    .with_swizzle(TensorMapSwizzle::B128)
}

/// Memory a tensor map can describe: a CUDA slice (the driver encodes the map) or a
/// portable buffer of the GPU or the simulator (`TensorMap::encode_buffer`).
pub trait MapSource {
    /// The map of `layout` over this memory.
    fn tensor_map(
        &self,
        layout: &cudajit::tensor_map::TensorMapLayout,
    ) -> Result<TensorMap<'_>, cudajit::tensor_map::TensorMapError>;
}

impl<T: cudarc::driver::DeviceRepr> MapSource for cudajit::CudaSlice<T> {
    fn tensor_map(
        &self,
        layout: &cudajit::tensor_map::TensorMapLayout,
    ) -> Result<TensorMap<'_>, cudajit::tensor_map::TensorMapError> {
        TensorMap::encode(layout, self)
    }
}

impl<T: cudajit::BufferElement> MapSource for cudajit::Buffer<T> {
    fn tensor_map(
        &self,
        layout: &cudajit::tensor_map::TensorMapLayout,
    ) -> Result<TensorMap<'_>, cudajit::tensor_map::TensorMapError> {
        TensorMap::encode_buffer(layout, self)
    }
}

/// The launch of one block per 128 query rows of each head, or an error for a head
/// dimension the kernel does not take.
fn launch_config(
    (batch, heads, _, seq, dim): (usize, usize, usize, usize, usize),
) -> super::Result<cudajit::LaunchConfig> {
    if dim != 64 && dim != 128 {
        return Err(format!("head dimension {dim}: the wgmma kernel takes 64 or 128").into());
    }
    Ok(cudajit::LaunchConfig::new(
        (seq.div_ceil(BLOCK_Q) as u32, heads as u32, batch as u32),
        THREADS,
    )
    .with_shared_mem(shared_bytes(dim)))
}

/// Launches [`attention_wgmma`] on `stream` (a CUDA stream, or a portable one of the GPU or
/// the simulator) for `[batch, heads, seq, dim]` Q, O and `[batch, kv_heads, seq, dim]` K,
/// V (`dim` 64 or 128; `shape` = (batch, heads, kv_heads, seq, dim)), the tensor maps
/// encoded over Q's, K's and V's memory.
#[allow(clippy::too_many_arguments)]
pub fn launch<T: Element, X: MapSource + cudajit::KernelSlice<T>>(
    stream: &impl cudajit::LaunchStream,
    shape: (usize, usize, usize, usize, usize),
    causal: bool,
    q: &X,
    k: &X,
    v: &X,
    o: &mut impl cudajit::KernelSliceMut<T>,
    lse: &mut impl cudajit::KernelSliceMut<f32>,
) -> super::Result<()> {
    let config = launch_config(shape)?;
    let (batch, heads, kv_heads, seq, dim) = shape;
    let q_map = q.tensor_map(&tensor_layout::<T>(dim, seq, batch * heads))?;
    let k_map = k.tensor_map(&tensor_layout::<T>(dim, seq, batch * kv_heads))?;
    let v_map = v.tensor_map(&tensor_layout::<T>(dim, seq, batch * kv_heads))?;
    let args = (
        seq as u32,
        heads as u32,
        kv_heads as u32,
        1.0 / (dim as f32).sqrt(),
        causal,
    );
    // The specialisation's constants are type-level: each form is its own instance.
    macro_rules! form {
        ($d:literal, $half:literal, $regs:literal) => {
            attention_wgmma::launch::<T, $d, $half, $regs>(
                stream, config, q_map, k_map, v_map, o, lse, args.0, args.1, args.2, args.3, args.4,
            )?
        };
    }
    match (dim, T::F16) {
        (64, false) => form!(64, false, 32),
        (64, true) => form!(64, true, 32),
        (_, false) => form!(128, false, 64),
        (_, true) => form!(128, true, 64),
    }
    Ok(())
}
