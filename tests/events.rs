//! Events on a `Stream`: recorded around launches, waited for and timed, on the
//! simulator (always; the host's clock) and on a GPU (skipped without one; CUDA events).

mod common;

use std::time::Duration;

use cudajit::prelude::*;
use cudajit::{Backend, Error, Stream};

/// Busy work long enough to time: each element is the sum of `rounds` terms.
#[kernel]
fn sum_rounds(rounds: u32, out: &mut [u32]) {
    let i = global_index();
    if i < out.len() {
        let mut acc = 0u32;
        for r in 0..rounds {
            acc = acc.wrapping_add(r ^ (i as u32));
        }
        out[i] = acc;
    }
}

fn expected(rounds: u32, len: usize) -> Vec<u32> {
    (0..len as u32)
        .map(|i| (0..rounds).fold(0u32, |acc, r| acc.wrapping_add(r ^ i)))
        .collect()
}

/// Records, launches, records again, and checks the elapsed times: non-negative and
/// ordered (start→end is the negation of end→start), and an interval that spans a host
/// sleep lasts at least the sleep.
fn time_a_launch(stream: &Stream) -> Result<(), Error> {
    const LEN: usize = 4096;
    const ROUNDS: u32 = 64;
    let mut out = stream.alloc_zeros::<u32>(LEN)?;
    let start = stream.record_event()?;
    sum_rounds::launch(stream, LaunchConfig::for_elements(LEN), ROUNDS, &mut out)?;
    let after_launch = stream.record_event()?;
    after_launch.synchronize()?;
    assert_eq!(stream.clone_dtoh(&out)?, expected(ROUNDS, LEN));

    let launch_ms = start.elapsed_ms(&after_launch)?;
    assert!(launch_ms >= 0.0, "launch took {launch_ms} ms");
    let backwards_ms = after_launch.elapsed_ms(&start)?;
    assert!(
        (backwards_ms + launch_ms).abs() <= 1e-3,
        "end→start is {backwards_ms} ms, start→end {launch_ms} ms"
    );

    // The stream is idle, so an event recorded after a sleep is at least the sleep later.
    let sleep = Duration::from_millis(20);
    std::thread::sleep(sleep);
    let after_sleep = stream.record_event()?;
    let slept_ms = after_launch.elapsed_ms(&after_sleep)?;
    assert!(
        slept_ms >= sleep.as_secs_f32() * 1e3 * 0.99,
        "{slept_ms} ms between events around a {sleep:?} sleep"
    );
    assert!(start.elapsed_ms(&after_sleep)? >= slept_ms);
    assert_eq!(start.backend(), stream.backend());
    Ok(())
}

#[test]
fn events_time_launches_on_the_simulator() {
    let stream = Stream::simulator();
    time_a_launch(&stream).unwrap();
}

#[test]
fn events_time_launches_on_the_gpu() {
    let Some(context) = common::gpu_or_skip() else {
        return;
    };
    let stream = Stream::from_cuda(context.new_stream().unwrap());
    assert_eq!(stream.backend(), Backend::Gpu);
    time_a_launch(&stream).unwrap();

    // Events of two backends cannot be compared.
    let gpu_event = stream.record_event().unwrap();
    let sim_event = Stream::simulator().record_event().unwrap();
    let error = gpu_event.elapsed_ms(&sim_event).unwrap_err();
    assert!(
        error.to_string().contains("one backend"),
        "unexpected error: {error}"
    );
}
