//! What warpgroups of a Hopper kernel do together besides `wgmma`: move registers between
//! them (`setmaxnreg`, so a producer warpgroup gives its registers to the consumers) and
//! meet on the block's named barriers (`bar.sync`/`bar.arrive` on barriers 1–15, which only
//! the warps that name them wait on). Typed operations of the kernel language: a register
//! count or thread count that the instruction cannot take is an error at the call when the
//! kernel is compiled.
//!
//! ```
//! use cudajit::prelude::*;
//! use cudajit::tensor::warpgroup::{named_barrier_arrive, named_barrier_sync, setmaxnreg_dec, setmaxnreg_inc};
//!
//! /// Warpgroup 0 produces with few registers; 1 and 2 consume with many and take turns
//! /// on barriers 1 and 2 (256 threads each: both consumers).
//! #[device]
//! fn roles(warpgroup: u32) {
//!     if warpgroup == 0 {
//!         setmaxnreg_dec::<40>();
//!     } else {
//!         setmaxnreg_inc::<232>();
//!         named_barrier_sync::<256>(warpgroup);
//!         // ... this consumer's turn ...
//!         named_barrier_arrive::<256>(3 - warpgroup);
//!     }
//! }
//! # fn main() {}
//! ```

use super::device_only;

/// `setmaxnreg.inc.sync.aligned.u32 N`: the warpgroup's threads grow to `N` registers each
/// (a multiple of 8 from 24 to 256), waiting until the block's pool has them. Warpgroup-
/// collective: all 128 threads run it together.
pub fn setmaxnreg_inc<const N: u32>() {
    device_only("setmaxnreg_inc")
}

/// `setmaxnreg.dec.sync.aligned.u32 N`: the warpgroup's threads shrink to `N` registers
/// each (a multiple of 8 from 24 to 256), giving the rest back to the block's pool.
/// Warpgroup-collective.
pub fn setmaxnreg_dec<const N: u32>() {
    device_only("setmaxnreg_dec")
}

/// `bar.sync id, THREADS`: the calling warp arrives at named barrier `id` (1 to 15; 0 is
/// `sync_threads()`'s) and waits until `THREADS` threads (a multiple of 32) have arrived.
/// Every lane of the warp calls it.
pub fn named_barrier_sync<const THREADS: u32>(id: u32) {
    let _ = id;
    device_only("named_barrier_sync")
}

/// `bar.arrive id, THREADS`: the calling warp arrives at named barrier `id` without
/// waiting (the other side of a [`named_barrier_sync`]).
pub fn named_barrier_arrive<const THREADS: u32>(id: u32) {
    let _ = id;
    device_only("named_barrier_arrive")
}
