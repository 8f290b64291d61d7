//! LSA barrier sessions that end where their scope ends, as NCCL's C++
//! `ncclLsaBarrierSession` does: [`lsa_barrier_session`] starts the CTA's session, the
//! language calls its end (NCCL's destructor, which stores the barrier's epoch for the next
//! kernel) at the end of the block that holds it and before any `return`, `break` or
//! `continue` that leaves the block, so it cannot be forgotten.
//!
//! ```no_run
//! use cudajit::nccl::device::{self as nccl, DevComm, MemoryOrder, Window};
//! use cudajit::prelude::*;
//!
//! #[kernel]
//! fn peer_read(comm: DevComm, window: Window, out: &mut [f32]) {
//!     let mut barrier = nccl::lsa_barrier_session(&comm, block_idx().x);
//!     nccl::lsa_session_sync(&mut barrier, MemoryOrder::Acquire);
//!     let peer = (nccl::lsa_rank(&comm) + 1) % nccl::lsa_size(&comm);
//!     let n = out.len();
//!     let src = unsafe { slice_at::<f32>(nccl::lsa_address(window, 0, peer), n) };
//!     let i = global_index();
//!     if i < n {
//!         out[i] = src[i];
//!     }
//!     nccl::lsa_session_sync(&mut barrier, MemoryOrder::Release);
//!     // `barrier` ends here.
//! }
//! # fn main() {}
//! ```
//!
//! A session is never copied (the language refuses `let b = barrier;` and passing it by
//! value): functions take it as `&mut`. The functions bind the same symbols as the
//! `[u64; 8]` sessions ([`super::lsa_barrier_init`]); a kernel may use both forms.

use super::{DevComm, MemoryOrder, NCCL_DEVICE};
use cudajit::{device, extern_device, DeviceCopy};

/// The CTA's LSA barrier session (`ncclLsaBarrierSession<ncclCoopCta>`): the 64 bytes,
/// aligned to 16, the bridge and the 2.32 shim reserve for it. Start one with
/// [`lsa_barrier_session`]; it ends at the end of its scope.
///
/// A session is never copied; NCCL's functions take it as `&mut`. One session per round
/// of a loop, each ending (and storing its epoch) at the end of its iteration:
///
/// ```
/// use cudajit::nccl::device::{self as nccl, DevComm, MemoryOrder, Window};
/// use cudajit::nccl::sim::SimWorld;
/// use cudajit::prelude::*;
///
/// #[kernel]
/// fn rounds(comm: DevComm, window: Window) {
///     let me = nccl::lsa_rank(&comm);
///     let next = (me + 1) % nccl::lsa_size(&comm);
///     let mine = unsafe { slice_at_mut::<i32>(nccl::local_address(window, 0), 4) };
///     let theirs = unsafe { slice_at::<i32>(nccl::lsa_address(window, 0, next), 4) };
///     for round in 0..2usize {
///         let mut session = nccl::lsa_barrier_session(&comm, block_idx().x);
///         if thread_idx().x == 0 {
///             mine[round] = 10 * round as i32 + me;
///         }
///         nccl::lsa_session_arrive(&mut session, MemoryOrder::Release);
///         nccl::lsa_session_wait(&mut session, MemoryOrder::Acquire);
///         if thread_idx().x == 0 {
///             mine[2 + round] = theirs[round];
///         }
///     }
/// }
///
/// fn main() -> Result<(), cudajit::Error> {
///     let world = SimWorld::new(2)?;
///     let buffer = world.alloc_symmetric::<i32>(4)?;
///     for rank in 0..2 {
///         let (comm, window) = (world.dev_comm(rank), buffer.window(rank));
///         rounds::launch(world.stream(rank), LaunchConfig::new(1, 32), comm, window)?;
///     }
///     assert_eq!(buffer.to_vec(0)?, [0, 10, 1, 11]);
///     Ok(())
/// }
/// ```
#[derive(Clone, Copy, Debug, DeviceCopy)]
#[repr(C, align(16))]
#[device_drop(lsa_session_end)]
pub struct LsaBarrierSession {
    w0: u64,
    w1: u64,
    w2: u64,
    w3: u64,
    w4: u64,
    w5: u64,
    w6: u64,
    w7: u64,
}

#[extern_device(library = NCCL_DEVICE)]
extern "C" {
    /// Starts `session` in place: what [`lsa_barrier_session`] calls.
    #[link_name = "cudajit_nccl_lsa_barrier_init"]
    pub fn lsa_session_init(session: &mut LsaBarrierSession, comm: &DevComm, index: u32);
    /// Signals that this CTA arrived.
    #[link_name = "cudajit_nccl_lsa_barrier_arrive"]
    pub fn lsa_session_arrive(session: &mut LsaBarrierSession, order: MemoryOrder);
    /// Waits until every LSA peer's CTA arrived.
    #[link_name = "cudajit_nccl_lsa_barrier_wait"]
    pub fn lsa_session_wait(session: &mut LsaBarrierSession, order: MemoryOrder);
    /// Arrive, then wait.
    #[link_name = "cudajit_nccl_lsa_barrier_sync"]
    pub fn lsa_session_sync(session: &mut LsaBarrierSession, order: MemoryOrder);
    /// Ends the session, storing its epoch for the next kernel: the language calls it at
    /// the end of the session's scope (its `#[device_drop]`); calling it as well would end
    /// the session twice.
    #[doc(hidden)]
    #[link_name = "cudajit_nccl_lsa_barrier_destroy"]
    pub fn lsa_session_end(session: &mut LsaBarrierSession);
}

/// Starts the CTA's LSA barrier session number `index` (`block_idx().x`): every thread of
/// the CTA calls it, and the device communicator needs `lsa_barrier_count >= grid.x` (the
/// launch checks it). The session ends at the end of the caller's scope.
///
/// Each rank stores into its window, the barrier orders the stores before the next rank's
/// loads, and each rank reads what its LSA peer stored (on simulated ranks here):
///
/// ```
/// use cudajit::nccl::device::{self as nccl, DevComm, MemoryOrder, Window};
/// use cudajit::nccl::sim::SimWorld;
/// use cudajit::prelude::*;
///
/// #[kernel]
/// fn exchange(comm: DevComm, window: Window) {
///     let me = nccl::lsa_rank(&comm);
///     let next = (me + 1) % nccl::lsa_size(&comm);
///     let mine = unsafe { slice_at_mut::<i32>(nccl::local_address(window, 0), 2) };
///     let theirs = unsafe { slice_at::<i32>(nccl::lsa_address(window, 0, next), 1) };
///     let mut barrier = nccl::lsa_barrier_session(&comm, block_idx().x);
///     if thread_idx().x == 0 {
///         mine[0] = 100 + me;
///     }
///     nccl::lsa_session_sync(&mut barrier, MemoryOrder::AcqRel);
///     if thread_idx().x == 0 {
///         mine[1] = theirs[0];
///     }
///     // The session ends here: its epoch is stored for the next kernel.
/// }
///
/// fn main() -> Result<(), cudajit::Error> {
///     let world = SimWorld::new(4)?;
///     let buffer = world.alloc_symmetric::<i32>(2)?;
///     for rank in 0..4 {
///         let (comm, window) = (world.dev_comm(rank), buffer.window(rank));
///         exchange::launch(world.stream(rank), LaunchConfig::new(1, 64), comm, window)?;
///     }
///     assert_eq!(buffer.to_vec(3)?, [103, 100]);
///     Ok(())
/// }
/// ```
#[device]
pub fn lsa_barrier_session(comm: &DevComm, index: u32) -> LsaBarrierSession {
    let mut session = LsaBarrierSession {
        w0: 0,
        w1: 0,
        w2: 0,
        w3: 0,
        w4: 0,
        w5: 0,
        w6: 0,
        w7: 0,
    };
    lsa_session_init(&mut session, comm, index);
    session
}
