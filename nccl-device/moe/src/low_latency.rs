//! The low-latency kernels, written in the kernel language over LSA: dispatch writes each
//! token straight into its experts' receive slots on the ranks that own them, combine
//! reads the experts' outputs back from those ranks and sums them with the top-k weights.
//!
//! Every buffer is a symmetric window (the same offsets on every rank):
//!
//! | window | elements | per rank |
//! | --- | --- | --- |
//! | `tokens` | `bf16` | `[max tokens × hidden]`, the rank's tokens |
//! | `topk_idx` | `i32` | `[max tokens × top-k]`, each token's experts (`-1`: none) |
//! | `topk_weights` | `f32` | `[max tokens × top-k]`, their weights |
//! | `slots` | `i32` | `[max tokens × top-k]`, where dispatch put each (token, expert) |
//! | `received` | `bf16` | `[local experts × ranks × max tokens × hidden]` |
//! | `received_counts` | `i32` | `[local experts × ranks]`, tokens per (expert, source) |
//! | `expert_counts` | `i32` | `[local experts]`, tokens per expert |
//! | `expert_output` | `bf16` | as `received`: what the experts made of it |
//! | `combined` | `bf16` | `[max tokens × hidden]`, the weighted sums |
//!
//! Expert `e` lives on LSA rank `e / experts_per_rank` as its local expert
//! `e % experts_per_rank`. The slot of token `t` at expert `e` is the number of this rank's
//! tokens before `t` routed to `e`, so the receive layout (and every output) is
//! deterministic, and equal to [`super::reference`]'s.

use cudajit_core::device::{
    block_dim, block_idx, grid_dim, shared_array, slice_at, slice_at_mut, sync_threads, thread_idx,
    vload8, vstore8,
};

use super::fp8::{quantize_row, scales_per_token};
use super::shape::{MoeShape, MAX_THREADS, MAX_TOP_K};
use super::steps::{copy_row, rank_in_chunk};
use cudajit::bf16;
use cudajit::device;
use cudajit::kernel;
use cudajit_nccl_device::{self as nccl, DevComm, MemoryOrder, Window};

/// Dispatch in one kernel: the entry barrier (every peer is done with its receive buffer),
/// the sends of [`send_tokens`], the completion barrier (every peer's tokens and counts
/// have landed here), then the totals per local expert.
#[kernel]
#[allow(clippy::too_many_arguments)]
pub fn low_latency_dispatch(
    comm: DevComm,
    tokens: Window,
    topk_idx: Window,
    slots: Window,
    received: Window,
    received_scales: Window,
    received_counts: Window,
    expert_counts: Window,
    shape: MoeShape,
    #[comptime] fp8: bool,
) {
    let mut barrier = nccl::lsa_barrier_session(&comm, block_idx().x);
    nccl::lsa_session_sync(&mut barrier, MemoryOrder::Acquire);
    send_tokens(
        &comm,
        tokens,
        topk_idx,
        slots,
        received,
        received_scales,
        received_counts,
        &shape,
        fp8,
    );
    nccl::lsa_session_sync(&mut barrier, MemoryOrder::AcqRel);
    // CTA `b` of every rank sent the experts `e ≡ b (mod grid)`: after this barrier all of
    // theirs are here, so CTA `b` counts the local ones among them.
    let ranks = nccl::lsa_size(&comm) as usize;
    let per_rank = shape.experts as usize / ranks;
    let first = nccl::lsa_rank(&comm) as usize * per_rank;
    let ctas = grid_dim().x as usize;
    let mut local = thread_idx().x as usize;
    while local < per_rank {
        if (first + local) % ctas == block_idx().x as usize {
            count_expert(received_counts, expert_counts, local, ranks);
        }
        local += block_dim().x as usize;
    }
}

/// The send half of dispatch, for overlapping the transfer with other work: the entry
/// barrier and the sends. The received data is visible only after
/// [`low_latency_dispatch_complete`] on every rank.
#[kernel]
#[allow(clippy::too_many_arguments)]
pub fn low_latency_dispatch_send(
    comm: DevComm,
    tokens: Window,
    topk_idx: Window,
    slots: Window,
    received: Window,
    received_scales: Window,
    received_counts: Window,
    shape: MoeShape,
    #[comptime] fp8: bool,
) {
    let mut barrier = nccl::lsa_barrier_session(&comm, block_idx().x);
    nccl::lsa_session_sync(&mut barrier, MemoryOrder::Acquire);
    send_tokens(
        &comm,
        tokens,
        topk_idx,
        slots,
        received,
        received_scales,
        received_counts,
        &shape,
        fp8,
    );
}

/// The completion of [`low_latency_dispatch_send`]: a barrier after which every peer's
/// sends (its whole previous kernel) are visible here, then the totals per local expert.
#[kernel]
pub fn low_latency_dispatch_complete(
    comm: DevComm,
    received_counts: Window,
    expert_counts: Window,
    experts: u64,
) {
    let mut barrier = nccl::lsa_barrier_session(&comm, block_idx().x);
    nccl::lsa_session_sync(&mut barrier, MemoryOrder::AcqRel);
    let ranks = nccl::lsa_size(&comm) as usize;
    let per_rank = experts as usize / ranks;
    let mut local = block_idx().x as usize * block_dim().x as usize + thread_idx().x as usize;
    while local < per_rank {
        count_expert(received_counts, expert_counts, local, ranks);
        local += grid_dim().x as usize * block_dim().x as usize;
    }
}

/// Combine: the entry barrier (every rank's experts have written their outputs), then per
/// token the sum over its experts `j` of `weight[j] * output[j]`, in `f32` with one fused
/// multiply-add per term in `j` order, rounded to `bf16` once; then the exit barrier (no
/// rank overwrites its expert outputs before every peer has read them).
#[kernel]
pub fn low_latency_combine(
    comm: DevComm,
    expert_output: Window,
    topk_idx: Window,
    topk_weights: Window,
    slots: Window,
    combined: Window,
    shape: MoeShape,
) {
    let mut barrier = nccl::lsa_barrier_session(&comm, block_idx().x);
    nccl::lsa_session_sync(&mut barrier, MemoryOrder::Acquire);
    let ranks = nccl::lsa_size(&comm) as usize;
    let me = nccl::lsa_rank(&comm) as usize;
    let tokens = shape.tokens as usize;
    let top_k = shape.top_k as usize;
    let hidden = shape.hidden as usize;
    let experts = shape.experts as usize;
    let per_rank = experts / ranks;
    let pairs = tokens * top_k;
    let expert_of = unsafe { slice_at::<i32>(nccl::local_address(topk_idx, 0), pairs) };
    let weight_of = unsafe { slice_at::<f32>(nccl::local_address(topk_weights, 0), pairs) };
    let slot_of = unsafe { slice_at::<i32>(nccl::local_address(slots, 0), pairs) };
    // The token's sources (0: no expert) and weights, shared by the CTA.
    let sources = shared_array::<usize>(MAX_TOP_K);
    let weights = shared_array::<f32>(MAX_TOP_K);
    let mut t = block_idx().x as usize;
    while t < tokens {
        let j = thread_idx().x as usize;
        if j < top_k {
            let e = expert_of[t * top_k + j];
            if e >= 0 && (e as usize) < experts {
                let owner = e as usize / per_rank;
                let local = e as usize % per_rank;
                let row = (local * ranks + me) * shape.max_tokens as usize
                    + slot_of[t * top_k + j] as usize;
                sources[j] = nccl::lsa_address(expert_output, row * hidden * 2, owner as i32);
                weights[j] = weight_of[t * top_k + j];
            } else {
                sources[j] = 0;
            }
        }
        sync_threads();
        let out = nccl::local_address(combined, t * hidden * 2);
        weighted_sum_row(sources, weights, top_k, out, hidden);
        // The table is rewritten for the next token.
        sync_threads();
        t += grid_dim().x as usize;
    }
    nccl::lsa_session_sync(&mut barrier, MemoryOrder::Release);
}

/// The sends of dispatch, by every thread of the CTA: for each expert `e ≡ block (mod
/// grid)`, this rank's tokens routed to it, in token order, into slots `0, 1, ..` of
/// block `[e's local index][this rank]` of `received` on `e`'s rank (a warp per token,
/// 16-byte vectors when rows start at 16-byte boundaries; with `fp8`, quantised to e4m3
/// bytes with a scale per 128 channels in `received_scales`), the slot of each (token, k)
/// into `slots`, and the count into `received_counts` on `e`'s rank.
#[device]
#[allow(clippy::too_many_arguments)]
fn send_tokens(
    comm: &DevComm,
    tokens: Window,
    topk_idx: Window,
    slots: Window,
    received: Window,
    received_scales: Window,
    received_counts: Window,
    shape: &MoeShape,
    fp8: bool,
) {
    let ranks = nccl::lsa_size(comm) as usize;
    let me = nccl::lsa_rank(comm) as usize;
    let n = shape.tokens as usize;
    let top_k = shape.top_k as usize;
    let hidden = shape.hidden as usize;
    let experts = shape.experts as usize;
    let per_rank = experts / ranks;
    let pairs = n * top_k;
    let expert_of = unsafe { slice_at::<i32>(nccl::local_address(topk_idx, 0), pairs) };
    let slot_of = unsafe { slice_at_mut::<i32>(nccl::local_address(slots, 0), pairs) };
    let blocks = scales_per_token(hidden);
    let warp = (thread_idx().x / 32) as usize;
    let warps = (block_dim().x / 32) as usize;
    // Hits per warp of the chunk, and the chunk's tokens routed to `e` in token order.
    let warp_hits = shared_array::<u32>(32);
    let chosen = shared_array::<u32>(MAX_THREADS);
    let mut e = block_idx().x as usize;
    while e < experts {
        let owner = e / per_rank;
        let local = e % per_rank;
        let block = (local * ranks + me) * shape.max_tokens as usize;
        let mut sent = 0usize;
        let mut first = 0usize;
        while first < n {
            let t = first + thread_idx().x as usize;
            let mut hit = false;
            if t < n {
                let mut j = 0;
                while j < top_k {
                    if expert_of[t * top_k + j] == e as i32 {
                        hit = true;
                    }
                    j += 1;
                }
            }
            let (index, hits) = rank_in_chunk(hit, warp_hits);
            if hit {
                chosen[index as usize] = t as u32;
                let mut j = 0;
                while j < top_k {
                    if expert_of[t * top_k + j] == e as i32 {
                        slot_of[t * top_k + j] = (sent + index as usize) as i32;
                    }
                    j += 1;
                }
            }
            sync_threads();
            let mut m = warp;
            while m < hits as usize {
                let token = chosen[m] as usize;
                let source = nccl::local_address(tokens, token * hidden * 2);
                let row = block + sent + m;
                if fp8 {
                    let bytes = nccl::lsa_address(received, row * hidden, owner as i32);
                    let scales = nccl::lsa_address(received_scales, row * blocks * 4, owner as i32);
                    quantize_row(source, bytes, scales, hidden);
                } else {
                    let destination = nccl::lsa_address(received, row * hidden * 2, owner as i32);
                    copy_row(source, destination, hidden);
                }
                m += warps;
            }
            // `warp_hits` and `chosen` are rewritten by the next chunk.
            sync_threads();
            sent += hits as usize;
            first += block_dim().x as usize;
        }
        if thread_idx().x == 0 {
            let at = (local * ranks + me) * 4;
            let count = unsafe {
                slice_at_mut::<i32>(nccl::lsa_address(received_counts, at, owner as i32), 1)
            };
            count[0] = sent as i32;
        }
        e += grid_dim().x as usize;
    }
}

/// `out = sum over j < top_k with sources[j] != 0 of weights[j] * row j`, by the CTA's
/// threads: `f32` fused multiply-adds in `j` order from 0, rounded to `bf16` once; 16-byte
/// vectors when `hidden` is a multiple of 8.
#[device]
fn weighted_sum_row(sources: &[usize], weights: &[f32], top_k: usize, out: usize, hidden: usize) {
    let to = unsafe { slice_at_mut::<bf16>(out, hidden) };
    if hidden % 8 == 0 {
        let mut v = thread_idx().x as usize;
        while v < hidden / 8 {
            let mut a = 0.0f32;
            let mut b = 0.0f32;
            let mut c = 0.0f32;
            let mut d = 0.0f32;
            let mut e = 0.0f32;
            let mut f = 0.0f32;
            let mut g = 0.0f32;
            let mut h = 0.0f32;
            let mut j = 0;
            while j < top_k {
                if sources[j] != 0 {
                    let w = weights[j];
                    let row = unsafe { slice_at::<bf16>(sources[j], hidden) };
                    let (xa, xb, xc, xd, xe, xf, xg, xh) = vload8(row, v);
                    a = w.mul_add(xa.to_f32(), a);
                    b = w.mul_add(xb.to_f32(), b);
                    c = w.mul_add(xc.to_f32(), c);
                    d = w.mul_add(xd.to_f32(), d);
                    e = w.mul_add(xe.to_f32(), e);
                    f = w.mul_add(xf.to_f32(), f);
                    g = w.mul_add(xg.to_f32(), g);
                    h = w.mul_add(xh.to_f32(), h);
                }
                j += 1;
            }
            vstore8(
                to,
                v,
                (
                    bf16::from_f32(a),
                    bf16::from_f32(b),
                    bf16::from_f32(c),
                    bf16::from_f32(d),
                    bf16::from_f32(e),
                    bf16::from_f32(f),
                    bf16::from_f32(g),
                    bf16::from_f32(h),
                ),
            );
            v += block_dim().x as usize;
        }
    } else {
        let mut i = thread_idx().x as usize;
        while i < hidden {
            let mut sum = 0.0f32;
            let mut j = 0;
            while j < top_k {
                if sources[j] != 0 {
                    let row = unsafe { slice_at::<bf16>(sources[j], hidden) };
                    sum = weights[j].mul_add(row[i].to_f32(), sum);
                }
                j += 1;
            }
            to[i] = bf16::from_f32(sum);
            i += block_dim().x as usize;
        }
    }
}

/// `expert_counts[local] = sum over source ranks of received_counts[local][source]`.
#[device]
fn count_expert(received_counts: Window, expert_counts: Window, local: usize, ranks: usize) {
    let from = unsafe {
        slice_at::<i32>(
            nccl::local_address(received_counts, local * ranks * 4),
            ranks,
        )
    };
    let mut sum = 0i32;
    let mut r = 0;
    while r < ranks {
        sum += from[r];
        r += 1;
    }
    let to = unsafe { slice_at_mut::<i32>(nccl::local_address(expert_counts, local * 4), 1) };
    to[0] = sum;
}
