//! Steps both modes' kernels take, as `#[device]` functions (inlined): a token's rank
//! among a chunk's hits, and a row copied by a warp.

use cudajit_core::device::{
    ballot_sync, block_dim, lane_id, slice_at, slice_at_mut, sync_threads, thread_idx, vload8,
    vstore8, FULL_WARP,
};

use cudajit::bf16;
use cudajit::device;

/// For a chunk of one token per thread of the CTA, where `hit` says whether this thread's
/// token is one of those sought: `(index, hits)`, the number of hits of lower threads
/// (the token's place among the chunk's hits, in token order) and the chunk's hits in
/// all. A `ballot_sync` per warp, its count per warp in `warp_hits` (32 entries of shared
/// memory), a prefix over the warps. Every thread of the CTA calls it; it ends with the
/// CTA in sync, and `warp_hits` may be rewritten after the next `sync_threads`.
#[device]
pub fn rank_in_chunk(hit: bool, warp_hits: &mut [u32]) -> (u32, u32) {
    let warp = (thread_idx().x / 32) as usize;
    let warps = (block_dim().x / 32) as usize;
    let lane = lane_id();
    let mask = ballot_sync(FULL_WARP, hit);
    if lane == 0 {
        warp_hits[warp] = mask.count_ones();
    }
    sync_threads();
    let mut before = 0u32;
    let mut hits = 0u32;
    let mut w = 0;
    while w < warps {
        let h = warp_hits[w];
        if w < warp {
            before += h;
        }
        hits += h;
        w += 1;
    }
    let below = (mask & ((1u32 << lane) - 1)).count_ones();
    (before + below, hits)
}

/// Copies the `hidden` elements at `source` to `destination` by the 32 lanes of a warp:
/// 16-byte vectors when `hidden` is a multiple of 8 (rows then start at 16-byte
/// boundaries), elements otherwise.
#[device]
pub fn copy_row(source: usize, destination: usize, hidden: usize) {
    let from = unsafe { slice_at::<bf16>(source, hidden) };
    let to = unsafe { slice_at_mut::<bf16>(destination, hidden) };
    let lane = lane_id() as usize;
    if hidden % 8 == 0 {
        let vectors = hidden / 8;
        let mut v = lane;
        // Two vectors in flight per lane.
        while v + 32 < vectors {
            let (a, b, c, d, e, f, g, h) = vload8(from, v);
            let (i, j, k, l, m, n, o, p) = vload8(from, v + 32);
            vstore8(to, v, (a, b, c, d, e, f, g, h));
            vstore8(to, v + 32, (i, j, k, l, m, n, o, p));
            v += 64;
        }
        if v < vectors {
            let (a, b, c, d, e, f, g, h) = vload8(from, v);
            vstore8(to, v, (a, b, c, d, e, f, g, h));
        }
    } else {
        let mut i = lane;
        while i < hidden {
            to[i] = from[i];
            i += 32;
        }
    }
}
