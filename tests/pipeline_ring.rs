//! `cudajit::tensor::pipeline::Ring` on the simulator and a Hopper GPU: one producer thread
//! streams 17 items through a ring of 3 buffers (so every buffer is refilled several times
//! and the phases' parities flip) to two consumer warps, each of which must see every item
//! in order; a consumer that never releases its buffers is reported on the simulator as the
//! wait it leaves hanging.

mod common;

use cudajit::prelude::*;
use cudajit::tensor::pipeline::Ring;
use cudajit::{LaunchConfig, Stream};

const ITEMS: u32 = 17;

/// Thread 0 produces `ITEMS` items (`7 g + 1`) into a ring of 3 buffers; lane 0 of warps 1
/// and 2 consume them, writing what they saw to `out[w * ITEMS + g]`. With `release` 0
/// the consumers keep their buffers.
#[kernel]
fn relay(out: &mut [u32], release: u32) {
    let buffers = shared_array::<u32>(3);
    let bars = shared_array::<u64>(6);
    let ring = Ring::new(shared_address(&bars[0]), 3);
    let t = thread_idx().x;
    if t == 0 {
        ring.init(1, 2);
    }
    sync_threads();
    for g in 0..ITEMS {
        if t == 0 {
            ring.acquire(g);
            buffers[ring.stage(g) as usize] = 7 * g + 1;
            ring.arrive_full(g);
        } else if t == 32 || t == 64 {
            ring.wait(g);
            let w = (t / 32 - 1) as usize;
            out[w * ITEMS as usize + g as usize] = buffers[ring.stage(g) as usize];
            if release != 0 {
                ring.release(g);
            }
        }
    }
}

fn check(stream: &Stream) {
    let mut out = stream.alloc_zeros::<u32>(2 * ITEMS as usize).unwrap();
    relay::launch(stream, LaunchConfig::new(1, 96), &mut out, 1).unwrap();
    let want: Vec<u32> = (0..2).flat_map(|_| (0..ITEMS).map(|g| 7 * g + 1)).collect();
    assert_eq!(stream.clone_dtoh(&out).unwrap(), want);
}

#[test]
fn a_ring_relays_every_item_in_order_on_the_simulator() {
    check(&Stream::simulator());
}

#[test]
fn a_ring_that_is_never_released_is_reported_on_the_simulator() {
    let stream = Stream::simulator();
    let mut out = stream.alloc_zeros::<u32>(2 * ITEMS as usize).unwrap();
    let error = relay::launch(&stream, LaunchConfig::new(1, 96), &mut out, 0).unwrap_err();
    let text = error.to_string();
    // The producer's wait for the first refill: buffer 0's `empty` barrier (`bars`[3]).
    assert!(
        text.contains("can never complete") && text.contains("`bars`[3]"),
        "{text}"
    );
    // At the wait's line in the library's own file, inside the device function.
    assert!(
        text.contains("src/tensor/mbarrier.rs:") && text.contains("in `mbarrier_try_wait_parity`"),
        "{text}"
    );
}

#[test]
fn a_ring_relays_every_item_in_order_on_the_gpu() {
    let Some(context) = common::gpu_or_skip() else {
        return;
    };
    if context.compute_capability().unwrap().0 < 9 {
        eprintln!("skipped: mbarrier waits with parity need compute capability 9.0");
        return;
    }
    check(&Stream::from_cuda(context.default_stream()));
}
