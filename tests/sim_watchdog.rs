//! The simulator's watchdog: a thread spinning on a flag that no thread sets is an error
//! naming the kernel, block, thread and line after the limit, never a hang.

use std::time::{Duration, Instant};

#[path = "common/long_loop.rs"]
mod long_loop;

use cudajit::prelude::*;
use cudajit::{Error, SimError, SimOptions, SimStream};
use long_loop::count_to;

/// Thread 5 of block 1 waits for `flags[0]` to become nonzero; nothing ever writes it.
#[kernel]
fn wait_for_a_flag(flags: &mut [u32], out: &mut [u32]) {
    let i = global_index();
    if block_idx().x == 1 && thread_idx().x == 5 {
        let mut spins = 0u32;
        while atomic_add(&mut flags[0], 0) == 0 {
            spins = spins.wrapping_add(1);
        }
        out[i] = spins;
    } else if i < out.len() {
        out[i] = 1;
    }
}

fn stream_with(watchdog: Option<Duration>) -> SimStream {
    SimStream::with_options(SimOptions {
        watchdog,
        ..SimOptions::default()
    })
}

#[test]
fn a_thread_spinning_forever_is_reported_after_the_limit() {
    let stream = stream_with(Some(Duration::from_millis(300)));
    let mut flags = stream.alloc_zeros::<u32>(1).unwrap();
    let mut out = stream.alloc_zeros::<u32>(128).unwrap();
    let started = Instant::now();
    let error = wait_for_a_flag::launch(&stream, LaunchConfig::new(2, 64), &mut flags, &mut out)
        .unwrap_err();
    let waited = started.elapsed();
    let Error::Simulator(SimError::Hang { site, milliseconds }) = &error else {
        panic!("expected the watchdog, got {error}");
    };
    assert_eq!(site.kernel, "wait_for_a_flag");
    assert_eq!(site.block, [1, 0, 0]);
    assert_eq!(site.thread, [5, 0, 0]);
    assert!(
        site.location.contains("sim_watchdog.rs:"),
        "{}",
        site.location
    );
    assert!(*milliseconds >= 300, "{milliseconds} ms");
    assert!(waited < Duration::from_secs(30), "took {waited:?}");
    let message = error.to_string();
    assert!(message.contains("CUDAJIT_SIM_WATCHDOG_S"), "{message}");
    eprintln!("reported: {message}");
}

#[test]
fn the_limit_comes_from_the_variable_and_can_be_turned_off() {
    // Explicit options win over the variable; `Duration::MAX` turns the watchdog off.
    let never = SimOptions {
        watchdog: Some(Duration::MAX),
        ..SimOptions::default()
    };
    assert_eq!(never.resolved_watchdog(), Ok(None));
    let explicit = SimOptions {
        watchdog: Some(Duration::from_secs(3)),
        ..SimOptions::default()
    };
    assert_eq!(
        explicit.resolved_watchdog(),
        Ok(Some(Duration::from_secs(3)))
    );
    // Without the variable (the test harness does not set it), the generous default.
    if std::env::var_os(cudajit::simulator::watchdog::VARIABLE).is_none() {
        assert_eq!(
            SimOptions::default().resolved_watchdog(),
            Ok(Some(cudajit::simulator::watchdog::DEFAULT_LIMIT))
        );
    }
}

#[test]
fn long_loops_that_end_are_not_stopped() {
    // Millions of iterations, far more than the watchdog's check interval, well under its
    // limit: counting backward jumps alone never stops a thread.
    let stream = stream_with(Some(Duration::from_secs(60)));
    let mut out = stream.alloc_zeros::<u32>(1).unwrap();
    let n = 3_000_000u32;
    count_to::launch(&stream, LaunchConfig::new(1, 32), n, &mut out).unwrap();
    let expected = (0..n).fold(0u32, |s, k| s.wrapping_add(k ^ 0x5a5a));
    assert_eq!(stream.clone_dtoh(&out).unwrap(), vec![expected]);
}
