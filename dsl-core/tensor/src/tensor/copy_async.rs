//! `cp.async`: copies from global to shared memory that do not wait for the data, so a
//! kernel can load the next tiles while it computes on the current ones.
//!
//! Copies are grouped: [`cp_async_commit`] closes the group of copies issued since the last
//! one, and [`cp_async_wait_group`]`::<N>()` waits until at most `N` groups are still in
//! flight. Data copied by a group is visible to the issuing thread once the wait returns;
//! other threads of the block see it after a `sync_threads()` that follows the wait. A
//! multi-stage pipeline with `S` buffers issues `S - 1` groups ahead and waits with
//! `N = S - 2`.
//!
//! `shared` is a `.shared` address (`shared_address(&tile[i])`), `global` a device address
//! (`global_address(&x[i])`), both aligned to the copy's size.
//!
//! ```no_run
//! use cudajit::prelude::*;
//! use cudajit::tensor::copy_async::{cp_async_16, cp_async_commit, cp_async_wait_group};
//!
//! /// Each of 256 threads copies 16 bytes of the block's 4 KiB into shared memory, then
//! /// reads another thread's after the wait and the barrier.
//! #[kernel]
//! fn reverse_blocks(src: &[u32], dst: &mut [u32]) {
//!     let tile = shared_array::<u32>(1024);
//!     let t = thread_idx().x as usize;
//!     let base = block_idx().x as usize * 1024;
//!     cp_async_16(shared_address(&tile[4 * t]), global_address(&src[base + 4 * t]));
//!     cp_async_commit();
//!     cp_async_wait_group::<0>(); // this thread's copies have landed
//!     sync_threads(); // and every other thread's
//!     for i in 0..4usize {
//!         dst[base + 4 * t + i] = tile[4 * (255 - t) + i];
//!     }
//! }
//! # fn main() {}
//! ```

use super::device_only;
use cudajit::device;
use cudajit_core::ptx;

/// Copies 16 bytes, caching in L2 only (`.cg`: streaming tiles).
#[device]
pub fn cp_async_16(shared: u32, global: u64) {
    ptx!("cp.async.cg.shared.global [$0], [$1], 16;", shared, global);
}

/// Copies the first `bytes` (0 to 16) of 16 and zero-fills the rest of the 16 bytes in
/// shared memory: the tail of a tile that runs past the end of the matrix reads nothing
/// out of bounds when `bytes` is 0.
#[device]
pub fn cp_async_16_zfill(shared: u32, global: u64, bytes: u32) {
    ptx!(
        "cp.async.cg.shared.global [$0], [$1], 16, $2;",
        shared,
        global,
        bytes
    );
}

/// Copies 16 bytes, caching in L1 and L2 (`.ca`: data read again soon).
#[device]
pub fn cp_async_ca_16(shared: u32, global: u64) {
    ptx!("cp.async.ca.shared.global [$0], [$1], 16;", shared, global);
}

/// Copies 8 bytes (`.ca`; `.cg` takes only 16).
#[device]
pub fn cp_async_8(shared: u32, global: u64) {
    ptx!("cp.async.ca.shared.global [$0], [$1], 8;", shared, global);
}

/// Copies 4 bytes (`.ca`).
#[device]
pub fn cp_async_4(shared: u32, global: u64) {
    ptx!("cp.async.ca.shared.global [$0], [$1], 4;", shared, global);
}

/// Closes the group of copies this thread issued since the last commit.
pub fn cp_async_commit() {
    device_only("cp_async_commit")
}

/// Waits until at most `N` of this thread's committed groups are still in flight (`N` from
/// 0 to 7; a larger `N` waits for all, which is always correct).
#[device]
pub fn cp_async_wait_group<const N: u32>() {
    match N {
        0 => ptx!("cp.async.wait_group 0;"),
        1 => ptx!("cp.async.wait_group 1;"),
        2 => ptx!("cp.async.wait_group 2;"),
        3 => ptx!("cp.async.wait_group 3;"),
        4 => ptx!("cp.async.wait_group 4;"),
        5 => ptx!("cp.async.wait_group 5;"),
        6 => ptx!("cp.async.wait_group 6;"),
        7 => ptx!("cp.async.wait_group 7;"),
        _ => ptx!("cp.async.wait_all;"),
    }
}

/// The wait of a multi-stage pipeline of `STAGES` shared buffers (2 to 9): with one group
/// committed per stage and `STAGES - 1` stages issued ahead of the one about to be used,
/// that one has landed once at most `STAGES - 2` groups are still in flight. Follow it with
/// `sync_threads()` for the other threads' copies (and before refilling the buffer the
/// block used last). The loop of such a pipeline, for k-tile `kt` of `tiles`:
///
/// ```text
/// for s in 0..STAGES - 1 { if s < tiles { load(s % STAGES, s) } cp_async_commit(); }
/// for kt in 0..tiles {
///     cp_async_wait_stage::<STAGES>(); sync_threads();      // k-tile kt is in buffer kt % STAGES
///     if kt + STAGES - 1 < tiles { load((kt + STAGES - 1) % STAGES, kt + STAGES - 1) }
///     cp_async_commit();                                     // one group per step, even if empty
///     compute(kt % STAGES);
/// }
/// ```
#[device]
pub fn cp_async_wait_stage<const STAGES: u32>() {
    // A branch on a specialisation constant: only the one taken is compiled.
    if STAGES == 2 {
        cp_async_wait_group::<0>();
    } else if STAGES == 3 {
        cp_async_wait_group::<1>();
    } else if STAGES == 4 {
        cp_async_wait_group::<2>();
    } else if STAGES == 5 {
        cp_async_wait_group::<3>();
    } else if STAGES == 6 {
        cp_async_wait_group::<4>();
    } else if STAGES == 7 {
        cp_async_wait_group::<5>();
    } else if STAGES == 8 {
        cp_async_wait_group::<6>();
    } else if STAGES == 9 {
        cp_async_wait_group::<7>();
    } else {
        cp_async_wait_all();
    }
}

/// Waits for every group this thread committed, and for copies not yet committed.
pub fn cp_async_wait_all() {
    device_only("cp_async_wait_all")
}
