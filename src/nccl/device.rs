//! NCCL's device API inside `#[kernel]`s: ranks and teams, LSA (load/store-accessible)
//! peer memory of symmetric windows, and LSA barriers.
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

use cudajit_core::layout::{DeviceStruct, FieldLayout, StructLayout};

use crate::{extern_device, DeviceCopy, DeviceLibrary};

/// The device library of the NCCL this process loads (`Nccl::global()`): provided at the
/// first compile of a kernel that calls into it, for that kernel's GPU, and part of the
/// kernel's cache key by content.
pub static NCCL_DEVICE: DeviceLibrary = DeviceLibrary::provided("NCCL device library", provide_tmp);

fn provide_tmp(_sm: u32) -> Result<cudajit_core::external::ProvidedLibrary, String> {
    Err("TEMPORARY".into())
}

/// Bytes of `ncclDevComm` a [`DevComm`] carries: more than any release so far needs
/// (88 bytes in 2.28.3, 200 in 2.28.9, 248 in 2.32.3).
pub const DEV_COMM_CAPACITY: usize = 256;

pub(crate) const DEV_COMM_WORDS: usize = DEV_COMM_CAPACITY / 8;

/// A rank's `ncclDevComm`, as a kernel parameter. The bytes are the NCCL release's own;
/// kernels only pass `&comm` to the functions of this module.
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
    /// The kernel parameter of local rank `index` of a device communicator.
    pub fn for_rank(dev_comm: &cudajit_nccl::DevComm, index: usize) -> Result<Self, DevCommError> {
        let count = (0..)
            .take_while(|&i| dev_comm.as_bytes(i).is_some())
            .count();
        let bytes = dev_comm
            .as_bytes(index)
            .ok_or(DevCommError::NoSuchRank { index, count })?;
        Self::from_bytes(bytes)
    }

    /// A parameter holding `bytes`, a `ncclDevComm` of the loaded release.
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
    };
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
}
