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
//! two things before anything is enqueued (a [`cudajit::Error::Collective`] otherwise):
//! that the device communicator has an LSA barrier for every CTA of the grid (when the
//! kernel calls [`lsa_barrier_init`]), and, at the first launch of each specialisation on
//! a device communicator, that every rank launches the same one
//! ([`cudajit_nccl::safe::agreement`]; docs/nccl.md, "Agreement before the first launch").
//!
//! The module's rooms: `comm.rs` (the [`DevComm`] and [`Window`] parameters and
//! [`requirements_for`]), `launch_token.rs` (the [`LaunchToken`] a `DevComm` carries),
//! `launch_check.rs` (the barrier count check and the agreement at a launch), `api.rs`
//! (the `#[extern_device]` declarations, whose symbol names are held to
//! `cudajit_nccl::device_code::symbols` by a test), `reduce_copy.rs` (the reduce-copy
//! helpers written in the kernel language), `team.rs` (teams) and `session.rs` (barrier
//! sessions that end with their scope).

// The macros' expansions name the runtime `::cudajit` (what the facade re-exports), so this
// crate, built on the runtime without the facade, names it so too.
extern crate cudajit_runtime as cudajit;

mod api;
mod comm;
mod launch_check;
mod launch_token;
mod reduce_copy;
mod session;
#[cfg(test)]
mod symbol_spellings;
mod team;

pub use api::*;
#[doc(hidden)]
pub use comm::DEV_COMM_WORDS;
pub use comm::{requirements_for, DevComm, DevCommError, Window, DEV_COMM_CAPACITY};
pub use launch_check::check_lsa_barriers;
pub use launch_token::LaunchToken;
pub use reduce_copy::*;
pub use session::*;
pub use team::*;
