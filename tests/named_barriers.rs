//! The block's named barriers from `ptx!` (`bar.sync`, `bar.arrive`, with the barrier and
//! the thread count in registers) on the CPU simulator and on a GPU: two warpgroups
//! handing a shared buffer back and forth over three barriers, a barrier of two warps
//! inside the block, `bar.sync 0;` meeting `sync_threads()`'s barrier; and the reports of
//! their misuse: a barrier past 15, a count that is not a multiple of the warp size or
//! exceeds the block, counts that differ within a phase, lanes of a warp at different
//! barriers, and a barrier that can never complete.

use cudajit::prelude::*;
use cudajit::{Error, LaunchConfig, SimError, Stream};

/// Waits at named barrier `id` until `count` threads have arrived.
#[device]
fn bar_sync(id: u32, count: u32) {
    ptx!("bar.sync $0, $1;", id, count);
}

/// Arrives at named barrier `id` (of `count` threads) without waiting.
#[device]
fn bar_arrive(id: u32, count: u32) {
    ptx!("bar.arrive $0, $1;", id, count);
}

/// 256 threads: warpgroup 1 writes round `r`'s 128 values to shared memory and arrives at
/// barrier `1 + r % 2`, where warpgroup 0 waits before reading them into `out`; warpgroup
/// 0 then arrives at barrier 3, where warpgroup 1 waits before the next round's writes.
/// Warps 0 and 1 also meet at barrier 4 (64 threads) before each read.
#[kernel(max_threads = 256)]
fn hand_over(out: &mut [u32], rounds: u32) {
    let data = shared_array::<u32>(128);
    let t = thread_idx().x;
    if t < 128 {
        data[t as usize] = 0;
    }
    // `__syncthreads()` itself: the same barrier as `sync_threads()`.
    ptx!("bar.sync 0;");
    for round in 0..rounds {
        let full = 1 + round % 2;
        if t >= 128 {
            if round > 0 {
                bar_sync(3, 256);
            }
            data[(t - 128) as usize] = 1000 * round + t;
            bar_arrive(full, 256);
        } else {
            bar_sync(full, 256);
            if t < 64 {
                bar_sync(4, 64);
            }
            // Each block its own rounds (blocks writing the same elements would race).
            let row = block_idx().x * rounds + round;
            out[(row * 128 + t) as usize] = data[(255 - t) as usize - 128];
            bar_arrive(3, 256);
        }
    }
    sync_threads();
}

fn check_hand_over(stream: &Stream) {
    let (rounds, blocks) = (5u32, 2u32);
    let mut out = stream
        .alloc_zeros::<u32>((128 * rounds * blocks) as usize)
        .unwrap();
    hand_over::launch(stream, LaunchConfig::new(blocks, 256), &mut out, rounds).unwrap();
    let out = stream.clone_dtoh(&out).unwrap();
    for row in 0..rounds * blocks {
        let round = row % rounds;
        for t in 0..128u32 {
            // Thread t reads the value thread 128 + (127 - t) wrote.
            let want = 1000 * round + 255 - t;
            assert_eq!(
                out[(row * 128 + t) as usize],
                want,
                "block {}, round {round}, thread {t}",
                row / rounds
            );
        }
    }
}

#[test]
fn named_barriers_hand_shared_memory_between_warpgroups() {
    check_hand_over(&Stream::simulator());
}

#[test]
fn gpu_named_barriers_hand_shared_memory_between_warpgroups() {
    let Ok(context) = cudajit::default_context() else {
        eprintln!("skipped: no GPU");
        return;
    };
    check_hand_over(&Stream::from_cuda(context.default_stream()));
}

/// Misuse by `mode` on 128 threads: 0, every thread at `bar.sync id, count`; 1, warp 0
/// arrives at barrier 1 for 128 threads and the others wait there for `count`; 2, warps 0
/// and 1 wait at barrier 1 for 128 threads and the others return; 3, lane 0 of each warp
/// waits at barrier 1 and the other lanes at barrier 2.
#[kernel(max_threads = 128)]
fn misuse(mode: u32, id: u32, count: u32) {
    let t = thread_idx().x;
    if mode == 0 {
        bar_sync(id, count);
    } else if mode == 1 {
        if t < 32 {
            bar_arrive(1, 128);
        } else {
            bar_sync(1, count);
        }
    } else if mode == 2 {
        if t < 64 {
            bar_sync(1, 128);
        }
    } else if t % 32 == 0 {
        ptx!("bar.sync 1, 128;");
    } else {
        ptx!("bar.sync 2, 128;");
    }
}

/// The error of `misuse` in `mode`.
fn misuse_error(mode: u32, id: u32, count: u32) -> SimError {
    let stream = Stream::simulator();
    match misuse::launch(&stream, LaunchConfig::new(1, 128), mode, id, count) {
        Err(Error::Simulator(error)) => error,
        other => {
            panic!("mode {mode}, barrier {id}, count {count}: expected an error, got {other:?}")
        }
    }
}

#[test]
fn misuse_of_named_barriers_is_reported() {
    let ptx = |error: SimError| match error {
        SimError::Ptx { site, detail } => {
            assert!(site.location.contains("named_barriers.rs"), "{site:?}");
            detail
        }
        other => panic!("expected an inline PTX error, got {other}"),
    };
    let detail = ptx(misuse_error(0, 16, 128));
    assert!(detail.contains("16 named barriers, 0 to 15"), "{detail}");
    let detail = ptx(misuse_error(0, 1, 100));
    assert!(detail.contains("multiple of the warp size"), "{detail}");
    let detail = ptx(misuse_error(0, 1, 0));
    assert!(detail.contains("non-zero multiple"), "{detail}");
    let detail = ptx(misuse_error(0, 1, 512));
    assert!(detail.contains("the block has 128 threads"), "{detail}");
    let detail = ptx(misuse_error(1, 0, 64));
    assert!(
        detail.contains("for 64 threads") && detail.contains("in this phase for 128"),
        "{detail}"
    );
    let detail = ptx(misuse_error(3, 0, 0));
    assert!(detail.contains("same barrier instruction"), "{detail}");
    // Two warps wait for four: the other two returned.
    match misuse_error(2, 0, 0) {
        SimError::BarrierDivergence { detail, .. } => {
            assert!(
                detail.contains("can never complete: 2 of the 4 warps")
                    && detail.contains("exited"),
                "{detail}"
            );
        }
        other => panic!("expected the barrier that never completes, got {other}"),
    }
    // The same kernel used correctly runs.
    let stream = Stream::simulator();
    misuse::launch(&stream, LaunchConfig::new(1, 128), 0, 15, 128).unwrap();
    misuse::launch(&stream, LaunchConfig::new(1, 128), 1, 0, 128).unwrap();
}

/// The barriers are the instructions themselves in the PTX, no calls, nothing in local
/// memory.
#[test]
fn named_barriers_are_bar_instructions_in_the_ptx() {
    match cudajit::codegen::toolchain::Toolchain::global() {
        Ok(_) => {}
        Err(error) if std::env::var("CUDAJIT_REQUIRE_TOOLCHAIN").as_deref() != Ok("1") => {
            eprintln!("skipped: no NVIDIA toolchain ({error})");
            return;
        }
        Err(error) => panic!("the NVIDIA toolchain is required: {error}"),
    }
    let ptx = cudajit::codegen::compile::linked_ptx(
        hand_over::KERNEL.captured(),
        &Default::default(),
        cudajit::Arch::SM_90,
        &Default::default(),
    )
    .unwrap();
    for instruction in ["bar.sync", "bar.arrive"] {
        assert!(ptx.contains(instruction), "no `{instruction}` in\n{ptx}");
    }
    assert!(!ptx.contains(".local"), "local memory in\n{ptx}");
    assert!(!ptx.contains("call"), "a call in\n{ptx}");
}
