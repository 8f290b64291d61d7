//! NCCL's device API inside `#[kernel]`s: ranks and teams, LSA (load/store-accessible)
//! peer memory of symmetric windows, LSA barriers, and GIN puts and signals (NCCL 2.32+,
//! [`gin_put`]).
//!
//! The functions are `#[extern_device]` declarations bound to the device library of the
//! NCCL the process loaded ([`NCCL_DEVICE`]): cudajit's bridge over `nccl_device.h` for
//! NCCL 2.28, or `libnccl_device.ltoir` for 2.29 and later. nvJitLink's LTO inlines every
//! call, so `lsa_address` costs what it costs in CUDA C++ (two loads and a multiply-add).
//!
//! A kernel takes the communicator as a [`DevComm`] and each symmetric buffer as a
//! [`Window`], both by value:
//!
//! ```no_run
//! use cudajit::nccl::device::{self as nccl, DevComm, MemoryOrder, Window};
//! use cudajit::prelude::*;
//!
//! /// Copies the next LSA peer's window into `out`.
//! #[kernel]
//! fn peer_read(comm: DevComm, window: Window, out: &mut [f32]) {
//!     let mut barrier = [0u64; 8];
//!     nccl::lsa_barrier_init(&mut barrier, &comm, block_idx().x);
//!     // Every peer has written its window before anyone reads it.
//!     nccl::lsa_barrier_sync(&mut barrier, MemoryOrder::Acquire);
//!     let peer = (nccl::lsa_rank(&comm) + 1) % nccl::lsa_size(&comm);
//!     let n = out.len();
//!     let src = unsafe { slice_at::<f32>(nccl::lsa_address(window, 0, peer), n) };
//!     let mut i = global_index();
//!     while i < n {
//!         out[i] = src[i];
//!         i += grid_stride();
//!     }
//!     // Nobody changes its window before every peer has read it.
//!     nccl::lsa_barrier_sync(&mut barrier, MemoryOrder::Release);
//!     nccl::lsa_barrier_destroy(&mut barrier);
//! }
//! # fn main() {}
//! ```
//!
//! The barrier session lives in a `[u64; 8]` of the thread (the 64 bytes, aligned to 16,
//! the bridge reserves for `ncclLsaBarrierSession<ncclCoopCta>`); every thread of the CTA
//! takes part, with barrier index `block_idx().x`, so the device communicator needs
//! `lsa_barrier_count >= grid.x`. `lsa_barrier_destroy` stores the barrier's epoch for
//! the next kernel: skip it and the next kernel's barrier stops synchronising.
//!
//! Sessions of NCCL's other cooperative groups live in the same `[u64; 8]`, each with its
//! own init/arrive/wait/sync/destroy: a warp ([`lsa_barrier_init_warp`], `ncclCoopWarp`),
//! a single thread ([`lsa_barrier_init_thread`], `ncclCoopThread`), some lanes of a warp
//! ([`lsa_barrier_init_lanes`], `ncclCoopLanes`) and consecutive warps of the CTA
//! ([`lsa_barrier_init_warp_span`], `ncclCoopWarpSpan`). Their barrier index is the
//! kernel's choice (one per group of the grid that is in a session at the same time), so
//! the launch check cannot count them: create the device communicator with that many LSA
//! barriers. NCCL 2.28 (cudajit's bridge) and 2.32 (the `.ltoir`, through cudajit's shim)
//! have all five groups.
//!
//! A kernel that takes a [`DevComm`] is a *communicating* kernel, and its `launch` checks
//! two things before anything is enqueued (a [`crate::Error::Collective`] otherwise):
//! that the device communicator has an LSA barrier for every CTA of the grid (when the
//! kernel calls [`lsa_barrier_init`]), and, at the first launch of each specialisation on
//! a device communicator, that every rank launches the same one
//! ([`cudajit_nccl::safe::agreement`]; docs/nccl.md, "Agreement before the first launch").

use cudajit_core::device::{
    block_dim, global_index, grid_stride, slice_at, slice_at_mut, thread_idx, vload2, vload4,
    vload8, vstore2, vstore4, vstore8, DeviceScalar,
};
use cudajit_core::layout::{DeviceStruct, FieldLayout, LaunchCheck, LaunchInfo, StructLayout};
use cudajit_nccl::safe::agreement::{agree_on_launch, LaunchIdentity};

use crate::{bf16, extern_device, DeviceCopy, DeviceLibrary};

mod session;
mod team;
pub use session::*;
pub use team::*;

/// The device library of the NCCL this process loads (`Nccl::global()`): provided at the
/// first compile of a kernel that calls into it, for that kernel's GPU, and part of the
/// kernel's cache key by content.
pub static NCCL_DEVICE: DeviceLibrary = DeviceLibrary::provided(
    "NCCL device library",
    cudajit_nccl::device_library::provide_for_loaded_nccl,
);

/// Bytes of `ncclDevComm` a [`DevComm`] carries: more than any release so far needs
/// (88 bytes in 2.28.3, 200 in 2.28.9, 248 in 2.32.3).
pub const DEV_COMM_CAPACITY: usize = 256;

pub(crate) const DEV_COMM_WORDS: usize = DEV_COMM_CAPACITY / 8;

/// A rank's `ncclDevComm`, as a kernel parameter. The bytes are the NCCL release's own;
/// kernels only pass `&comm` to the functions of this module.
///
/// Built by [`DevComm::for_rank`], its last 8 bytes (past every release's `ncclDevComm`,
/// never read on the device) carry a [`LaunchToken`]: which device communicator and
/// local rank it came from and its LSA barrier count, for the launch checks.
#[derive(Clone, Copy)]
#[repr(C, align(16))]
pub struct DevComm {
    words: [u64; DEV_COMM_WORDS],
}

/// A `ncclDevComm` that does not fit a [`DevComm`].
#[derive(Debug, Clone, thiserror::Error)]
pub enum DevCommError {
    #[error(
        "this NCCL release's ncclDevComm is {size} bytes, more than the {DEV_COMM_CAPACITY} a \
         cudajit kernel parameter carries: raise DEV_COMM_CAPACITY in cudajit"
    )]
    TooLarge { size: usize },
    #[error("the device communicator has no local rank {index} (it has {count})")]
    NoSuchRank { index: usize, count: usize },
}

impl DevComm {
    /// The kernel parameter of local rank `index` of a device communicator, with the
    /// [`LaunchToken`] that lets launches check the grid against its barriers and agree on
    /// the kernel with the other ranks.
    pub fn for_rank(dev_comm: &cudajit_nccl::DevComm, index: usize) -> Result<Self, DevCommError> {
        let count = dev_comm.local_ranks();
        let bytes = dev_comm
            .as_bytes(index)
            .ok_or(DevCommError::NoSuchRank { index, count })?;
        let mut comm = Self::from_bytes(bytes)?;
        let token = LaunchToken {
            serial: dev_comm.serial(),
            local: index,
            lsa_barriers: dev_comm.lsa_barrier_count(),
        };
        match token.encode() {
            Some(word) if bytes.len() <= TOKEN_OFFSET => comm.words[DEV_COMM_WORDS - 1] = word,
            _ => {
                static WARNED: std::sync::Once = std::sync::Once::new();
                WARNED.call_once(|| {
                    tracing::warn!(
                        size = bytes.len(),
                        serial = dev_comm.serial(),
                        local = index,
                        "a DevComm kernel argument without launch token: launches taking it \
                         check neither barriers nor agreement"
                    )
                });
            }
        }
        Ok(comm)
    }

    /// This argument with `token` in place of its launch token (for tests and tools that
    /// build arguments themselves).
    #[doc(hidden)]
    pub fn with_token(mut self, token: LaunchToken) -> Option<Self> {
        self.words[DEV_COMM_WORDS - 1] = token.encode()?;
        Some(self)
    }

    /// The launch token [`DevComm::for_rank`] put in, if any.
    pub fn token(&self) -> Option<LaunchToken> {
        LaunchToken::decode(self.words[DEV_COMM_WORDS - 1])
    }

    /// A parameter holding `bytes`, a `ncclDevComm` of the loaded release, without a
    /// [`LaunchToken`]: launches taking it check neither barriers nor agreement.
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, DevCommError> {
        if bytes.len() > DEV_COMM_CAPACITY {
            return Err(DevCommError::TooLarge { size: bytes.len() });
        }
        let mut words = [0u64; DEV_COMM_WORDS];
        for (i, chunk) in bytes.chunks(8).enumerate() {
            let mut word = [0u8; 8];
            word[..chunk.len()].copy_from_slice(chunk);
            words[i] = u64::from_ne_bytes(word);
        }
        Ok(DevComm { words })
    }
}

impl DevComm {
    /// The parameter's words (the simulator encodes its simulated ranks in them).
    pub(crate) fn from_words(words: [u64; DEV_COMM_WORDS]) -> Self {
        DevComm { words }
    }
}

impl std::fmt::Debug for DevComm {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DevComm").finish_non_exhaustive()
    }
}

/// Where the [`LaunchToken`] lives in a [`DevComm`]: its last word.
const TOKEN_OFFSET: usize = DEV_COMM_CAPACITY - 8;

/// The tag in the low byte of an encoded [`LaunchToken`].
const TOKEN_TAG: u64 = 0xA7;

/// The host-side identity of a [`DevComm`] kernel argument, packed into the 8 bytes past
/// the NCCL struct: tag (8 bits), local rank index (8), LSA barrier count (24, clamped),
/// device communicator serial (24). Device code never reads it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LaunchToken {
    /// [`cudajit_nccl::DevComm::serial`] of the device communicator.
    pub serial: u64,
    /// The local rank index (`DevComm::for_rank`'s `index`).
    pub local: usize,
    /// Its LSA barrier count (clamped to 2^24 - 1).
    pub lsa_barriers: u32,
}

impl LaunchToken {
    /// The largest barrier count a token records; larger counts record as this.
    pub const MAX_BARRIERS: u32 = (1 << 24) - 1;

    /// The packed word; `None` when the serial or the local index does not fit (more
    /// than 2^24 - 1 device communicators in the process, or 256 local ranks).
    pub fn encode(&self) -> Option<u64> {
        if self.serial == 0 || self.serial >= 1 << 24 || self.local > 0xFF {
            return None;
        }
        let barriers = self.lsa_barriers.min(Self::MAX_BARRIERS) as u64;
        Some(TOKEN_TAG | (self.local as u64) << 8 | barriers << 16 | self.serial << 40)
    }

    /// The token of a packed word; `None` without the tag (a `DevComm` built from bytes).
    pub fn decode(word: u64) -> Option<Self> {
        let serial = word >> 40;
        if word & 0xFF != TOKEN_TAG || serial == 0 {
            return None;
        }
        Some(LaunchToken {
            serial,
            local: ((word >> 8) & 0xFF) as usize,
            lsa_barriers: ((word >> 16) & 0xFF_FFFF) as u32,
        })
    }

    /// The key a launch remembers agreement under (with the kernel's specialisation and
    /// GPU, which the memo belongs to).
    fn memo_key(&self) -> u64 {
        self.serial << 8 | self.local as u64
    }
}

/// Memo keys (top bit set: no token key has it) caching whether a kernel calls
/// [`lsa_barrier_init`].
const USES_BARRIERS: u64 = 1 << 63 | 1;
const USES_NO_BARRIERS: u64 = 1 << 63 | 2;

/// Whether the kernel of `launch` reaches [`lsa_barrier_init`] (memoised per loaded kernel).
fn uses_lsa_barriers(launch: &LaunchInfo<'_>) -> bool {
    if launch.memo.contains(USES_BARRIERS) {
        return true;
    }
    if launch.memo.contains(USES_NO_BARRIERS) {
        return false;
    }
    // The CTA session's start, in either form (`[u64; 8]` or `LsaBarrierSession`).
    let starts = [
        <lsa_barrier_init as crate::__private::DeviceFunction>::CAPTURED,
        <lsa_session_init as crate::__private::DeviceFunction>::CAPTURED,
    ];
    let uses = launch.captured.reachable().iter().any(|f| {
        starts
            .iter()
            .any(|init| f.name == init.name && f.source_hash == init.source_hash)
    });
    launch.memo.insert(if uses {
        USES_BARRIERS
    } else {
        USES_NO_BARRIERS
    });
    uses
}

/// The grid of `launch` against a device communicator with `lsa_barriers` LSA barriers:
/// every CTA needs its own (barrier index `block_idx().x`).
pub fn check_lsa_barriers(launch: &LaunchInfo<'_>, lsa_barriers: u32) -> Result<(), String> {
    let ctas = launch.ctas();
    if ctas <= lsa_barriers as u64 {
        return Ok(());
    }
    let (x, y, z) = launch.grid;
    Err(format!(
        "the grid has {ctas} CTAs ({x}x{y}x{z}) but the device communicator has {lsa_barriers} \
         LSA barriers, one per CTA (barrier index block_idx().x); the kernel would \
         synchronise CTAs on barriers they share and hang. Create the device communicator \
         with DevCommRequirements::lsa_barriers({ctas}), or launch at most {lsa_barriers} CTAs"
    ))
}

/// What a device communicator needs for kernels launched with `config` that
/// synchronise through LSA barriers: one barrier per CTA of the grid. Create it with this
/// and the launch check of those kernels passes for every grid up to `config`'s.
pub fn requirements_for(config: &crate::LaunchConfig) -> cudajit_nccl::DevCommRequirements {
    let ctas = (config.grid.x as u64)
        .saturating_mul(config.grid.y as u64)
        .saturating_mul(config.grid.z as u64);
    cudajit_nccl::DevCommRequirements::lsa_barriers(ctas.min(u32::MAX as u64) as u32)
}

/// [`DevComm`]'s launch check: barriers against the grid on every launch; agreement of
/// the ranks on the kernel at its first launch per device communicator and local rank
/// (then a lock-free memo lookup).
fn dev_comm_launch_check(comm: &DevComm, launch: &LaunchInfo<'_>) -> Result<(), String> {
    let Some(token) = comm.token() else {
        return Ok(());
    };
    if uses_lsa_barriers(launch) {
        check_lsa_barriers(launch, token.lsa_barriers)?;
    }
    let key = token.memo_key();
    if launch.memo.contains(key) {
        return Ok(());
    }
    let identity = LaunchIdentity::new(*launch.identity, launch.description);
    // The exchange allocates and waits on a stream of its own: allowed even while this
    // thread captures a CUDA Graph (the first launch may happen inside one).
    crate::kernel::relaxed_capture(|| agree_on_launch(token.serial, token.local, &identity))
        .map_err(|e| e.to_string())?;
    launch.memo.insert(key);
    Ok(())
}

/// The words of [`DevComm`] as the kernel language sees them: opaque `u64`s.
const DEV_COMM_FIELDS: [FieldLayout; DEV_COMM_WORDS] = {
    const NAMES: [&str; DEV_COMM_WORDS] = [
        "w0", "w1", "w2", "w3", "w4", "w5", "w6", "w7", "w8", "w9", "w10", "w11", "w12", "w13",
        "w14", "w15", "w16", "w17", "w18", "w19", "w20", "w21", "w22", "w23", "w24", "w25", "w26",
        "w27", "w28", "w29", "w30", "w31",
    ];
    let mut fields = [FieldLayout {
        name: "",
        ty: cudajit_core::Scalar::U64,
        offset: 0,
    }; DEV_COMM_WORDS];
    let mut i = 0;
    while i < DEV_COMM_WORDS {
        fields[i].name = NAMES[i];
        fields[i].offset = i * 8;
        i += 1;
    }
    fields
};

// SAFETY: `DevComm` is `repr(C)` plain data; the layout lists its words.
#[diagnostic::do_not_recommend]
unsafe impl DeviceStruct for DevComm {
    const LAYOUT: StructLayout = StructLayout {
        name: "DevComm",
        fields: &DEV_COMM_FIELDS,
        size: DEV_COMM_CAPACITY,
        align: 16,
        enum_repr: None,
        variants: &[],
        drop: None,
    };
    const LAUNCH_CHECK: Option<LaunchCheck<Self>> = Some(dev_comm_launch_check);
}
// SAFETY: plain data, passed to the driver by address as CUDA C++ passes structs.
unsafe impl cudarc::driver::DeviceRepr for DevComm {}

/// A rank's handle of a symmetric window (`ncclWindow_t`), as a kernel parameter.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(C)]
pub struct Window {
    handle: u64,
}

impl Window {
    /// The window of local rank `index` of a symmetric buffer, if it has one.
    pub fn for_rank<T: Copy + 'static>(
        buffer: &cudajit_nccl::SymmetricBuffer<T>,
        index: usize,
    ) -> Option<Self> {
        buffer.window(index).map(|w| Window { handle: w as u64 })
    }

    /// The raw `ncclWindow_t`.
    pub fn handle(self) -> u64 {
        self.handle
    }

    /// A window of the handle `handle` (the simulator's windows are handles of its own).
    pub(crate) fn from_handle(handle: u64) -> Self {
        Window { handle }
    }
}

// SAFETY: `Window` is `repr(C)` around one `u64`; the layout says so.
#[diagnostic::do_not_recommend]
unsafe impl DeviceStruct for Window {
    const LAYOUT: StructLayout = StructLayout {
        name: "Window",
        fields: &[FieldLayout {
            name: "handle",
            ty: cudajit_core::Scalar::U64,
            offset: 0,
        }],
        size: 8,
        align: 8,
        enum_repr: None,
        variants: &[],
        drop: None,
    };
}
// SAFETY: plain data.
unsafe impl cudarc::driver::DeviceRepr for Window {}

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

/// The most LSA peers the helpers below take: the length of the shared arrays of peer
/// addresses kernels give them (NVLink domains have at most 72 GPUs).
pub const LSA_MAX_PEERS: usize = 72;

/// Reduce-copy over LSA peers: sums the 4-element vectors `[begin, end)` of the `n_sources`
/// arrays at the addresses `sources[..n_sources]` (peers' windows, in LSA rank order) and
/// stores the sums at the same index of the `n_destinations` arrays at
/// `destinations[..n_destinations]`; `len` is each array's length in elements. The whole
/// grid shares the work (grid-stride, unrolled by 4 so each thread keeps 4 independent
/// 16-byte loads per source in flight), so every thread of the grid calls it with the same
/// arguments. One-shot all-reduce: all peers' inputs to the local output; two-shot: this
/// rank's share of all inputs to every peer's output.
///
/// Arrays must start at 16-byte boundaries (window offsets do); the elements past the last
/// whole vector are the caller's (`lsa_reduce_copy_tail`).
#[crate::device]
#[allow(clippy::too_many_arguments)]
pub fn lsa_reduce_copy<T: DeviceScalar + core::ops::Add<Output = T>>(
    sources: &[usize],
    n_sources: usize,
    destinations: &[usize],
    n_destinations: usize,
    len: usize,
    begin: usize,
    end: usize,
) {
    let stride = grid_stride();
    let mut v = begin + global_index();
    while v + 3 * stride < end {
        let first = unsafe { slice_at::<T>(sources[0], len) };
        let (mut a0, mut b0, mut c0, mut d0) = vload4(first, v);
        let (mut a1, mut b1, mut c1, mut d1) = vload4(first, v + stride);
        let (mut a2, mut b2, mut c2, mut d2) = vload4(first, v + 2 * stride);
        let (mut a3, mut b3, mut c3, mut d3) = vload4(first, v + 3 * stride);
        let mut p = 1;
        while p < n_sources {
            let src = unsafe { slice_at::<T>(sources[p], len) };
            let (e0, f0, g0, h0) = vload4(src, v);
            let (e1, f1, g1, h1) = vload4(src, v + stride);
            let (e2, f2, g2, h2) = vload4(src, v + 2 * stride);
            let (e3, f3, g3, h3) = vload4(src, v + 3 * stride);
            a0 = a0 + e0;
            b0 = b0 + f0;
            c0 = c0 + g0;
            d0 = d0 + h0;
            a1 = a1 + e1;
            b1 = b1 + f1;
            c1 = c1 + g1;
            d1 = d1 + h1;
            a2 = a2 + e2;
            b2 = b2 + f2;
            c2 = c2 + g2;
            d2 = d2 + h2;
            a3 = a3 + e3;
            b3 = b3 + f3;
            c3 = c3 + g3;
            d3 = d3 + h3;
            p += 1;
        }
        let mut d = 0;
        while d < n_destinations {
            let dst = unsafe { slice_at_mut::<T>(destinations[d], len) };
            vstore4(dst, v, (a0, b0, c0, d0));
            vstore4(dst, v + stride, (a1, b1, c1, d1));
            vstore4(dst, v + 2 * stride, (a2, b2, c2, d2));
            vstore4(dst, v + 3 * stride, (a3, b3, c3, d3));
            d += 1;
        }
        v += 4 * stride;
    }
    while v < end {
        let first = unsafe { slice_at::<T>(sources[0], len) };
        let (mut a, mut b, mut c, mut e) = vload4(first, v);
        let mut p = 1;
        while p < n_sources {
            let src = unsafe { slice_at::<T>(sources[p], len) };
            let (w, x, y, z) = vload4(src, v);
            a = a + w;
            b = b + x;
            c = c + y;
            e = e + z;
            p += 1;
        }
        let mut d = 0;
        while d < n_destinations {
            let dst = unsafe { slice_at_mut::<T>(destinations[d], len) };
            vstore4(dst, v, (a, b, c, e));
            d += 1;
        }
        v += stride;
    }
}

/// [`lsa_reduce_copy`] for single elements `[begin, end)` (the tail past the last whole
/// vector), by the whole grid.
#[crate::device]
#[allow(clippy::too_many_arguments)]
pub fn lsa_reduce_copy_tail<T: DeviceScalar + core::ops::Add<Output = T>>(
    sources: &[usize],
    n_sources: usize,
    destinations: &[usize],
    n_destinations: usize,
    len: usize,
    begin: usize,
    end: usize,
) {
    let mut i = begin + global_index();
    while i < end {
        let first = unsafe { slice_at::<T>(sources[0], len) };
        let mut sum = first[i];
        let mut p = 1;
        while p < n_sources {
            let src = unsafe { slice_at::<T>(sources[p], len) };
            sum = sum + src[i];
            p += 1;
        }
        let mut d = 0;
        while d < n_destinations {
            let dst = unsafe { slice_at_mut::<T>(destinations[d], len) };
            dst[i] = sum;
            d += 1;
        }
        i += grid_stride();
    }
}

/// Copies the `len` elements at `source` to the `count` arrays at
/// `destinations[first..first + count]` (an LSA push or pull), 16-byte vectors unrolled by 4
/// when `vectors` says every address allows them (pass `len / 4` then, else 0), single
/// elements for the rest. Every thread of the grid calls it with the same arguments.
#[crate::device]
pub fn lsa_copy<T: DeviceScalar>(
    source: usize,
    destinations: &[usize],
    first: usize,
    count: usize,
    len: usize,
    vectors: usize,
) {
    let stride = grid_stride();
    let src = unsafe { slice_at::<T>(source, len) };
    let mut v = global_index();
    while v + 3 * stride < vectors {
        let (a0, b0, c0, d0) = vload4(src, v);
        let (a1, b1, c1, d1) = vload4(src, v + stride);
        let (a2, b2, c2, d2) = vload4(src, v + 2 * stride);
        let (a3, b3, c3, d3) = vload4(src, v + 3 * stride);
        let mut d = first;
        while d < first + count {
            let dst = unsafe { slice_at_mut::<T>(destinations[d], len) };
            vstore4(dst, v, (a0, b0, c0, d0));
            vstore4(dst, v + stride, (a1, b1, c1, d1));
            vstore4(dst, v + 2 * stride, (a2, b2, c2, d2));
            vstore4(dst, v + 3 * stride, (a3, b3, c3, d3));
            d += 1;
        }
        v += 4 * stride;
    }
    while v < vectors {
        let (a, b, c, e) = vload4(src, v);
        let mut d = first;
        while d < first + count {
            let dst = unsafe { slice_at_mut::<T>(destinations[d], len) };
            vstore4(dst, v, (a, b, c, e));
            d += 1;
        }
        v += stride;
    }
    let mut i = vectors * 4 + global_index();
    while i < len {
        let x = src[i];
        let mut d = first;
        while d < first + count {
            let dst = unsafe { slice_at_mut::<T>(destinations[d], len) };
            dst[i] = x;
            d += 1;
        }
        i += stride;
    }
}

/// [`lsa_reduce_copy`] for 64-bit elements (`i64`, `u64`, `f64`): 16-byte vectors of 2,
/// `[begin, end)` counting vectors of 2.
#[crate::device]
#[allow(clippy::too_many_arguments)]
pub fn lsa_reduce_copy_64<T: DeviceScalar + core::ops::Add<Output = T>>(
    sources: &[usize],
    n_sources: usize,
    destinations: &[usize],
    n_destinations: usize,
    len: usize,
    begin: usize,
    end: usize,
) {
    let mut v = begin + global_index();
    while v < end {
        let first = unsafe { slice_at::<T>(sources[0], len) };
        let (mut a, mut b) = vload2(first, v);
        let mut p = 1;
        while p < n_sources {
            let src = unsafe { slice_at::<T>(sources[p], len) };
            let (x, y) = vload2(src, v);
            a = a + x;
            b = b + y;
            p += 1;
        }
        let mut d = 0;
        while d < n_destinations {
            let dst = unsafe { slice_at_mut::<T>(destinations[d], len) };
            vstore2(dst, v, (a, b));
            d += 1;
        }
        v += grid_stride();
    }
}

/// [`lsa_reduce_copy`] for 16-bit elements summed in their own type (`f16`, `i16`, `u16`):
/// 16-byte vectors of 8, `[begin, end)` counting vectors of 8. (`bf16` sums in `f32`:
/// [`lsa_reduce_copy_bf16`].)
#[crate::device]
#[allow(clippy::too_many_arguments)]
pub fn lsa_reduce_copy_16<T: DeviceScalar + core::ops::Add<Output = T>>(
    sources: &[usize],
    n_sources: usize,
    destinations: &[usize],
    n_destinations: usize,
    len: usize,
    begin: usize,
    end: usize,
) {
    let mut v = begin + global_index();
    while v < end {
        let first = unsafe { slice_at::<T>(sources[0], len) };
        let (mut a, mut b, mut c, mut e, mut f, mut g, mut h, mut k) = vload8(first, v);
        let mut p = 1;
        while p < n_sources {
            let src = unsafe { slice_at::<T>(sources[p], len) };
            let (a1, b1, c1, e1, f1, g1, h1, k1) = vload8(src, v);
            a = a + a1;
            b = b + b1;
            c = c + c1;
            e = e + e1;
            f = f + f1;
            g = g + g1;
            h = h + h1;
            k = k + k1;
            p += 1;
        }
        let mut d = 0;
        while d < n_destinations {
            let dst = unsafe { slice_at_mut::<T>(destinations[d], len) };
            vstore8(dst, v, (a, b, c, e, f, g, h, k));
            d += 1;
        }
        v += grid_stride();
    }
}

/// [`lsa_reduce_copy`] for `bf16`, as CUDA C++ reduces it: 16-byte vectors of 8 elements,
/// accumulated in `f32` and rounded to `bf16` once per element (so with more than two
/// peers the sum does not depend on rounding after each addition).
#[crate::device]
#[allow(clippy::too_many_arguments)]
pub fn lsa_reduce_copy_bf16(
    sources: &[usize],
    n_sources: usize,
    destinations: &[usize],
    n_destinations: usize,
    len: usize,
    begin: usize,
    end: usize,
) {
    let stride = grid_stride();
    let mut v = begin + global_index();
    while v + 3 * stride < end {
        let mut a0 = 0.0f32;
        let mut b0 = 0.0f32;
        let mut c0 = 0.0f32;
        let mut d0 = 0.0f32;
        let mut e0 = 0.0f32;
        let mut f0 = 0.0f32;
        let mut g0 = 0.0f32;
        let mut h0 = 0.0f32;
        let mut a1 = 0.0f32;
        let mut b1 = 0.0f32;
        let mut c1 = 0.0f32;
        let mut d1 = 0.0f32;
        let mut e1 = 0.0f32;
        let mut f1 = 0.0f32;
        let mut g1 = 0.0f32;
        let mut h1 = 0.0f32;
        let mut a2 = 0.0f32;
        let mut b2 = 0.0f32;
        let mut c2 = 0.0f32;
        let mut d2 = 0.0f32;
        let mut e2 = 0.0f32;
        let mut f2 = 0.0f32;
        let mut g2 = 0.0f32;
        let mut h2 = 0.0f32;
        let mut a3 = 0.0f32;
        let mut b3 = 0.0f32;
        let mut c3 = 0.0f32;
        let mut d3 = 0.0f32;
        let mut e3 = 0.0f32;
        let mut f3 = 0.0f32;
        let mut g3 = 0.0f32;
        let mut h3 = 0.0f32;
        let mut p = 0;
        while p < n_sources {
            let src = unsafe { slice_at::<bf16>(sources[p], len) };
            let (xa0, xb0, xc0, xd0, xe0, xf0, xg0, xh0) = vload8(src, v);
            let (xa1, xb1, xc1, xd1, xe1, xf1, xg1, xh1) = vload8(src, v + stride);
            let (xa2, xb2, xc2, xd2, xe2, xf2, xg2, xh2) = vload8(src, v + 2 * stride);
            let (xa3, xb3, xc3, xd3, xe3, xf3, xg3, xh3) = vload8(src, v + 3 * stride);
            a0 += xa0.to_f32();
            b0 += xb0.to_f32();
            c0 += xc0.to_f32();
            d0 += xd0.to_f32();
            e0 += xe0.to_f32();
            f0 += xf0.to_f32();
            g0 += xg0.to_f32();
            h0 += xh0.to_f32();
            a1 += xa1.to_f32();
            b1 += xb1.to_f32();
            c1 += xc1.to_f32();
            d1 += xd1.to_f32();
            e1 += xe1.to_f32();
            f1 += xf1.to_f32();
            g1 += xg1.to_f32();
            h1 += xh1.to_f32();
            a2 += xa2.to_f32();
            b2 += xb2.to_f32();
            c2 += xc2.to_f32();
            d2 += xd2.to_f32();
            e2 += xe2.to_f32();
            f2 += xf2.to_f32();
            g2 += xg2.to_f32();
            h2 += xh2.to_f32();
            a3 += xa3.to_f32();
            b3 += xb3.to_f32();
            c3 += xc3.to_f32();
            d3 += xd3.to_f32();
            e3 += xe3.to_f32();
            f3 += xf3.to_f32();
            g3 += xg3.to_f32();
            h3 += xh3.to_f32();
            p += 1;
        }
        let mut q = 0;
        while q < n_destinations {
            let dst = unsafe { slice_at_mut::<bf16>(destinations[q], len) };
            vstore8(
                dst,
                v,
                (
                    bf16::from_f32(a0),
                    bf16::from_f32(b0),
                    bf16::from_f32(c0),
                    bf16::from_f32(d0),
                    bf16::from_f32(e0),
                    bf16::from_f32(f0),
                    bf16::from_f32(g0),
                    bf16::from_f32(h0),
                ),
            );
            vstore8(
                dst,
                v + stride,
                (
                    bf16::from_f32(a1),
                    bf16::from_f32(b1),
                    bf16::from_f32(c1),
                    bf16::from_f32(d1),
                    bf16::from_f32(e1),
                    bf16::from_f32(f1),
                    bf16::from_f32(g1),
                    bf16::from_f32(h1),
                ),
            );
            vstore8(
                dst,
                v + 2 * stride,
                (
                    bf16::from_f32(a2),
                    bf16::from_f32(b2),
                    bf16::from_f32(c2),
                    bf16::from_f32(d2),
                    bf16::from_f32(e2),
                    bf16::from_f32(f2),
                    bf16::from_f32(g2),
                    bf16::from_f32(h2),
                ),
            );
            vstore8(
                dst,
                v + 3 * stride,
                (
                    bf16::from_f32(a3),
                    bf16::from_f32(b3),
                    bf16::from_f32(c3),
                    bf16::from_f32(d3),
                    bf16::from_f32(e3),
                    bf16::from_f32(f3),
                    bf16::from_f32(g3),
                    bf16::from_f32(h3),
                ),
            );
            q += 1;
        }
        v += 4 * stride;
    }
    while v < end {
        let mut a = 0.0f32;
        let mut b = 0.0f32;
        let mut c = 0.0f32;
        let mut d = 0.0f32;
        let mut e = 0.0f32;
        let mut f = 0.0f32;
        let mut g = 0.0f32;
        let mut h = 0.0f32;
        let mut p = 0;
        while p < n_sources {
            let src = unsafe { slice_at::<bf16>(sources[p], len) };
            let (xa, xb, xc, xd, xe, xf, xg, xh) = vload8(src, v);
            a += xa.to_f32();
            b += xb.to_f32();
            c += xc.to_f32();
            d += xd.to_f32();
            e += xe.to_f32();
            f += xf.to_f32();
            g += xg.to_f32();
            h += xh.to_f32();
            p += 1;
        }
        let mut q = 0;
        while q < n_destinations {
            let dst = unsafe { slice_at_mut::<bf16>(destinations[q], len) };
            vstore8(
                dst,
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
            q += 1;
        }
        v += stride;
    }
}

/// [`lsa_reduce_copy_tail`] for `bf16`, accumulating in `f32`.
#[crate::device]
#[allow(clippy::too_many_arguments)]
pub fn lsa_reduce_copy_tail_bf16(
    sources: &[usize],
    n_sources: usize,
    destinations: &[usize],
    n_destinations: usize,
    len: usize,
    begin: usize,
    end: usize,
) {
    let mut i = begin + global_index();
    while i < end {
        let mut sum = 0.0f32;
        let mut p = 0;
        while p < n_sources {
            let src = unsafe { slice_at::<bf16>(sources[p], len) };
            sum += src[i].to_f32();
            p += 1;
        }
        let mut d = 0;
        while d < n_destinations {
            let dst = unsafe { slice_at_mut::<bf16>(destinations[d], len) };
            dst[i] = bf16::from_f32(sum);
            d += 1;
        }
        i += grid_stride();
    }
}

/// Fills `addresses[p]` with the address of byte `offset` of LSA peer `p`'s part of
/// `window`, for every peer `p < lsa_size`, the CTA's threads sharing the work: call it
/// with a `shared_array::<usize>(72)` ([`LSA_MAX_PEERS`]) and synchronise the CTA before
/// reading it. Traps when the LSA team is larger than the array.
#[crate::device]
pub fn lsa_addresses(window: Window, offset: usize, lsa_size: i32, addresses: &mut [usize]) {
    assert!(
        lsa_size as usize <= addresses.len(),
        "more LSA peers than the address array holds"
    );
    let mut p = thread_idx().x as usize;
    while p < lsa_size as usize {
        addresses[p] = lsa_address(window, offset, p as i32);
        p += block_dim().x as usize;
    }
}
