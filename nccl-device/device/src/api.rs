//! The `#[extern_device]` declarations of NCCL's device API, bound to the device library
//! of the loaded NCCL ([`NCCL_DEVICE`]): ranks, LSA pointers, the `[u64; 8]` LSA barrier
//! sessions of every cooperative group, and GIN. Their `link_name`s are cudajit's C ABI
//! over NCCL, whose one table is `cudajit_nccl::device_code::symbols`
//! (`BRIDGE_2_28` and `SHIM_GIN`); a test holds these names to it.

use super::{DevComm, Window};
use cudajit::{extern_device, DeviceCopy, DeviceLibrary};

/// The device library of the NCCL this process loads (`LoadedNccl::global()`): provided at the
/// first compile of a kernel that calls into it, for that kernel's GPU, and part of the
/// kernel's cache key by content.
pub static NCCL_DEVICE: DeviceLibrary = DeviceLibrary::provided(
    "NCCL device library",
    cudajit_nccl::device_code::provide_for_loaded_nccl,
);

/// The memory ordering of a barrier operation (`cuda::memory_order`, same values).
/// Entry barriers acquire (what peers wrote before it is visible after it), exit barriers
/// release (what this rank wrote is visible to peers that pass it).
#[derive(Clone, Copy, Debug, PartialEq, Eq, DeviceCopy)]
#[repr(i32)]
pub enum MemoryOrder {
    Relaxed = 0,
    Acquire = 2,
    Release = 3,
    AcqRel = 4,
    SeqCst = 5,
}

#[extern_device(library = NCCL_DEVICE)]
extern "C" {
    /// This rank in the communicator (`ncclTeamWorld(comm).rank`).
    #[link_name = "cudajit_nccl_rank"]
    pub fn rank(comm: &DevComm) -> i32;
    /// Ranks in the communicator.
    #[link_name = "cudajit_nccl_nranks"]
    pub fn nranks(comm: &DevComm) -> i32;
    /// This rank in its LSA team (the GPUs it reaches by load/store).
    #[link_name = "cudajit_nccl_lsa_rank"]
    pub fn lsa_rank(comm: &DevComm) -> i32;
    /// Ranks in the LSA team.
    #[link_name = "cudajit_nccl_lsa_size"]
    pub fn lsa_size(comm: &DevComm) -> i32;
    /// The world rank of LSA rank `lsa_rank`.
    #[link_name = "cudajit_nccl_lsa_rank_to_world"]
    pub fn lsa_rank_to_world(comm: &DevComm, lsa_rank: i32) -> i32;
    /// The device address of byte `offset` of LSA peer `lsa_peer`'s part of `window`
    /// (`ncclGetLsaPointer`): read or write it through `slice_at`/`slice_at_mut`.
    ///
    /// ```
    /// use cudajit::nccl::device::{self as nccl, DevComm, Window};
    /// use cudajit::nccl::sim::SimWorld;
    /// use cudajit::prelude::*;
    ///
    /// /// Copies the previous LSA peer's first `count` floats behind this rank's own.
    /// #[kernel]
    /// fn read_previous(comm: DevComm, window: Window, count: usize) {
    ///     let size = nccl::lsa_size(&comm);
    ///     let previous = (nccl::lsa_rank(&comm) + size - 1) % size;
    ///     let from = unsafe { slice_at::<f32>(nccl::lsa_address(window, 0, previous), count) };
    ///     let to = unsafe { slice_at_mut::<f32>(nccl::local_address(window, 4 * count), count) };
    ///     let i = global_index();
    ///     if i < count {
    ///         to[i] = from[i];
    ///     }
    /// }
    ///
    /// fn main() -> Result<(), cudajit::Error> {
    ///     let world = SimWorld::new(3)?;
    ///     let buffer = world.alloc_symmetric::<f32>(2 * 64)?;
    ///     for rank in 0..3 {
    ///         buffer.copy_from_host(rank, &[rank as f32; 64])?;
    ///     }
    ///     for rank in 0..3 {
    ///         let (comm, window) = (world.dev_comm(rank), buffer.window(rank));
    ///         let config = LaunchConfig::new(1, 64);
    ///         read_previous::launch(world.stream(rank), config, comm, window, 64)?;
    ///     }
    ///     assert!(buffer.to_vec(0)?[64..].iter().all(|&x| x == 2.0)); // rank 0 read rank 2
    ///     Ok(())
    /// }
    /// ```
    #[link_name = "cudajit_nccl_lsa_pointer"]
    pub fn lsa_address(window: Window, offset: usize, lsa_peer: i32) -> usize;
    /// The address of byte `offset` of world rank `peer`'s part of `window`
    /// (`ncclGetPeerPointer`).
    #[link_name = "cudajit_nccl_peer_pointer"]
    pub fn peer_address(window: Window, offset: usize, peer: i32) -> usize;
    /// The address of byte `offset` of this rank's part of `window`.
    #[link_name = "cudajit_nccl_local_pointer"]
    pub fn local_address(window: Window, offset: usize) -> usize;
    /// Starts the CTA's LSA barrier session number `index` (`block_idx().x`) in `session`.
    #[link_name = "cudajit_nccl_lsa_barrier_init"]
    pub fn lsa_barrier_init(session: &mut [u64; 8], comm: &DevComm, index: u32);
    /// Signals that this CTA arrived.
    #[link_name = "cudajit_nccl_lsa_barrier_arrive"]
    pub fn lsa_barrier_arrive(session: &mut [u64; 8], order: MemoryOrder);
    /// Waits until every LSA peer's CTA arrived.
    #[link_name = "cudajit_nccl_lsa_barrier_wait"]
    pub fn lsa_barrier_wait(session: &mut [u64; 8], order: MemoryOrder);
    /// Arrive, then wait.
    #[link_name = "cudajit_nccl_lsa_barrier_sync"]
    pub fn lsa_barrier_sync(session: &mut [u64; 8], order: MemoryOrder);
    /// Ends the session, storing its epoch for the next kernel.
    #[link_name = "cudajit_nccl_lsa_barrier_destroy"]
    pub fn lsa_barrier_destroy(session: &mut [u64; 8]);
    /// Starts a warp's LSA barrier session (`ncclCoopWarp`): every lane of the warp calls,
    /// with an index per warp (e.g. the warp's global number), so the device communicator
    /// needs that many LSA barriers; the matching warps of every LSA peer meet at it.
    #[link_name = "cudajit_nccl_lsa_barrier_init_warp"]
    pub fn lsa_barrier_init_warp(session: &mut [u64; 8], comm: &DevComm, index: u32);
    /// A warp's arrival ([`lsa_barrier_arrive`] for a warp's session).
    #[link_name = "cudajit_nccl_lsa_barrier_arrive_warp"]
    pub fn lsa_barrier_arrive_warp(session: &mut [u64; 8], order: MemoryOrder);
    /// A warp's wait.
    #[link_name = "cudajit_nccl_lsa_barrier_wait_warp"]
    pub fn lsa_barrier_wait_warp(session: &mut [u64; 8], order: MemoryOrder);
    /// A warp's arrive, then wait.
    #[link_name = "cudajit_nccl_lsa_barrier_sync_warp"]
    pub fn lsa_barrier_sync_warp(session: &mut [u64; 8], order: MemoryOrder);
    /// Ends a warp's session, storing its epoch for the next kernel.
    #[link_name = "cudajit_nccl_lsa_barrier_destroy_warp"]
    pub fn lsa_barrier_destroy_warp(session: &mut [u64; 8]);

    /// Starts a thread's own LSA barrier session (`ncclCoopThread`): the calling thread
    /// alone takes part, and meets the threads of every LSA peer that use the same
    /// `index`. Use it when threads work independently (each copies elements only it
    /// touches, as `examples/lsa/kernels.rs`'s `peer_read_threads`) and must not wait for
    /// the rest of their warp or CTA; each thread of the grid then needs its own index
    /// (e.g. `global_index()`), so the device communicator needs one LSA barrier per
    /// thread, and every thread stores to and polls its peers' barrier words itself. Where
    /// a warp or the CTA moves on together, a [`lsa_barrier_init_warp`] or
    /// [`lsa_barrier_init`] session needs fewer barriers and fewer memory operations.
    #[link_name = "cudajit_nccl_lsa_barrier_init_thread"]
    pub fn lsa_barrier_init_thread(session: &mut [u64; 8], comm: &DevComm, index: u32);
    /// A thread's arrival ([`lsa_barrier_arrive`] for a thread's session).
    #[link_name = "cudajit_nccl_lsa_barrier_arrive_thread"]
    pub fn lsa_barrier_arrive_thread(session: &mut [u64; 8], order: MemoryOrder);
    /// A thread's wait.
    #[link_name = "cudajit_nccl_lsa_barrier_wait_thread"]
    pub fn lsa_barrier_wait_thread(session: &mut [u64; 8], order: MemoryOrder);
    /// A thread's arrive, then wait.
    #[link_name = "cudajit_nccl_lsa_barrier_sync_thread"]
    pub fn lsa_barrier_sync_thread(session: &mut [u64; 8], order: MemoryOrder);
    /// Ends a thread's session, storing its epoch for the next kernel.
    #[link_name = "cudajit_nccl_lsa_barrier_destroy_thread"]
    pub fn lsa_barrier_destroy_thread(session: &mut [u64; 8]);

    /// Starts an LSA barrier session of some lanes of one warp (`ncclCoopLanes(lane_mask)`):
    /// bit `l` of `lane_mask` set means lane `l` takes part. Every lane of the mask calls
    /// this and the session's other functions, converged (they `__syncwarp(lane_mask)`),
    /// with the same mask and `index`; lanes outside the mask must not. Use it when a warp
    /// splits into independent groups (e.g. half warps, masks `0x0000_ffff` and
    /// `0xffff_0000`, as `peer_read_half_warps`), or when only the lanes that are active
    /// in a branch synchronise with their peers. Needs one LSA barrier per such group of
    /// the grid. The mask is kept in the session: the later calls take only the session.
    #[link_name = "cudajit_nccl_lsa_barrier_init_lanes"]
    pub fn lsa_barrier_init_lanes(
        session: &mut [u64; 8],
        comm: &DevComm,
        lane_mask: u32,
        index: u32,
    );
    /// The lanes' arrival ([`lsa_barrier_arrive`] for a lanes session).
    #[link_name = "cudajit_nccl_lsa_barrier_arrive_lanes"]
    pub fn lsa_barrier_arrive_lanes(session: &mut [u64; 8], order: MemoryOrder);
    /// The lanes' wait.
    #[link_name = "cudajit_nccl_lsa_barrier_wait_lanes"]
    pub fn lsa_barrier_wait_lanes(session: &mut [u64; 8], order: MemoryOrder);
    /// The lanes' arrive, then wait.
    #[link_name = "cudajit_nccl_lsa_barrier_sync_lanes"]
    pub fn lsa_barrier_sync_lanes(session: &mut [u64; 8], order: MemoryOrder);
    /// Ends a lanes session, storing its epoch for the next kernel.
    #[link_name = "cudajit_nccl_lsa_barrier_destroy_lanes"]
    pub fn lsa_barrier_destroy_lanes(session: &mut [u64; 8]);

    /// Starts an LSA barrier session of a span of consecutive warps of the CTA
    /// (`ncclCoopWarpSpan(warp0, nWarps, id)`): warps `warp0 .. warp0 + nwarps` of the
    /// block (warp `w` = threads `32 * w .. 32 * w + 32` of a one-dimensional block) take
    /// part, every thread of them calls, with the same arguments. The span synchronises
    /// internally on hardware named barrier `1 + id` with `32 * nwarps` threads, so spans
    /// that are in a session at the same time need different ids, `id` is at most 14
    /// (barrier 0 is `sync_threads()`'s; there are 16), and the kernel must not use those
    /// named barriers itself; `warp0`, `nwarps` and `id` are below 256 (NCCL keeps them
    /// in 8-bit fields). Use it when a CTA is split into groups of warps that work
    /// independently (e.g. producer and consumer warps, or several chunks per CTA, as
    /// `peer_read_warp_spans`): each span meets its counterparts on the peers without
    /// waiting for the rest of its CTA. Needs one LSA barrier per span of the grid (the
    /// `index`). The span is kept in the session: the later calls take only the session.
    #[link_name = "cudajit_nccl_lsa_barrier_init_warp_span"]
    pub fn lsa_barrier_init_warp_span(
        session: &mut [u64; 8],
        comm: &DevComm,
        warp0: u32,
        nwarps: u32,
        id: u32,
        index: u32,
    );
    /// The span's arrival ([`lsa_barrier_arrive`] for a warp span's session).
    #[link_name = "cudajit_nccl_lsa_barrier_arrive_warp_span"]
    pub fn lsa_barrier_arrive_warp_span(session: &mut [u64; 8], order: MemoryOrder);
    /// The span's wait.
    #[link_name = "cudajit_nccl_lsa_barrier_wait_warp_span"]
    pub fn lsa_barrier_wait_warp_span(session: &mut [u64; 8], order: MemoryOrder);
    /// The span's arrive, then wait.
    #[link_name = "cudajit_nccl_lsa_barrier_sync_warp_span"]
    pub fn lsa_barrier_sync_warp_span(session: &mut [u64; 8], order: MemoryOrder);
    /// Ends a warp span's session, storing its epoch for the next kernel.
    #[link_name = "cudajit_nccl_lsa_barrier_destroy_warp_span"]
    pub fn lsa_barrier_destroy_warp_span(session: &mut [u64; 8]);
}

/// `signal` of [`gin_put`] for a put that bumps no signal. Kernels cannot name constants
/// yet: write `0xffff_ffff` there.
pub const GIN_NO_SIGNAL: u32 = u32::MAX;

// GIN (GPU-initiated networking): one-sided puts and signals to world ranks over the
// network, NCCL 2.32+ only (its `libnccl_device.ltoir`, through cudajit's shim; the 2.28
// bridge and the 2.31 shim do not define these, and a kernel calling them fails to link,
// naming the function). Each call is the calling thread's alone (NCCL's `ncclCoopThread`);
// `context` is a GIN context index (below the device communicator's GIN context count),
// `peer` a world rank, `signal` a GIN signal id (below `gin_signal_count` of the
// `DevCommRequirements`). Signals count with `ncclGinSignalInc` (+1 per put or signal).
// Link-tested on the CPU against 2.32.3 (tests/nccl_device_2_32.rs); never run on a GPU
// here (docs/nccl.md, "GIN").
#[extern_device(library = NCCL_DEVICE)]
extern "C" {
    /// Puts `bytes` bytes at `src_offset` of this rank's part of `src` into `dst_offset`
    /// of world rank `peer`'s part of `dst` over GIN context `context`
    /// (`ncclGin::put`), then bumps `peer`'s signal `signal` by one once the data has
    /// landed (`ncclGin_SignalInc`), or none with [`GIN_NO_SIGNAL`]. Returns once the
    /// put is posted: reuse `src` only after [`gin_flush`].
    #[link_name = "cudajit_nccl_gin_put"]
    #[allow(clippy::too_many_arguments)]
    pub fn gin_put(
        comm: &DevComm,
        context: i32,
        peer: i32,
        dst: Window,
        dst_offset: usize,
        src: Window,
        src_offset: usize,
        bytes: usize,
        signal: u32,
    );
    /// Bumps world rank `peer`'s signal `signal` by one, after the puts this thread
    /// posted to it before (`ncclGin::signal`).
    #[link_name = "cudajit_nccl_gin_signal"]
    pub fn gin_signal(comm: &DevComm, context: i32, peer: i32, signal: u32);
    /// Waits until this rank's signal `signal` reaches `least` (64-bit rolling
    /// comparison), acquiring what the puts it counts wrote (`ncclGin::waitSignal`).
    /// Other threads of the CTA see that data after a `sync_threads()`.
    #[link_name = "cudajit_nccl_gin_wait_signal"]
    pub fn gin_wait_signal(comm: &DevComm, context: i32, signal: u32, least: u64);
    /// Waits until this thread's GIN operations on `context` are locally complete: their
    /// source buffers may be reused (`ncclGin::flush`, acquire).
    #[link_name = "cudajit_nccl_gin_flush"]
    pub fn gin_flush(comm: &DevComm, context: i32);
    /// This rank's signal `signal` (`ncclGin::readSignal`, acquire).
    #[link_name = "cudajit_nccl_gin_read_signal"]
    pub fn gin_read_signal(comm: &DevComm, context: i32, signal: u32) -> u64;
    /// Sets this rank's signal `signal` back to zero (`ncclGin::resetSignal`); no peer may
    /// be bumping it meanwhile.
    #[link_name = "cudajit_nccl_gin_reset_signal"]
    pub fn gin_reset_signal(comm: &DevComm, context: i32, signal: u32);
}
