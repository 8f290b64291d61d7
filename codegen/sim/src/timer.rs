//! The simulator's clocks: `clock64()` and `globaltimer()` read one monotonic host clock,
//! in nanoseconds since the process's first read, so values of one thread increase and
//! values of different threads (and blocks) compare, as `%globaltimer`'s do on a GPU.
//! `clock64()` counts nanoseconds, not cycles: a kernel that converts cycles to time with
//! the GPU's clock rate sees the host's time scale instead.

use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// The longest `nanosleep` sleeps, as on the GPU (1 ms).
pub(crate) const MAX_SLEEP_NS: u64 = 1_000_000;

/// Nanoseconds since the first call in this process.
pub(crate) fn now_ns() -> u64 {
    static EPOCH: OnceLock<Instant> = OnceLock::new();
    let epoch = *EPOCH.get_or_init(Instant::now);
    u64::try_from(epoch.elapsed().as_nanos()).unwrap_or(u64::MAX)
}

/// `nanosleep(ns)`: the host thread sleeps (which lets other blocks run while a thread
/// backs off), for at most [`MAX_SLEEP_NS`].
pub(crate) fn sleep(ns: u64) {
    let ns = ns.min(MAX_SLEEP_NS);
    if ns > 0 {
        std::thread::sleep(Duration::from_nanos(ns));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_clock_is_monotonic_and_advances_across_a_sleep() {
        let a = now_ns();
        sleep(200_000);
        let b = now_ns();
        assert!(b >= a + 200_000, "{a} then {b}");
    }
}
