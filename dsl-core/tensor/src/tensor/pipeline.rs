//! A ring of shared-memory buffers between a producer and its consumers, over mbarriers:
//! the pipeline of a warp-specialised Hopper kernel (CUTLASS's `PipelineTmaAsync`).
//!
//! Buffer `s` of a ring of `stages` has two barriers: `full(s)`, which completes when the
//! producer has filled it (its arrival plus the bytes TMA announced), and `empty(s)`, which
//! completes when every consumer has released it. Item `g` of the stream (a k-tile
//! counter that may run on across a persistent kernel's tiles) lives in buffer `g % stages`
//! and is that buffer's round `g / stages`; round `r` completes phases of parity `r & 1`.
//! So the producer, before filling item `g`, waits for the consumers to have released item
//! `g - stages` ([`Ring::acquire`]); a consumer waits for item `g` ([`Ring::wait`]) and
//! releases it when its reads are done ([`Ring::release`]).
//!
//! ```no_run
//! use cudajit::prelude::*;
//! use cudajit::tensor::pipeline::Ring;
//!
//! /// Warp 0 produces 8 items through a ring of 2 buffers; warp 1 consumes them in order.
//! #[kernel]
//! fn relay(out: &mut [u32]) {
//!     let buffers = shared_array::<u32>(2);
//!     let bars = shared_array::<u64>(4);
//!     let ring = Ring::new(shared_address(&bars[0]), 2);
//!     let t = thread_idx().x;
//!     if t == 0 {
//!         ring.init(1, 1); // one producer arrival fills, one consumer arrival empties
//!     }
//!     sync_threads();
//!     for g in 0..8u32 {
//!         if t == 0 {
//!             ring.acquire(g);
//!             buffers[ring.stage(g) as usize] = 10 * g;
//!             ring.arrive_full(g);
//!         } else if t == 32 {
//!             ring.wait(g);
//!             out[g as usize] = buffers[ring.stage(g) as usize];
//!             ring.release(g);
//!         }
//!     }
//! }
//! # fn main() {}
//! ```

use super::mbarrier::{fence_barrier_init, mbarrier_arrive, mbarrier_init, mbarrier_wait_parity};
use cudajit::{device, DeviceCopy};

/// A ring of `stages` buffers whose `2 · stages` barriers (8 bytes each: the `full` ones,
/// then the `empty` ones) start at `.shared` address `bars` (see the module's
/// documentation).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, DeviceCopy)]
#[repr(C)]
pub struct Ring {
    /// The `.shared` address of the first barrier.
    pub bars: u32,
    /// The buffers in the ring.
    pub stages: u32,
}

#[device]
impl Ring {
    /// The ring of `stages` buffers with its barriers at `bars` (8-byte aligned, `16 ·
    /// stages` bytes).
    pub fn new(bars: u32, stages: u32) -> Self {
        Self { bars, stages }
    }

    /// Initialises the barriers (one thread, before the block synchronises): a buffer is
    /// full after `producers` arrivals (and its announced bytes), empty after `consumers`.
    pub fn init(&self, producers: u32, consumers: u32) {
        for s in 0..self.stages {
            mbarrier_init(self.bars + 8 * s, producers);
            mbarrier_init(self.bars + 8 * (self.stages + s), consumers);
        }
        fence_barrier_init();
    }

    /// The buffer item `g` lives in.
    pub fn stage(&self, g: u32) -> u32 {
        g % self.stages
    }

    /// The barrier that completes when item `g`'s buffer is full (the one a TMA copy
    /// names, and `mbarrier_arrive_expect_tx` announces its bytes on).
    pub fn full(&self, g: u32) -> u32 {
        self.bars + 8 * (g % self.stages)
    }

    /// The barrier that completes when item `g`'s buffer has been released.
    pub fn empty(&self, g: u32) -> u32 {
        self.bars + 8 * (self.stages + g % self.stages)
    }

    /// The producer: waits until item `g`'s buffer is free, i.e. item `g - stages` has
    /// been released (the first `stages` items find their buffers free).
    pub fn acquire(&self, g: u32) {
        if g >= self.stages {
            mbarrier_wait_parity(self.empty(g), (g / self.stages - 1) & 1);
        }
    }

    /// The producer's plain arrival on item `g`'s `full` barrier (with TMA, announce the
    /// bytes with `mbarrier_arrive_expect_tx(ring.full(g), bytes)` instead).
    pub fn arrive_full(&self, g: u32) {
        mbarrier_arrive(self.full(g));
    }

    /// A consumer: waits until item `g` is in its buffer.
    pub fn wait(&self, g: u32) {
        mbarrier_wait_parity(self.full(g), (g / self.stages) & 1);
    }

    /// A consumer: releases item `g`'s buffer to the producer.
    pub fn release(&self, g: u32) {
        mbarrier_arrive(self.empty(g));
    }
}
