//! Hopper's transaction barriers (`mbarrier`, sm_90) in shared memory: the synchronisation
//! of asynchronous copies (TMA) with the threads that consume their data, and of consumers
//! with the producer that refills a buffer.
//!
//! A barrier is a `u64` in shared memory, named by its `.shared` address
//! (`shared_address(&bars[i])`). It completes a *phase* when its expected arrivals have
//! arrived **and** the bytes announced with [`mbarrier_arrive_expect_tx`] have landed (a TMA
//! copy names the barrier it completes); the phase's parity then flips, and
//! [`mbarrier_wait_parity`]`(bar, p)` returns once the phase of parity `p` is complete. A
//! pipeline of `S` buffers waits on round `r` of buffer `s` with parity `r & 1`.
//!
//! ```no_run
//! use cudajit::prelude::*;
//! use cudajit::tensor::mbarrier::{
//!     fence_barrier_init, mbarrier_arrive, mbarrier_init, mbarrier_wait_parity,
//! };
//!
//! /// Warp 0 publishes a value; the block waits on the barrier instead of `sync_threads`.
//! #[kernel]
//! fn publish(out: &mut [u32]) {
//!     let bars = shared_array::<u64>(1);
//!     let value = shared_array::<u32>(1);
//!     let bar = shared_address(&bars[0]);
//!     let t = thread_idx().x;
//!     if t == 0 {
//!         mbarrier_init(bar, 1);
//!         fence_barrier_init();
//!     }
//!     sync_threads();
//!     if t == 0 {
//!         value[0] = 42;
//!         mbarrier_arrive(bar);
//!     }
//!     mbarrier_wait_parity(bar, 0);
//!     out[t as usize] = value[0];
//! }
//! # fn main() {}
//! ```

use super::device_only;
use cudajit::device;
use cudajit_core::ptx;

/// Initialises the barrier at `barrier` for `count` arrivals per phase (one thread, before
/// any use; then [`fence_barrier_init`] and a block barrier). A typed operation
/// (`mbarrier.init.shared::cta.b64`).
pub fn mbarrier_init(barrier: u32, count: u32) {
    let _ = (barrier, count);
    device_only("mbarrier_init")
}

/// Makes barrier initialisations visible to the asynchronous proxy (TMA completes barriers
/// through it) and to the cluster (`fence.mbarrier_init.release.cluster`).
pub fn fence_barrier_init() {
    device_only("fence_barrier_init")
}

/// One arrival on the barrier (`mbarrier.arrive.shared::cta.b64`).
pub fn mbarrier_arrive(barrier: u32) {
    let _ = barrier;
    device_only("mbarrier_arrive")
}

/// One arrival that also announces `bytes` of asynchronous copies this phase waits for
/// (a TMA box's bytes, out-of-bounds fill included: `TensorMapLayout::box_bytes`).
pub fn mbarrier_arrive_expect_tx(barrier: u32, bytes: u32) {
    let _ = (barrier, bytes);
    device_only("mbarrier_arrive_expect_tx")
}

/// Whether the phase of parity `parity` has completed (the hardware may wait a little
/// before saying no).
#[device]
pub fn mbarrier_try_wait_parity(barrier: u32, parity: u32) -> bool {
    let done = ptx!(u32: "{\n\t.reg .pred p;\n\tmbarrier.try_wait.parity.shared::cta.b64 p, [$1], $2;\n\tselp.u32 $0, 1, 0, p;\n}", barrier, parity);
    done != 0
}

/// Waits until the phase of parity `parity` has completed.
#[device]
pub fn mbarrier_wait_parity(barrier: u32, parity: u32) {
    while !mbarrier_try_wait_parity(barrier, parity) {}
}
