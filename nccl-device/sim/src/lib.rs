//! NCCL's device API on the CPU simulator: several ranks in one process, no GPU and no
//! NCCL library.
//!
//! A [`SimWorld`] of `n` ranks ([`SimWorld::new`]) stands for `n` GPUs of one NVLink
//! domain (one LSA team of every rank); [`SimWorld::with_nodes`] stands for several nodes
//! of the same number of GPUs (see [Several nodes](#several-nodes)). It gives each rank a stream ([`SimWorld::stream`]), its device
//! communicator ([`SimWorld::dev_comm`]) and symmetric buffers ([`SimWorld::alloc_symmetric`],
//! one window per rank, copied in and out per rank). Kernels are the same `#[kernel]`s
//! that run on GPUs, launched with their ordinary generated `launch` on each rank's
//! stream:
//!
//! ```
//! use cudajit::nccl::device::{self as nccl, DevComm, MemoryOrder, Window};
//! use cudajit::nccl::sim::SimWorld;
//! use cudajit::prelude::*;
//!
//! /// Copies the first `count` floats of the next LSA peer's window to byte `out_offset`
//! /// of this rank's window.
//! #[kernel]
//! fn peer_read(comm: DevComm, window: Window, count: usize, out_offset: usize) {
//!     let mut barrier = nccl::lsa_barrier_session(&comm, block_idx().x);
//!     // Every peer has filled its window before anyone reads it.
//!     nccl::lsa_session_sync(&mut barrier, MemoryOrder::Acquire);
//!     let peer = (nccl::lsa_rank(&comm) + 1) % nccl::lsa_size(&comm);
//!     let src = unsafe { slice_at::<f32>(nccl::lsa_address(window, 0, peer), count) };
//!     let out = unsafe { slice_at_mut::<f32>(nccl::local_address(window, out_offset), count) };
//!     let mut i = global_index();
//!     while i < count {
//!         out[i] = src[i];
//!         i += grid_stride();
//!     }
//!     // Nobody changes its window before every peer has read it.
//!     nccl::lsa_session_sync(&mut barrier, MemoryOrder::Release);
//! }
//!
//! fn main() -> Result<(), cudajit::Error> {
//!     let world = SimWorld::new(4)?;
//!     let buffer = world.alloc_symmetric::<f32>(2048)?;
//!     for rank in 0..world.nranks() {
//!         buffer.copy_from_host(rank, &vec![rank as f32; 1024])?;
//!     }
//!     for rank in 0..world.nranks() {
//!         // Deferred until every rank has launched; the last launch runs them all.
//!         peer_read::launch(
//!             world.stream(rank),
//!             LaunchConfig::new(4, 128),
//!             world.dev_comm(rank),
//!             buffer.window(rank),
//!             1024,
//!             4096,
//!         )?;
//!     }
//!     world.synchronize()?; // an error if some rank has not launched
//!     let mut out = vec![0f32; 2048];
//!     buffer.copy_to_host(1, &mut out)?;
//!     assert!(out[1024..].iter().all(|&x| x == 2.0)); // rank 1 read rank 2's window
//!     Ok(())
//! }
//! ```
//!
//! What is modelled:
//! - the `cudajit_nccl_*` functions of [`cudajit_nccl_device`]: ranks and the LSA team (every
//!   rank, LSA rank = world rank; with several nodes, the node's ranks), `lsa_address`/`peer_address`/`local_address` returning
//!   simulated device addresses into the ranks' windows (every access through
//!   `slice_at`/`slice_at_mut` is bounds-checked against the window, and reported with the
//!   rank and window when outside it);
//! - LSA barriers with the CTA as cooperative group and barrier index `block_idx().x`:
//!   block `b` of every rank runs on one host thread, and `lsa_barrier_sync` completes
//!   when every thread of block `b` of every rank has reached one. A rank whose block
//!   finishes without reaching the barrier the others wait at (it skipped it, or the ranks'
//!   grids differ) is reported as an error naming the kernel, the rank and the block,
//!   never a hang. `lsa_barrier_arrive` only marks the session; `lsa_barrier_wait` is the
//!   barrier (so a wait completes once every rank's CTA reached its wait: stronger than
//!   NCCL's, which waits for the arrivals only). Sessions are checked: use before
//!   `lsa_barrier_init` or after `lsa_barrier_destroy`, a second `arrive` without `wait`, a
//!   barrier index other than `block_idx().x` and another rank's `DevComm` are reported;
//! - LSA barriers of the other cooperative groups (`lsa_barrier_*_warp`, `_thread`,
//!   `_lanes`, `_warp_span`) the same way: their wait (or sync) is a barrier of the whole
//!   block `b` of every rank too, stronger than NCCL's, which waits for the session's
//!   group only. So a kernel whose threads all reach the same barrier call (as the
//!   examples' `peer_read_warps`, `peer_read_warp_spans`, `peer_read_half_warps` and
//!   `peer_read_threads` do) runs as on GPUs, while one whose warps or threads pass
//!   different numbers of barriers, or where some threads take no part (lanes outside the
//!   mask, warps outside every span), is reported as a barrier divergence although it
//!   may be correct on GPUs; and a kernel relying on its group's barrier alone for data
//!   other groups of its block wrote is not caught. The barrier index of these groups is
//!   not checked (the ranks' blocks are paired whatever it is); their arguments are: the
//!   caller's lane must be in the lane mask; a warp span needs a one-dimensional block,
//!   `id <= 14` and the caller's warp inside warps `warp0 .. warp0 + nwarps` of the
//!   block. Calling one group's function on another group's session is reported;
//! - memory orders are accepted and ignored: every simulated access is already ordered.
//!
//! # Several nodes
//!
//! `SimWorld::with_nodes(nodes, ranks_per_node)` simulates `nodes` nodes of
//! `ranks_per_node` GPUs each, world rank `node * ranks_per_node + lsa_rank` as NCCL numbers
//! them (consecutive ranks per node). What a kernel sees is what NCCL gives for that
//! topology:
//! - `rank`/`nranks` span the world; `lsa_rank`/`lsa_size` are the rank's place in its
//!   node and the node's size, so `team_lsa` is the node's ranks and `team_rail`
//!   (`{nranks / lsa_size, rank / lsa_size, lsa_size}`) the ranks of every node at the same
//!   LSA rank; `lsa_rank_to_world` adds the node's first rank;
//! - `lsa_address(window, offset, p)` reaches LSA rank `p` of the window owner's node only
//!   (`p < lsa_size`), `peer_address(window, offset, peer)` only world ranks of that node
//!   (NCCL's `lsaRank + (peer - worldRank)`): a kernel reaching another node's window by
//!   load/store is reported as an error naming both nodes, as on GPUs the address would be
//!   unreachable (other nodes are GIN's, which is not simulated). So is a window or a
//!   `DevComm` of a rank of another node passed to a launch;
//! - each node's ranks run as one group: a node's launches run once every rank of *that*
//!   node has launched, and LSA barriers pair the blocks of the node's ranks only. Nodes
//!   share nothing a kernel can reach, so they run one after the other.
//!
//! Not modelled: multimem/NVLS, GIN, the barrier count of
//! the device communicator, and concurrency between the blocks of one rank beyond what the
//! simulator does for any launch (blocks are independent). Launches on a rank's stream
//! take scalars and structs (`DevComm`, `Window`), not simulator buffers.

// The macros' expansions name the runtime `::cudajit` (what the facade re-exports), so this
// crate, built on the runtime without the facade, names it so too.
extern crate cudajit_runtime as cudajit;

use std::collections::HashMap;
use std::marker::PhantomData;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};

use cudajit_sim::{
    extern_address, DeviceMemory, ExternCall, ExternOutcome, GlobalRegion, SimExterns, SimOptions,
    SimReport, MAX_EXTERN_REGIONS,
};

use cudajit::Error;
use cudajit::{BufferElement, SimGroup, SimStream};
use cudajit_nccl_device::{DevComm, Window, DEV_COMM_WORDS};

mod externs;
mod lsa_ranks;
use externs::WorldExterns;
pub use lsa_ranks::{LsaRanks, RanksError, SymmetricTensor};

/// Most ranks of a simulated world.
pub const MAX_RANKS: usize = 64;

/// `DevComm` word 0 of a simulated rank.
const COMM_MAGIC: u64 = u64::from_le_bytes(*b"cjsimcom");
/// Session word 0 of an initialised LSA barrier session.
const SESSION_MAGIC: u64 = u64::from_le_bytes(*b"cjlsabar");
/// The top byte of a simulated window handle.
const WINDOW_TAG: u64 = 0xc5;

static NEXT_WORLD: AtomicU32 = AtomicU32::new(1);

/// Simulated ranks of one NVLink domain, or of several nodes of one each, in this
/// process (see the [module](self)).
///
/// Two nodes of two GPUs: world ranks 0 and 1 on node 0, 2 and 3 on node 1, each node its
/// own LSA team, as NCCL numbers them:
///
/// ```
/// use cudajit::nccl::device::{self as nccl, DevComm, Window};
/// use cudajit::nccl::sim::SimWorld;
/// use cudajit::prelude::*;
///
/// #[kernel]
/// fn place(comm: DevComm, window: Window) {
///     if global_index() == 0 {
///         let out = unsafe { slice_at_mut::<i32>(nccl::local_address(window, 0), 3) };
///         out[0] = nccl::rank(&comm);
///         out[1] = nccl::lsa_rank(&comm);
///         out[2] = nccl::lsa_rank_to_world(&comm, 0); // the node's first rank
///     }
/// }
///
/// fn main() -> Result<(), cudajit::Error> {
///     let world = SimWorld::with_nodes(2, 2)?;
///     assert_eq!((world.nranks(), world.nodes(), world.node_of(3)), (4, 2, 1));
///     let buffer = world.alloc_symmetric::<i32>(3)?;
///     for rank in 0..world.nranks() {
///         let (comm, window) = (world.dev_comm(rank), buffer.window(rank));
///         place::launch(world.stream(rank), LaunchConfig::new(1, 32), comm, window)?;
///     }
///     assert_eq!(buffer.to_vec(3)?, [3, 1, 2]);
///     Ok(())
/// }
/// ```
pub struct SimWorld {
    id: u32,
    nranks: usize,
    /// Ranks per node: the size of every LSA team.
    lsa_size: usize,
    /// One group per node: node `n`'s ranks are members `0..lsa_size` of `groups[n]`.
    groups: Vec<SimGroup>,
    streams: Vec<SimStream>,
    /// Window `w` of rank `r` is `windows[w * nranks + r]`.
    windows: Arc<Mutex<Vec<Arc<DeviceMemory>>>>,
}

impl std::fmt::Debug for SimWorld {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SimWorld")
            .field("id", &self.id)
            .field("nranks", &self.nranks)
            .field("nodes", &self.groups.len())
            .finish_non_exhaustive()
    }
}

impl SimWorld {
    /// A world of `nranks` ranks (1 to [`MAX_RANKS`]) with the default simulator options.
    pub fn new(nranks: usize) -> Result<SimWorld, Error> {
        SimWorld::with_options(nranks, SimOptions::default())
    }

    /// A world whose launches run with `options` (host threads, `print!` target, race
    /// detection; its `externs` are the world's own).
    pub fn with_options(nranks: usize, options: SimOptions) -> Result<SimWorld, Error> {
        SimWorld::with_nodes_and_options(1, nranks, options)
    }

    /// A world of `nodes` nodes of `ranks_per_node` ranks each (at most [`MAX_RANKS`] in
    /// all), world rank `node * ranks_per_node + lsa_rank`: each node's ranks form the LSA
    /// team (see [Several nodes](self#several-nodes)).
    pub fn with_nodes(nodes: usize, ranks_per_node: usize) -> Result<SimWorld, Error> {
        SimWorld::with_nodes_and_options(nodes, ranks_per_node, SimOptions::default())
    }

    /// [`SimWorld::with_nodes`] whose launches run with `options` (see
    /// [`SimWorld::with_options`]).
    pub fn with_nodes_and_options(
        nodes: usize,
        ranks_per_node: usize,
        options: SimOptions,
    ) -> Result<SimWorld, Error> {
        let nranks = nodes.saturating_mul(ranks_per_node);
        if nodes == 0 || ranks_per_node == 0 || nranks > MAX_RANKS {
            return Err(Error::Backend(if nodes == 1 {
                format!("a simulated NCCL world has 1 to {MAX_RANKS} ranks, not {nranks}")
            } else {
                format!(
                    "a simulated NCCL world has 1 to {MAX_RANKS} ranks, on at least one node \
                     of at least one rank: not {nodes} node(s) of {ranks_per_node}"
                )
            }));
        }
        let id = NEXT_WORLD.fetch_add(1, Ordering::Relaxed) & 0xffff;
        let windows: Arc<Mutex<Vec<Arc<DeviceMemory>>>> = Arc::default();
        let groups: Vec<SimGroup> = (0..nodes)
            .map(|node| {
                let snapshot = windows.clone();
                let externs = Box::new(move || {
                    let windows = snapshot.lock().unwrap_or_else(|p| p.into_inner()).clone();
                    Some(Arc::new(WorldExterns {
                        world: id,
                        nranks,
                        lsa_size: ranks_per_node,
                        node,
                        windows,
                        live_sessions: Default::default(),
                    }) as Arc<dyn SimExterns>)
                });
                let labels = (0..ranks_per_node)
                    .map(|p| rank_label(node * ranks_per_node + p, nodes, ranks_per_node))
                    .collect();
                SimGroup::new(labels, options.clone(), externs)
            })
            .collect();
        let streams = (0..nranks)
            .map(|r| groups[r / ranks_per_node].stream(r % ranks_per_node))
            .collect();
        Ok(SimWorld {
            id,
            nranks,
            lsa_size: ranks_per_node,
            groups,
            streams,
            windows,
        })
    }

    /// The number of ranks.
    pub fn nranks(&self) -> usize {
        self.nranks
    }

    /// The number of nodes (1 for [`SimWorld::new`]).
    pub fn nodes(&self) -> usize {
        self.groups.len()
    }

    /// Ranks per node: the size of every LSA team.
    pub fn ranks_per_node(&self) -> usize {
        self.lsa_size
    }

    /// The node of world rank `rank`.
    pub fn node_of(&self, rank: usize) -> usize {
        rank / self.lsa_size
    }

    /// Rank `rank`'s stream: launches on it wait until every rank has launched, and the
    /// launch that completes the set runs all of them (returning the world's result).
    ///
    /// # Panics
    /// If `rank >= nranks()`.
    pub fn stream(&self, rank: usize) -> &SimStream {
        &self.streams[rank]
    }

    /// Rank `rank`'s device communicator, as a kernel parameter (what
    /// `DevComm::for_rank` gives on GPUs).
    ///
    /// # Panics
    /// If `rank >= nranks()`.
    pub fn dev_comm(&self, rank: usize) -> DevComm {
        assert!(rank < self.nranks, "rank {rank} of {}", self.nranks);
        let mut words = [0u64; DEV_COMM_WORDS];
        words[0] = COMM_MAGIC;
        words[1] = u64::from(self.id);
        words[2] = rank as u64;
        words[3] = self.nranks as u64;
        words[4] = self.lsa_size as u64;
        DevComm::from_words(words)
    }

    /// A symmetric buffer of `len` zeros on every rank, each rank's part a window.
    pub fn alloc_symmetric<T: BufferElement>(
        &self,
        len: usize,
    ) -> Result<SimSymmetricBuffer<T>, Error> {
        let bytes = len * T::ELEMENT.size();
        let mut windows = self.windows.lock().unwrap_or_else(|p| p.into_inner());
        let window = windows.len() / self.nranks;
        if windows.len() + self.nranks > MAX_EXTERN_REGIONS || window >= 1 << 24 {
            return Err(Error::Backend(
                "too many windows in a simulated NCCL world".into(),
            ));
        }
        let ranks: Vec<Arc<DeviceMemory>> = (0..self.nranks)
            .map(|_| Arc::new(DeviceMemory::zeroed(bytes)))
            .collect();
        windows.extend(ranks.iter().cloned());
        Ok(SimSymmetricBuffer {
            world: self.id,
            window: window as u32,
            ranks,
            len,
            _element: PhantomData,
        })
    }

    /// `Ok` when no rank's launch waits for the others; otherwise an error naming the
    /// ranks that have not launched.
    pub fn synchronize(&self) -> Result<(), Error> {
        self.groups.iter().try_for_each(SimGroup::synchronize)
    }

    /// What the last run of the world's launches did (all ranks together; with several
    /// nodes, each node's last run, summed).
    pub fn last_report(&self) -> Option<SimReport> {
        let mut reports = self.groups.iter().filter_map(SimGroup::last_report);
        let first = reports.next()?;
        Some(reports.fold(first, |mut sum, r| {
            sum.threads += r.threads;
            sum.blocks += r.blocks;
            sum.barriers += r.barriers;
            sum.workers = sum.workers.max(r.workers);
            sum.elapsed += r.elapsed;
            sum
        }))
    }
}

/// How rank `rank` is named in messages: `rank 5`, or `rank 5 (node 1)` with several nodes.
fn rank_label(rank: usize, nodes: usize, ranks_per_node: usize) -> String {
    if nodes == 1 {
        format!("rank {rank}")
    } else {
        format!("rank {rank} (node {})", rank / ranks_per_node)
    }
}

/// A buffer of `len` values of type `T` on every rank of a [`SimWorld`], each rank's part
/// a window (what `cudajit::nccl::SymmetricBuffer` is on GPUs).
pub struct SimSymmetricBuffer<T> {
    world: u32,
    window: u32,
    ranks: Vec<Arc<DeviceMemory>>,
    len: usize,
    _element: PhantomData<T>,
}

impl<T> std::fmt::Debug for SimSymmetricBuffer<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "SimSymmetricBuffer(window {}, {} elements on {} ranks)",
            self.window,
            self.len,
            self.ranks.len()
        )
    }
}

impl<T: BufferElement> SimSymmetricBuffer<T> {
    /// Elements per rank.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether it has no elements.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Rank `rank`'s window handle, as a kernel parameter.
    ///
    /// # Panics
    /// If the world has no rank `rank`.
    pub fn window(&self, rank: usize) -> Window {
        assert!(
            rank < self.ranks.len(),
            "rank {rank} of {}",
            self.ranks.len()
        );
        Window::from_handle(
            (WINDOW_TAG << 56)
                | (u64::from(self.world) << 40)
                | ((rank as u64) << 24)
                | u64::from(self.window),
        )
    }

    fn memory(&self, rank: usize, count: usize) -> Result<&DeviceMemory, Error> {
        let memory = self.ranks.get(rank).ok_or_else(|| {
            Error::Backend(format!(
                "the simulated world has no rank {rank} (it has {})",
                self.ranks.len()
            ))
        })?;
        if count > self.len {
            return Err(Error::Backend(format!(
                "copying {count} elements of a symmetric buffer of {}",
                self.len
            )));
        }
        Ok(memory)
    }

    /// Rank `rank`'s memory, for a copy on its stream (`SimStream::copy_in_order`; MoE's
    /// buffers copy so).
    #[doc(hidden)]
    pub fn rank_memory(&self, rank: usize) -> Result<Arc<DeviceMemory>, Error> {
        self.memory(rank, 0).map(|_| self.ranks[rank].clone())
    }

    /// Copies `data` to the start of rank `rank`'s part.
    pub fn copy_from_host(&self, rank: usize, data: &[T]) -> Result<(), Error> {
        let bytes = cudajit::__runtime::encode(data);
        self.memory(rank, data.len())?.store_bytes(0, &bytes);
        Ok(())
    }

    /// Copies the start of rank `rank`'s part into `out`.
    pub fn copy_to_host(&self, rank: usize, out: &mut [T]) -> Result<(), Error> {
        out.copy_from_slice(&self.values(rank, out.len())?);
        Ok(())
    }

    /// A copy of rank `rank`'s part.
    pub fn to_vec(&self, rank: usize) -> Result<Vec<T>, Error> {
        self.values(rank, self.len)
    }

    /// The first `count` elements of rank `rank`'s part.
    fn values(&self, rank: usize, count: usize) -> Result<Vec<T>, Error> {
        let mut bytes = vec![0u8; count * T::ELEMENT.size()];
        self.memory(rank, count)?.read_bytes(0, &mut bytes);
        Ok(cudajit::__runtime::decode(&bytes))
    }
}
