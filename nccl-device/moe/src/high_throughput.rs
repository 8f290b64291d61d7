//! The high-throughput kernels, written in the kernel language over LSA: a layout pass
//! that counts and places every token per destination rank (as NCCL EP's handle does),
//! dispatch into a flat `[received tokens × hidden]` buffer with each received token's
//! routing (top-k indices local to the receiving rank, `-1` elsewhere, and weights), and
//! combine back to `[tokens × hidden]`, with the backward form that also brings back one
//! weight per (token, expert).
//!
//! A token goes once to each rank that holds one of its experts, whatever the number of
//! them there. Rank `r` receives its sources' tokens in source order: source `s`'s start
//! at row `offsets[s]` (the counts of the sources before it), in token order; token `t` of
//! source `s` is at `offsets[s] + positions_s[t][r]`.
//!
//! Symmetric windows (per rank):
//!
//! | window | elements | per rank |
//! | --- | --- | --- |
//! | `positions` | `i32` | `[max tokens × ranks]`: the token's place among this rank's tokens to each rank, `-1` if it does not go there |
//! | `received_counts` | `i32` | `[ranks]`: tokens from each source |
//! | `source_expert_counts` | `i32` | `[ranks × local experts]`: (token, expert) pairs from each source |
//! | `expert_counts` | `i32` | `[local experts]`: tokens each local expert received |
//! | `received_offsets` | `i32` | `[ranks + 1]`: where each source's tokens start; the last is the total |
//! | `received` | `bf16` | `[ranks × max tokens × hidden]` (the first total rows hold tokens) |
//! | `received_topk_idx`, `received_topk_weights` | `i32`, `f32` | `[ranks × max tokens × top-k]` |
//! | `expert_output` | `bf16` | as `received`: each received token's result on this rank |
//! | `combined_weights` | `f32` | `[max tokens × top-k]`: the backward form's weights |

use cudajit_core::device::{
    atomic_add, block_dim, block_idx, grid_dim, shared_array, slice_at, slice_at_mut, sync_threads,
    thread_idx, vload8, vstore8,
};

use super::fp8::{quantize_row, scales_per_token};
use super::shape::{MoeShape, MAX_LOCAL_EXPERTS, MAX_RANKS};
use super::steps::{copy_row, rank_in_chunk};
use cudajit::bf16;
use cudajit::device;
use cudajit::kernel;
use cudajit_nccl_device::{self as nccl, DevComm, MemoryOrder, Window};

/// The layout pass: entry barrier (every peer is done with its previous layout); CTA `b`
/// takes destination ranks `r ≡ b (mod grid)`: scans this rank's tokens in chunks, places
/// each token that has an expert on `r` (`positions`), counts the (token, expert) pairs
/// per expert of `r`, and stores both counts into `r`'s windows; completion barrier; then
/// CTA `rank mod grid`, which every source's counts for this rank came from, writes the
/// offsets and the totals per local expert.
#[kernel]
#[allow(clippy::too_many_arguments)]
pub fn high_throughput_layout(
    comm: DevComm,
    topk_idx: Window,
    positions: Window,
    received_counts: Window,
    source_expert_counts: Window,
    expert_counts: Window,
    received_offsets: Window,
    shape: MoeShape,
) {
    let mut barrier = nccl::lsa_barrier_session(&comm, block_idx().x);
    nccl::lsa_session_sync(&mut barrier, MemoryOrder::Acquire);
    let ranks = nccl::lsa_size(&comm) as usize;
    let me = nccl::lsa_rank(&comm) as usize;
    let n = shape.tokens as usize;
    let top_k = shape.top_k as usize;
    let per_rank = shape.experts as usize / ranks;
    let expert_of = unsafe { slice_at::<i32>(nccl::local_address(topk_idx, 0), n * top_k) };
    let position_of = unsafe { slice_at_mut::<i32>(nccl::local_address(positions, 0), n * ranks) };
    let warp_hits = shared_array::<u32>(32);
    let expert_hits = shared_array::<u32>(MAX_LOCAL_EXPERTS);
    let mut r = block_idx().x as usize;
    while r < ranks {
        let mut i = thread_idx().x as usize;
        while i < per_rank {
            expert_hits[i] = 0;
            i += block_dim().x as usize;
        }
        sync_threads();
        let low = (r * per_rank) as i32;
        let high = low + per_rank as i32;
        let mut sent = 0usize;
        let mut first = 0usize;
        while first < n {
            let t = first + thread_idx().x as usize;
            let mut hit = false;
            if t < n {
                let mut j = 0;
                while j < top_k {
                    let e = expert_of[t * top_k + j];
                    if e >= low && e < high {
                        hit = true;
                        // Each distinct expert of the token once.
                        let mut again = false;
                        let mut before = 0;
                        while before < j {
                            if expert_of[t * top_k + before] == e {
                                again = true;
                            }
                            before += 1;
                        }
                        if !again {
                            atomic_add(&mut expert_hits[(e - low) as usize], 1);
                        }
                    }
                    j += 1;
                }
            }
            let (index, hits) = rank_in_chunk(hit, warp_hits);
            if t < n {
                position_of[t * ranks + r] = if hit {
                    (sent + index as usize) as i32
                } else {
                    -1
                };
            }
            // `warp_hits` is rewritten by the next chunk.
            sync_threads();
            sent += hits as usize;
            first += block_dim().x as usize;
        }
        if thread_idx().x == 0 {
            let count = unsafe {
                slice_at_mut::<i32>(nccl::lsa_address(received_counts, me * 4, r as i32), 1)
            };
            count[0] = sent as i32;
        }
        let at = nccl::lsa_address(source_expert_counts, me * per_rank * 4, r as i32);
        let to = unsafe { slice_at_mut::<i32>(at, per_rank) };
        let mut i = thread_idx().x as usize;
        while i < per_rank {
            to[i] = expert_hits[i] as i32;
            i += block_dim().x as usize;
        }
        // `expert_hits` is cleared for the next rank.
        sync_threads();
        r += grid_dim().x as usize;
    }
    nccl::lsa_session_sync(&mut barrier, MemoryOrder::AcqRel);
    if block_idx().x as usize == me % grid_dim().x as usize {
        let counts = unsafe { slice_at::<i32>(nccl::local_address(received_counts, 0), ranks) };
        if thread_idx().x == 0 {
            let offsets =
                unsafe { slice_at_mut::<i32>(nccl::local_address(received_offsets, 0), ranks + 1) };
            let mut running = 0i32;
            let mut s = 0;
            while s < ranks {
                offsets[s] = running;
                running += counts[s];
                s += 1;
            }
            offsets[ranks] = running;
        }
        let pairs = unsafe {
            slice_at::<i32>(
                nccl::local_address(source_expert_counts, 0),
                ranks * per_rank,
            )
        };
        let totals =
            unsafe { slice_at_mut::<i32>(nccl::local_address(expert_counts, 0), per_rank) };
        let mut i = thread_idx().x as usize;
        while i < per_rank {
            let mut sum = 0i32;
            let mut s = 0;
            while s < ranks {
                sum += pairs[s * per_rank + i];
                s += 1;
            }
            totals[i] = sum;
            i += block_dim().x as usize;
        }
    }
}

/// Dispatch after [`high_throughput_layout`]: entry barrier (every peer finished its
/// layout and its use of the previous tokens); a warp per token stores its row into every
/// rank it goes to, at that rank's offset for this rank plus the token's position, with
/// its top-k indices made local to that rank (`-1` for experts elsewhere) and its
/// weights (with `fp8`, the row as e4m3 bytes and a scale per 128 channels in
/// `received_scales`); completion barrier (every peer's tokens have landed here).
#[kernel]
#[allow(clippy::too_many_arguments)]
pub fn high_throughput_dispatch(
    comm: DevComm,
    tokens: Window,
    topk_idx: Window,
    topk_weights: Window,
    positions: Window,
    received_offsets: Window,
    received: Window,
    received_scales: Window,
    received_topk_idx: Window,
    received_topk_weights: Window,
    shape: MoeShape,
    #[comptime] fp8: bool,
) {
    let mut barrier = nccl::lsa_barrier_session(&comm, block_idx().x);
    nccl::lsa_session_sync(&mut barrier, MemoryOrder::Acquire);
    let ranks = nccl::lsa_size(&comm) as usize;
    let n = shape.tokens as usize;
    let top_k = shape.top_k as usize;
    let hidden = shape.hidden as usize;
    let per_rank = shape.experts as usize / ranks;
    let blocks = scales_per_token(hidden);
    let bases = shared_array::<usize>(MAX_RANKS);
    rank_bases(&comm, received_offsets, bases);
    let expert_of = unsafe { slice_at::<i32>(nccl::local_address(topk_idx, 0), n * top_k) };
    let weight_of = unsafe { slice_at::<f32>(nccl::local_address(topk_weights, 0), n * top_k) };
    let position_of = unsafe { slice_at::<i32>(nccl::local_address(positions, 0), n * ranks) };
    let warps = (block_dim().x / 32) as usize;
    let lane = (thread_idx().x % 32) as usize;
    let mut t = block_idx().x as usize * warps + (thread_idx().x / 32) as usize;
    while t < n {
        let mut r = 0;
        while r < ranks {
            let position = position_of[t * ranks + r];
            if position >= 0 {
                let row = bases[r] + position as usize;
                let source = nccl::local_address(tokens, t * hidden * 2);
                if fp8 {
                    let bytes = nccl::lsa_address(received, row * hidden, r as i32);
                    let scales = nccl::lsa_address(received_scales, row * blocks * 4, r as i32);
                    quantize_row(source, bytes, scales, hidden);
                } else {
                    let destination = nccl::lsa_address(received, row * hidden * 2, r as i32);
                    copy_row(source, destination, hidden);
                }
                if lane < top_k {
                    let at = (row * top_k + lane) * 4;
                    let idx = unsafe {
                        slice_at_mut::<i32>(nccl::lsa_address(received_topk_idx, at, r as i32), 1)
                    };
                    let weight = unsafe {
                        slice_at_mut::<f32>(
                            nccl::lsa_address(received_topk_weights, at, r as i32),
                            1,
                        )
                    };
                    let e = expert_of[t * top_k + lane];
                    let low = (r * per_rank) as i32;
                    idx[0] = if e >= low && e < low + per_rank as i32 {
                        e - low
                    } else {
                        -1
                    };
                    weight[0] = weight_of[t * top_k + lane];
                }
            }
            r += 1;
        }
        t += grid_dim().x as usize * warps;
    }
    nccl::lsa_session_sync(&mut barrier, MemoryOrder::AcqRel);
}

/// Combine: entry barrier (every rank wrote its received tokens' results); CTA per token:
/// the sum, in `f32` in rank order, of the token's rows of `expert_output` on the ranks it
/// went to, rounded to `bf16` once. With `with_weights` (the backward form) also, for
/// each `j < top_k`, the sum in rank order of `received_topk_weights` at the token's rows,
/// into `combined_weights`. Exit barrier (nobody overwrites what peers still read).
#[kernel]
#[allow(clippy::too_many_arguments)]
pub fn high_throughput_combine(
    comm: DevComm,
    expert_output: Window,
    positions: Window,
    received_offsets: Window,
    combined: Window,
    received_topk_weights: Window,
    combined_weights: Window,
    shape: MoeShape,
    #[comptime] with_weights: bool,
) {
    let mut barrier = nccl::lsa_barrier_session(&comm, block_idx().x);
    nccl::lsa_session_sync(&mut barrier, MemoryOrder::Acquire);
    let ranks = nccl::lsa_size(&comm) as usize;
    let n = shape.tokens as usize;
    let top_k = shape.top_k as usize;
    let hidden = shape.hidden as usize;
    let bases = shared_array::<usize>(MAX_RANKS);
    rank_bases(&comm, received_offsets, bases);
    let position_of = unsafe { slice_at::<i32>(nccl::local_address(positions, 0), n * ranks) };
    let weights_out =
        unsafe { slice_at_mut::<f32>(nccl::local_address(combined_weights, 0), n * top_k) };
    // The token's rows on every rank (0: it did not go there).
    let sources = shared_array::<usize>(MAX_RANKS);
    let mut t = block_idx().x as usize;
    while t < n {
        let mut r = thread_idx().x as usize;
        while r < ranks {
            let position = position_of[t * ranks + r];
            sources[r] = if position >= 0 {
                let row = bases[r] + position as usize;
                nccl::lsa_address(expert_output, row * hidden * 2, r as i32)
            } else {
                0
            };
            r += block_dim().x as usize;
        }
        sync_threads();
        sum_rows(
            sources,
            ranks,
            nccl::local_address(combined, t * hidden * 2),
            hidden,
        );
        if with_weights {
            let j = thread_idx().x as usize;
            if j < top_k {
                let mut sum = 0.0f32;
                let mut r = 0;
                while r < ranks {
                    let position = position_of[t * ranks + r];
                    if position >= 0 {
                        let at = ((bases[r] + position as usize) * top_k + j) * 4;
                        let weight = unsafe {
                            slice_at::<f32>(
                                nccl::lsa_address(received_topk_weights, at, r as i32),
                                1,
                            )
                        };
                        sum += weight[0];
                    }
                    r += 1;
                }
                weights_out[t * top_k + j] = sum;
            }
        }
        // The table is rewritten for the next token.
        sync_threads();
        t += grid_dim().x as usize;
    }
    nccl::lsa_session_sync(&mut barrier, MemoryOrder::Release);
}

/// `bases[r]`: where this rank's tokens start on rank `r` (`r`'s `received_offsets` at
/// this rank), read from every rank by the CTA; ends with the CTA in sync.
#[device]
fn rank_bases(comm: &DevComm, received_offsets: Window, bases: &mut [usize]) {
    let ranks = nccl::lsa_size(comm) as usize;
    let me = nccl::lsa_rank(comm) as usize;
    let mut r = thread_idx().x as usize;
    while r < ranks {
        let offset =
            unsafe { slice_at::<i32>(nccl::lsa_address(received_offsets, me * 4, r as i32), 1) };
        bases[r] = offset[0] as usize;
        r += block_dim().x as usize;
    }
    sync_threads();
}

/// `out = sum over r < ranks with sources[r] != 0 of row r`, by the CTA's threads: `f32`
/// additions in `r` order from 0, rounded to `bf16` once; 16-byte vectors when `hidden`
/// is a multiple of 8.
#[device]
fn sum_rows(sources: &[usize], ranks: usize, out: usize, hidden: usize) {
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
            let mut r = 0;
            while r < ranks {
                if sources[r] != 0 {
                    let row = unsafe { slice_at::<bf16>(sources[r], hidden) };
                    let (xa, xb, xc, xd, xe, xf, xg, xh) = vload8(row, v);
                    a += xa.to_f32();
                    b += xb.to_f32();
                    c += xc.to_f32();
                    d += xd.to_f32();
                    e += xe.to_f32();
                    f += xf.to_f32();
                    g += xg.to_f32();
                    h += xh.to_f32();
                }
                r += 1;
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
            let mut r = 0;
            while r < ranks {
                if sources[r] != 0 {
                    let row = unsafe { slice_at::<bf16>(sources[r], hidden) };
                    sum += row[i].to_f32();
                }
                r += 1;
            }
            to[i] = bf16::from_f32(sum);
            i += block_dim().x as usize;
        }
    }
}
