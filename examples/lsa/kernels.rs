//! The `#[kernel]`s of the LSA examples, shared with tests/nccl_device.rs (which compiles
//! and links them on the CPU) and the GPU benchmark (examples/nccl_bench/).
//!
//! Each mirrors the CUDA C++ reference of examples/nccl_reference/lsa_collectives.cu:
//! peers' window addresses computed once per CTA into shared memory, an entry LSA barrier
//! with acquire, the data moved by `cudajit::nccl::device`'s reduce-copy helpers
//! (16-byte vectors, unrolled by 4), an exit barrier with release, then the session's
//! destroy. The window holds the input at byte 0 and the output at `out_offset`.

use cudajit::bf16;
use cudajit::nccl::device::{self as nccl, DevComm, MemoryOrder, Window};
use cudajit::prelude::*;

/// Copies the first `count` floats of LSA peer `lsa_rank + 1`'s window to byte `out_offset`
/// of this rank's window.
#[kernel]
pub fn peer_read(comm: DevComm, window: Window, count: usize, out_offset: usize) {
    // The next rank of the LSA team.
    let lsa = nccl::team_lsa(&comm);
    let peer = (lsa.rank + 1) % lsa.nranks;
    let destination = shared_array::<usize>(1);
    if thread_idx().x == 0 {
        destination[0] = nccl::local_address(window, out_offset);
    }
    sync_threads();
    let mut barrier = [0u64; 8];
    nccl::lsa_barrier_init(&mut barrier, &comm, block_idx().x);
    // Every peer has filled its window before anyone reads it.
    nccl::lsa_barrier_sync(&mut barrier, MemoryOrder::Acquire);
    let source = nccl::team_peer_address(&comm, window, 0, lsa, peer);
    nccl::lsa_copy::<f32, 4>(source, destination, 0, 1, count, count / 4);
    // Nobody overwrites its window before every peer has read it.
    nccl::lsa_barrier_sync(&mut barrier, MemoryOrder::Release);
    nccl::lsa_barrier_destroy(&mut barrier);
}

/// One-shot all-reduce: `out = sum over LSA peers of their input`, every rank computing
/// all of it from all peers' windows.
#[kernel]
pub fn all_reduce_one_shot<T: DeviceScalar + core::ops::Add<Output = T>>(
    comm: DevComm,
    window: Window,
    count: usize,
    out_offset: usize,
) {
    let sources = shared_array::<usize>(72);
    let destination = shared_array::<usize>(1);
    one_shot::<T, 4, false>(&comm, window, count, out_offset, sources, destination);
}

/// Two-shot all-reduce: LSA rank `r` reduces its share of the vectors over all peers
/// (reduce-scatter) and stores the sums into every peer's output (all-gather); the last
/// rank also takes the elements past the last whole vector.
#[kernel]
pub fn all_reduce_two_shot<T: DeviceScalar + core::ops::Add<Output = T>>(
    comm: DevComm,
    window: Window,
    count: usize,
    out_offset: usize,
) {
    let sources = shared_array::<usize>(72);
    let destinations = shared_array::<usize>(72);
    two_shot::<T, 4, false>(&comm, window, count, out_offset, sources, destinations);
}

/// All-gather (push): LSA rank `r` stores its `count` input elements into every peer's
/// output at element `r * count`. `block_bytes` is `count * size_of::<T>()`.
#[kernel]
pub fn all_gather<T: DeviceScalar>(
    comm: DevComm,
    window: Window,
    count: usize,
    block_bytes: usize,
    out_offset: usize,
) {
    let lsa = nccl::team_lsa(&comm);
    let peers = lsa.nranks;
    let me = lsa.rank as usize;
    let destinations = shared_array::<usize>(72);
    nccl::lsa_addresses(window, out_offset + me * block_bytes, peers, destinations);
    sync_threads();
    // A session that ends (storing its epoch) at the end of the kernel's scope.
    let mut barrier = nccl::lsa_barrier_session(&comm, block_idx().x);
    nccl::lsa_session_sync(&mut barrier, MemoryOrder::Acquire);
    // 16-byte accesses need every block to start at a 16-byte boundary.
    let vectors = if block_bytes % 16 == 0 { count / 4 } else { 0 };
    let source = nccl::local_address(window, 0);
    nccl::lsa_copy::<T, 4>(source, destinations, 0, peers as usize, count, vectors);
    nccl::lsa_session_sync(&mut barrier, MemoryOrder::Release);
}

/// [`all_reduce_one_shot`] for `bf16` as the CUDA C++ reference computes it: 16-byte
/// vectors of 8 elements, summed in `f32`, rounded once.
#[kernel]
pub fn all_reduce_one_shot_bf16(comm: DevComm, window: Window, count: usize, out_offset: usize) {
    let sources = shared_array::<usize>(72);
    let destination = shared_array::<usize>(1);
    one_shot::<bf16, 8, true>(&comm, window, count, out_offset, sources, destination);
}

/// [`all_reduce_two_shot`] for `bf16`: 16-byte vectors of 8, summed in `f32`.
#[kernel]
pub fn all_reduce_two_shot_bf16(comm: DevComm, window: Window, count: usize, out_offset: usize) {
    let sources = shared_array::<usize>(72);
    let destinations = shared_array::<usize>(72);
    two_shot::<bf16, 8, true>(&comm, window, count, out_offset, sources, destinations);
}

/// All-to-all (push): LSA rank `r` stores block `p` of its input (`count` elements per
/// peer, `n * count` in all) into block `r` of peer `p`'s output. `block_bytes` is
/// `count * size_of::<T>()`.
#[kernel]
pub fn all_to_all<T: DeviceScalar>(
    comm: DevComm,
    window: Window,
    count: usize,
    block_bytes: usize,
    out_offset: usize,
) {
    let lsa = nccl::team_lsa(&comm);
    let peers = lsa.nranks;
    let me = lsa.rank as usize;
    let destinations = shared_array::<usize>(72);
    nccl::lsa_addresses(window, out_offset + me * block_bytes, peers, destinations);
    sync_threads();
    let mut barrier = [0u64; 8];
    nccl::lsa_barrier_init(&mut barrier, &comm, block_idx().x);
    nccl::lsa_barrier_sync(&mut barrier, MemoryOrder::Acquire);
    let vectors = if block_bytes % 16 == 0 { count / 4 } else { 0 };
    let mut p = 0;
    while p < peers as usize {
        let source = nccl::local_address(window, p * block_bytes);
        nccl::lsa_copy::<T, 4>(source, destinations, p, 1, count, vectors);
        p += 1;
    }
    nccl::lsa_barrier_sync(&mut barrier, MemoryOrder::Release);
    nccl::lsa_barrier_destroy(&mut barrier);
}

/// [`all_reduce_one_shot`] for 64-bit types (`i64`, `u64`, `f64`): 16-byte vectors of 2.
#[kernel]
pub fn all_reduce_one_shot_64<T: DeviceScalar + core::ops::Add<Output = T>>(
    comm: DevComm,
    window: Window,
    count: usize,
    out_offset: usize,
) {
    let sources = shared_array::<usize>(72);
    let destination = shared_array::<usize>(1);
    one_shot::<T, 2, false>(&comm, window, count, out_offset, sources, destination);
}

/// [`all_reduce_one_shot`] for 16-bit types summed in their own type (`f16`, `i16`,
/// `u16`): 16-byte vectors of 8.
#[kernel]
pub fn all_reduce_one_shot_16<T: DeviceScalar + core::ops::Add<Output = T>>(
    comm: DevComm,
    window: Window,
    count: usize,
    out_offset: usize,
) {
    let sources = shared_array::<usize>(72);
    let destination = shared_array::<usize>(1);
    one_shot::<T, 8, false>(&comm, window, count, out_offset, sources, destination);
}

/// The one-shot all-reduce of every element type: every LSA peer's input (`sources`) summed
/// into this rank's output (`destination[0]`) between the entry barrier (acquire) and the
/// exit barrier (release). `WIDTH` elements make a 16-byte vector (4 for 32-bit types, 2 for
/// 64-bit, 8 for 16-bit); `BF16` sums `bf16` in `f32`, rounding once, as the CUDA C++
/// reference does. The kernels above differ only in these constants.
#[device]
fn one_shot<T: DeviceScalar + core::ops::Add<Output = T>, const WIDTH: usize, const BF16: bool>(
    comm: &DevComm,
    window: Window,
    count: usize,
    out_offset: usize,
    sources: &mut [usize],
    destination: &mut [usize],
) {
    let peers = nccl::lsa_size(comm);
    one_shot_addresses(window, out_offset, peers, sources, destination);
    let mut barrier = [0u64; 8];
    nccl::lsa_barrier_init(&mut barrier, comm, block_idx().x);
    nccl::lsa_barrier_sync(&mut barrier, MemoryOrder::Acquire);
    let n = peers as usize;
    let vectors = count / WIDTH;
    reduce_copy::<T, WIDTH, BF16>(sources, n, destination, 1, count, 0, vectors);
    reduce_copy::<T, 1, BF16>(sources, n, destination, 1, count, vectors * WIDTH, count);
    nccl::lsa_barrier_sync(&mut barrier, MemoryOrder::Release);
    nccl::lsa_barrier_destroy(&mut barrier);
}

/// The two-shot all-reduce of every element type: LSA rank `r` reduces its share of the
/// vectors over all peers (`sources`) into every peer's output (`destinations`); the last
/// rank also takes the elements past the last whole vector. `WIDTH` and `BF16` as in
/// [`one_shot`].
#[device]
fn two_shot<T: DeviceScalar + core::ops::Add<Output = T>, const WIDTH: usize, const BF16: bool>(
    comm: &DevComm,
    window: Window,
    count: usize,
    out_offset: usize,
    sources: &mut [usize],
    destinations: &mut [usize],
) {
    let peers = nccl::lsa_size(comm);
    let me = nccl::lsa_rank(comm);
    two_shot_addresses(window, out_offset, peers, sources, destinations);
    let mut barrier = [0u64; 8];
    nccl::lsa_barrier_init(&mut barrier, comm, block_idx().x);
    nccl::lsa_barrier_sync(&mut barrier, MemoryOrder::Acquire);
    let n = peers as usize;
    let vectors = count / WIDTH;
    let share = (vectors + n - 1) / n;
    let begin = (me as usize * share).min(vectors);
    let end = (begin + share).min(vectors);
    reduce_copy::<T, WIDTH, BF16>(sources, n, destinations, n, count, begin, end);
    if me == peers - 1 {
        reduce_copy::<T, 1, BF16>(sources, n, destinations, n, count, vectors * WIDTH, count);
    }
    nccl::lsa_barrier_sync(&mut barrier, MemoryOrder::Release);
    nccl::lsa_barrier_destroy(&mut barrier);
}

/// The reduce-copy of `cudajit::nccl::device` for vectors of `WIDTH` elements (1: single
/// elements, the tail past the last whole vector; `BF16`: of `bf16` summed in `f32`) from
/// the `n_from` arrays at `from` to the `n_to` arrays at `to`. The constants are known when
/// the kernel is compiled, so only the branch taken is lowered.
#[device]
#[allow(clippy::too_many_arguments)]
fn reduce_copy<
    T: DeviceScalar + core::ops::Add<Output = T>,
    const WIDTH: usize,
    const BF16: bool,
>(
    from: &[usize],
    n_from: usize,
    to: &[usize],
    n_to: usize,
    len: usize,
    begin: usize,
    end: usize,
) {
    if BF16 {
        nccl::lsa_reduce_copy_bf16::<WIDTH>(from, n_from, to, n_to, len, begin, end);
    } else {
        nccl::lsa_reduce_copy::<T, WIDTH>(from, n_from, to, n_to, len, begin, end);
    }
}

/// The addresses a one-shot all-reduce needs, in the CTA's shared memory: every LSA peer's
/// input (`sources`) and this rank's output (`destination[0]`); ends with the CTA in sync.
#[device]
fn one_shot_addresses(
    window: Window,
    out_offset: usize,
    peers: i32,
    sources: &mut [usize],
    destination: &mut [usize],
) {
    nccl::lsa_addresses(window, 0, peers, sources);
    if thread_idx().x == 0 {
        destination[0] = nccl::local_address(window, out_offset);
    }
    sync_threads();
}

/// Two-shot all-reduce that moves data over NVLink by stores only (NVLink writes run
/// faster than reads): LSA rank `r` first pushes share `p` of its input into a scratch slot
/// of peer `p`'s window (at `scratch_offset`, one slot of `share` vectors per other rank),
/// then, after a barrier, reduces its own share from its input and the slots and pushes the
/// sums into every peer's output. 32-bit types; the last rank also reduces the elements
/// past the last whole vector, reading them from the peers.
#[kernel]
pub fn all_reduce_two_shot_push<T: DeviceScalar + core::ops::Add<Output = T>>(
    comm: DevComm,
    window: Window,
    count: usize,
    out_offset: usize,
    scratch_offset: usize,
) {
    let peers = nccl::lsa_size(&comm);
    let n = peers as usize;
    let me = nccl::lsa_rank(&comm) as usize;
    let vectors = count / 4;
    let share = (vectors + n - 1) / n;
    let share_bytes = share * 16;
    // Phase 1 destinations: on peer p, the slot of this rank (slots skip the owner).
    let slots = shared_array::<usize>(72);
    // Phase 2: this rank's share of every rank's input (its own, else a local slot), and
    // the same share of every peer's output.
    let sources = shared_array::<usize>(72);
    let destinations = shared_array::<usize>(72);
    // The tail: every peer's input and output.
    let inputs = shared_array::<usize>(72);
    let outputs = shared_array::<usize>(72);
    let mut p = thread_idx().x as usize;
    while p < n {
        let mine_on_p = if me < p { me } else { me - 1 };
        slots[p] = nccl::lsa_address(window, scratch_offset + mine_on_p * share_bytes, p as i32);
        let slot_of_p = if p < me { p } else { p - 1 };
        sources[p] = if p == me {
            nccl::local_address(window, me * share_bytes)
        } else {
            nccl::local_address(window, scratch_offset + slot_of_p * share_bytes)
        };
        destinations[p] = nccl::lsa_address(window, out_offset + me * share_bytes, p as i32);
        p += block_dim().x as usize;
    }
    nccl::lsa_addresses(window, 0, peers, inputs);
    nccl::lsa_addresses(window, out_offset, peers, outputs);
    sync_threads();
    let mut barrier = [0u64; 8];
    nccl::lsa_barrier_init(&mut barrier, &comm, block_idx().x);
    // Peers' windows are free: their previous kernels are done with them.
    nccl::lsa_barrier_sync(&mut barrier, MemoryOrder::Acquire);
    let mut q = 0;
    while q < n {
        if q != me {
            let begin = (q * share).min(vectors);
            let end = (begin + share).min(vectors);
            let source = nccl::local_address(window, begin * 16);
            let len = (end - begin) * 4;
            nccl::lsa_copy::<T, 4>(source, slots, q, 1, len, end - begin);
        }
        q += 1;
    }
    // Every rank's pushes are visible before anyone reduces its slots.
    nccl::lsa_barrier_sync(&mut barrier, MemoryOrder::AcqRel);
    let begin = (me * share).min(vectors);
    let end = (begin + share).min(vectors);
    let len = (end - begin) * 4;
    nccl::lsa_reduce_copy::<T, 4>(sources, n, destinations, n, len, 0, end - begin);
    if me == n - 1 {
        nccl::lsa_reduce_copy::<T, 1>(inputs, n, outputs, n, count, vectors * 4, count);
    }
    nccl::lsa_barrier_sync(&mut barrier, MemoryOrder::Release);
    nccl::lsa_barrier_destroy(&mut barrier);
}

/// [`peer_read`] with a barrier per warp instead of per CTA (`ncclCoopWarp` sessions):
/// warp `w` of the grid copies elements `[w * chunk, (w + 1) * chunk)` of the next peer's
/// input once its counterparts on every peer have arrived. Needs one LSA barrier per warp
/// of the grid.
#[kernel]
pub fn peer_read_warps(comm: DevComm, window: Window, count: usize, out_offset: usize) {
    let peer = (nccl::lsa_rank(&comm) + 1) % nccl::lsa_size(&comm);
    let warp = global_index() / 32;
    let warps = grid_stride() / 32;
    let mut barrier = [0u64; 8];
    nccl::lsa_barrier_init_warp(&mut barrier, &comm, warp as u32);
    nccl::lsa_barrier_sync_warp(&mut barrier, MemoryOrder::Acquire);
    let src = unsafe { slice_at::<f32>(nccl::lsa_address(window, 0, peer), count) };
    let out = unsafe { slice_at_mut::<f32>(nccl::local_address(window, out_offset), count) };
    let chunk = (count + warps - 1) / warps;
    let end = ((warp + 1) * chunk).min(count);
    let mut i = warp * chunk + lane_id() as usize;
    while i < end {
        out[i] = src[i];
        i += 32;
    }
    nccl::lsa_barrier_sync_warp(&mut barrier, MemoryOrder::Release);
    nccl::lsa_barrier_destroy_warp(&mut barrier);
}

/// The addresses a two-shot all-reduce needs, in the CTA's shared memory: every LSA peer's
/// input (`sources`) and output (`destinations`); ends with the CTA in sync.
#[device]
fn two_shot_addresses(
    window: Window,
    out_offset: usize,
    peers: i32,
    sources: &mut [usize],
    destinations: &mut [usize],
) {
    nccl::lsa_addresses(window, 0, peers, sources);
    nccl::lsa_addresses(window, out_offset, peers, destinations);
    sync_threads();
}

/// [`peer_read`] with a barrier per span of 4 consecutive warps (`ncclCoopWarpSpan`): the
/// CTA's warps in spans of 4 (span `s` of the block: warps `4s .. 4s + 4`, span id `s`,
/// so named barrier `1 + s`), each span copying its own chunk of the input once its
/// counterparts on every peer have arrived, without waiting for the rest of its CTA. The
/// entry barrier is split: arrive, compute the addresses, then wait. Needs a
/// one-dimensional block of a multiple of 128 threads and one LSA barrier per span of the
/// grid.
#[kernel]
pub fn peer_read_warp_spans(comm: DevComm, window: Window, count: usize, out_offset: usize) {
    let span = thread_idx().x / 128;
    let spans = block_dim().x / 128;
    let index = block_idx().x * spans + span;
    let mut barrier = [0u64; 8];
    nccl::lsa_barrier_init_warp_span(&mut barrier, &comm, span * 4, 4, span, index);
    // Peers' inputs were written before the launch: arriving needs no release.
    nccl::lsa_barrier_arrive_warp_span(&mut barrier, MemoryOrder::Relaxed);
    let peer = (nccl::lsa_rank(&comm) + 1) % nccl::lsa_size(&comm);
    let src = unsafe { slice_at::<f32>(nccl::lsa_address(window, 0, peer), count) };
    let out = unsafe { slice_at_mut::<f32>(nccl::local_address(window, out_offset), count) };
    nccl::lsa_barrier_wait_warp_span(&mut barrier, MemoryOrder::Acquire);
    let total = (grid_dim().x * spans) as usize;
    let chunk = (count + total - 1) / total;
    let end = ((index as usize + 1) * chunk).min(count);
    let mut i = index as usize * chunk + (thread_idx().x % 128) as usize;
    while i < end {
        out[i] = src[i];
        i += 128;
    }
    nccl::lsa_barrier_sync_warp_span(&mut barrier, MemoryOrder::Release);
    nccl::lsa_barrier_destroy_warp_span(&mut barrier);
}

/// [`peer_read`] with a barrier per thread (`ncclCoopThread`): thread `t` of the grid
/// copies elements `t`, `t + threads`, ... once thread `t` of every peer has arrived,
/// independently of every other thread (no warp or CTA synchronisation at all). Needs one
/// LSA barrier per thread of the grid.
#[kernel]
pub fn peer_read_threads(comm: DevComm, window: Window, count: usize, out_offset: usize) {
    let thread = global_index();
    let mut barrier = [0u64; 8];
    nccl::lsa_barrier_init_thread(&mut barrier, &comm, thread as u32);
    nccl::lsa_barrier_arrive_thread(&mut barrier, MemoryOrder::Relaxed);
    let peer = (nccl::lsa_rank(&comm) + 1) % nccl::lsa_size(&comm);
    let src = unsafe { slice_at::<f32>(nccl::lsa_address(window, 0, peer), count) };
    let out = unsafe { slice_at_mut::<f32>(nccl::local_address(window, out_offset), count) };
    nccl::lsa_barrier_wait_thread(&mut barrier, MemoryOrder::Acquire);
    let mut i = thread;
    while i < count {
        out[i] = src[i];
        i += grid_stride();
    }
    nccl::lsa_barrier_sync_thread(&mut barrier, MemoryOrder::Release);
    nccl::lsa_barrier_destroy_thread(&mut barrier);
}

/// [`peer_read`] with a barrier per half warp (`ncclCoopLanes`, lane masks `0x0000_ffff`
/// and `0xffff_0000`): half warp `h` of the grid copies elements
/// `[h * chunk, (h + 1) * chunk)` once its counterparts on every peer have arrived. Needs
/// one LSA barrier per half warp of the grid.
#[kernel]
pub fn peer_read_half_warps(comm: DevComm, window: Window, count: usize, out_offset: usize) {
    let half = global_index() / 16;
    let halves = grid_stride() / 16;
    let lanes = 0xffffu32 << (lane_id() & 16);
    let mut barrier = [0u64; 8];
    nccl::lsa_barrier_init_lanes(&mut barrier, &comm, lanes, half as u32);
    nccl::lsa_barrier_arrive_lanes(&mut barrier, MemoryOrder::Relaxed);
    let peer = (nccl::lsa_rank(&comm) + 1) % nccl::lsa_size(&comm);
    let src = unsafe { slice_at::<f32>(nccl::lsa_address(window, 0, peer), count) };
    let out = unsafe { slice_at_mut::<f32>(nccl::local_address(window, out_offset), count) };
    nccl::lsa_barrier_wait_lanes(&mut barrier, MemoryOrder::Acquire);
    let chunk = (count + halves - 1) / halves;
    let end = ((half + 1) * chunk).min(count);
    let mut i = half * chunk + (lane_id() % 16) as usize;
    while i < end {
        out[i] = src[i];
        i += 16;
    }
    nccl::lsa_barrier_sync_lanes(&mut barrier, MemoryOrder::Release);
    nccl::lsa_barrier_destroy_lanes(&mut barrier);
}
