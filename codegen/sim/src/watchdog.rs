//! The watchdog: a thread that runs for too long without stopping is reported, never left
//! to hang the host.
//!
//! The simulator runs a thread until it exits, waits at a barrier or a warp operation, or
//! fails; a loop waiting on a flag that no thread sets (or that a thread of its own block
//! sets, which never runs while this one spins) would therefore run forever. The
//! interpreter counts the backward jumps a thread takes (every loop iteration takes one);
//! after `CHECK_EVERY` (65536) of them it starts a clock, and at each later multiple it
//! compares the clock with the limit. The cost is one decrement per loop iteration.

use std::time::{Duration, Instant};

use cudajit_core::{EnvVar, EnvVarError};

/// The limit when neither `SimOptions::watchdog` nor `CUDAJIT_SIM_WATCHDOG_S` gives one:
/// generous, as a simulated thread runs about a thousand times slower than a GPU's.
pub const DEFAULT_LIMIT: Duration = Duration::from_secs(120);

/// The variable that sets the limit in seconds (fractions allowed; `0` turns it off).
pub const VARIABLE: &str = "CUDAJIT_SIM_WATCHDOG_S";

/// Backward jumps between two looks at the clock.
pub(crate) const CHECK_EVERY: u32 = 1 << 16;

/// The limit from `CUDAJIT_SIM_WATCHDOG_S` (the default if unset); `None` when turned
/// off with `0`. Anything but a number of seconds is an error, never a silent default.
pub(crate) fn limit_from_environment() -> Result<Option<Duration>, EnvVarError> {
    let limit = EnvVar::process(VARIABLE).seconds(Some("0 turns the watchdog off"))?;
    Ok(match limit {
        None => Some(DEFAULT_LIMIT),
        Some(limit) => (!limit.is_zero()).then_some(limit),
    })
}

/// One thread's clock, within one stretch of running (one call of `thread::run`).
pub(crate) struct Stopwatch {
    limit: Option<Duration>,
    started: Option<Instant>,
    until_check: u32,
}

impl Stopwatch {
    pub(crate) fn new(limit: Option<Duration>) -> Self {
        Stopwatch {
            limit,
            started: None,
            until_check: CHECK_EVERY,
        }
    }

    /// Counts a backward jump; `Some(elapsed)` once the thread has run past the limit.
    #[inline(always)]
    pub(crate) fn back_edge(&mut self) -> Option<Duration> {
        self.until_check -= 1;
        if self.until_check != 0 {
            return None;
        }
        self.until_check = CHECK_EVERY;
        self.look()
    }

    #[cold]
    fn look(&mut self) -> Option<Duration> {
        let limit = self.limit?;
        let started = *self.started.get_or_insert_with(Instant::now);
        let elapsed = started.elapsed();
        (elapsed >= limit).then_some(elapsed)
    }
}
