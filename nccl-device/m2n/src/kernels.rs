//! The reshard kernels, written in the kernel language over LSA.
//!
//! Each rank's work is a table of runs in a symmetric `u64` window (the same length on
//! every rank, each rank's own contents), read at local addresses:
//!
//! | table | header | runs | then |
//! | --- | --- | --- | --- |
//! | pack | `[runs]` | `[source byte, staging byte, bytes]` each | |
//! | pull | `[runs, sources]` | `[destination byte, bytes, sources, first source]` each | `[rank, byte]` per source |
//!
//! A run is given to one warp (the warps of the grid take runs in turn); its lanes move
//! 16-byte vectors when both ends and the length are multiples of 16, else 4-, 2- or
//! 1-byte words. A pull run with one source is a copy from that rank's window; with
//! several (a `Partial` source's values, in partial-index order) the warp reduces them
//! element by element in `f32` (a sum in source order, or a maximum) and rounds once.

use cudajit_core::device::{
    block_dim, block_idx, grid_dim, lane_id, slice_at, slice_at_mut, thread_idx, vload4, vstore4,
};

use cudajit::device;
use cudajit::kernel;
use cudajit::{bf16, f16};
use cudajit_nccl_device::{self as nccl, DevComm, MemoryOrder, Window};

/// Words of a pack run.
pub const PACK_WORDS: usize = 3;
/// Words of a pull run.
pub const PULL_WORDS: usize = 4;
/// Words of a pull run's source.
pub const SOURCE_WORDS: usize = 2;

/// The source side of the staged reshard: this rank's runs copied from its local shard
/// (`source`) into its staging window, where destinations pull them. No barrier: the
/// pull kernel's entry barrier orders the packs before any read, and the previous pull's
/// exit barrier every read before this kernel's writes.
#[kernel]
pub fn m2n_pack(runs: Window, source: Window, staging: Window) {
    let header = unsafe { slice_at::<u64>(nccl::local_address(runs, 0), 1) };
    let count = header[0] as usize;
    let table = unsafe { slice_at::<u64>(nccl::local_address(runs, 8), count * PACK_WORDS) };
    let warps = (block_dim().x / 32) as usize;
    let all = grid_dim().x as usize * warps;
    let mut r = block_idx().x as usize * warps + (thread_idx().x / 32) as usize;
    while r < count {
        let at = r * PACK_WORDS;
        let from = nccl::local_address(source, table[at] as usize);
        let to = nccl::local_address(staging, table[at + 1] as usize);
        copy_bytes(from, to, table[at + 2] as usize);
        r += all;
    }
}

/// The destination side: the entry barrier (every rank's source is ready: packed, or
/// written into the caller's window), then each run pulled from its sources' `source`
/// windows by LSA loads into this rank's `destination` window, reduced when it has
/// several (`dtype`: 0 bf16, 1 f16, 2 f32, 3–4 FP8 bytes; `op`: 0 sum, 1 max), then the
/// exit barrier (no rank overwrites its source before every peer has read it).
#[kernel]
pub fn m2n_pull(
    comm: DevComm,
    runs: Window,
    source: Window,
    destination: Window,
    #[comptime] dtype: u32,
    #[comptime] op: u32,
) {
    let mut barrier = nccl::lsa_barrier_session(&comm, block_idx().x);
    nccl::lsa_session_sync(&mut barrier, MemoryOrder::Acquire);
    let header = unsafe { slice_at::<u64>(nccl::local_address(runs, 0), 2) };
    let count = header[0] as usize;
    let entries = header[1] as usize;
    let table = unsafe { slice_at::<u64>(nccl::local_address(runs, 16), count * PULL_WORDS) };
    let sources = unsafe {
        slice_at::<u64>(
            nccl::local_address(runs, 16 + count * PULL_WORDS * 8),
            entries * SOURCE_WORDS,
        )
    };
    let warps = (block_dim().x / 32) as usize;
    let all = grid_dim().x as usize * warps;
    let mut r = block_idx().x as usize * warps + (thread_idx().x / 32) as usize;
    while r < count {
        let at = r * PULL_WORDS;
        let to = nccl::local_address(destination, table[at] as usize);
        let bytes = table[at + 1] as usize;
        let n = table[at + 2] as usize;
        let first = table[at + 3] as usize;
        if n == 1 {
            let e = first * SOURCE_WORDS;
            let from = nccl::lsa_address(source, sources[e + 1] as usize, sources[e] as i32);
            copy_bytes(from, to, bytes);
        } else if dtype <= 2 {
            let size = if dtype == 2 { 4 } else { 2 };
            reduce(source, sources, first, n, to, bytes / size, dtype, op);
        }
        r += all;
    }
    nccl::lsa_session_sync(&mut barrier, MemoryOrder::Release);
}

/// Copies `bytes` from address `from` to `to` by the 32 lanes of a warp, in the widest
/// words both ends and the length allow.
#[device]
pub fn copy_bytes(from: usize, to: usize, bytes: usize) {
    let lane = lane_id() as usize;
    let alignment = from | to | bytes;
    if alignment % 16 == 0 {
        let vectors = bytes / 16;
        let src = unsafe { slice_at::<u32>(from, vectors * 4) };
        let dst = unsafe { slice_at_mut::<u32>(to, vectors * 4) };
        let mut v = lane;
        // Two vectors in flight per lane.
        while v + 32 < vectors {
            let (a, b, c, d) = vload4(src, v);
            let (e, f, g, h) = vload4(src, v + 32);
            vstore4(dst, v, (a, b, c, d));
            vstore4(dst, v + 32, (e, f, g, h));
            v += 64;
        }
        if v < vectors {
            let (a, b, c, d) = vload4(src, v);
            vstore4(dst, v, (a, b, c, d));
        }
    } else if alignment % 4 == 0 {
        let words = bytes / 4;
        let src = unsafe { slice_at::<u32>(from, words) };
        let dst = unsafe { slice_at_mut::<u32>(to, words) };
        let mut i = lane;
        while i < words {
            dst[i] = src[i];
            i += 32;
        }
    } else if alignment % 2 == 0 {
        let halves = bytes / 2;
        let src = unsafe { slice_at::<u16>(from, halves) };
        let dst = unsafe { slice_at_mut::<u16>(to, halves) };
        let mut i = lane;
        while i < halves {
            dst[i] = src[i];
            i += 32;
        }
    } else {
        let src = unsafe { slice_at::<u8>(from, bytes) };
        let dst = unsafe { slice_at_mut::<u8>(to, bytes) };
        let mut i = lane;
        while i < bytes {
            dst[i] = src[i];
            i += 32;
        }
    }
}

/// `a` combined with `b`: their sum (`op` 0) or maximum (`op` 1).
#[device]
fn combine(a: f32, b: f32, op: u32) -> f32 {
    if op == 0 {
        a + b
    } else {
        a.max(b)
    }
}

/// Element `i` of the `count` elements of type `dtype` (0 bf16, 1 f16, 2 f32) at `from`, as
/// `f32`. `dtype` is the same for every element (a uniform branch).
#[device]
fn load_f32(from: usize, count: usize, i: usize, dtype: u32) -> f32 {
    if dtype == 0 {
        let row = unsafe { slice_at::<bf16>(from, count) };
        row[i].to_f32()
    } else if dtype == 1 {
        let row = unsafe { slice_at::<f16>(from, count) };
        row[i].to_f32()
    } else {
        let row = unsafe { slice_at::<f32>(from, count) };
        row[i]
    }
}

/// `x` rounded once to `dtype` (as in [`load_f32`]) and stored as element `i` of the `count`
/// elements at `to`.
#[device]
fn store_f32(to: usize, count: usize, i: usize, x: f32, dtype: u32) {
    if dtype == 0 {
        let out = unsafe { slice_at_mut::<bf16>(to, count) };
        out[i] = bf16::from_f32(x);
    } else if dtype == 1 {
        let out = unsafe { slice_at_mut::<f16>(to, count) };
        out[i] = f16::from_f32(x);
    } else {
        let out = unsafe { slice_at_mut::<f32>(to, count) };
        out[i] = x;
    }
}

/// The `n` sources from entry `first` of `sources` reduced into the `count` elements of
/// type `dtype` (0 bf16, 1 f16, 2 f32) at `to`, by the lanes of a warp, in `f32`.
#[device]
#[allow(clippy::too_many_arguments)]
fn reduce(
    source: Window,
    sources: &[u64],
    first: usize,
    n: usize,
    to: usize,
    count: usize,
    dtype: u32,
    op: u32,
) {
    let mut i = lane_id() as usize;
    while i < count {
        let mut acc = 0.0f32;
        let mut k = 0;
        while k < n {
            let e = (first + k) * SOURCE_WORDS;
            let from = nccl::lsa_address(source, sources[e + 1] as usize, sources[e] as i32);
            let x = load_f32(from, count, i, dtype);
            if k == 0 {
                acc = x;
            } else {
                acc = combine(acc, x, op);
            }
            k += 1;
        }
        store_f32(to, count, i, acc, dtype);
        i += 32;
    }
}
