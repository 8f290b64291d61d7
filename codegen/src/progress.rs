//! Progress and duration of long compile steps (an NCCL bridge built by nvcc, an LTO link
//! against a 10 MB device library).
//!
//! A [`Step`] logs its start at debug level and its end with its duration: at info level
//! when it took longer than [`SLOW`], else at debug level. A step declared long
//! ([`Step::long`]) logs its start at info level and, until it ends, a "still running" line
//! every [`HEARTBEAT`] from a helper thread, so a user looking at a silent program knows
//! what it waits for.

use std::sync::mpsc::{self, RecvTimeoutError, Sender};
use std::time::{Duration, Instant};

/// Steps longer than this report their duration at info level.
pub const SLOW: Duration = Duration::from_millis(500);
/// Inputs larger than this make a step long (NCCL's `.ltoir` is 10 MB; a kernel's LTO-IR
/// is kilobytes).
pub const LONG_INPUT: usize = 4 << 20;
/// Interval of the "still running" lines of long steps.
pub const HEARTBEAT: Duration = Duration::from_secs(5);

/// A running compile step; logs its duration when finished or dropped.
pub struct Step {
    what: String,
    started: Instant,
    stop: Option<Sender<()>>,
    finished: bool,
}

impl Step {
    /// A step expected to be quick: start at debug level, duration at info level if slow.
    pub fn new(what: impl Into<String>) -> Step {
        let what = what.into();
        tracing::debug!("cudajit: {what}...");
        Step {
            what,
            started: Instant::now(),
            stop: None,
            finished: false,
        }
    }

    /// A step expected to take seconds: start at info level and a line every
    /// [`HEARTBEAT`] until it ends.
    pub fn long(what: impl Into<String>) -> Step {
        let what = what.into();
        tracing::info!("cudajit: {what} (this can take several seconds)...");
        let (stop, stopped) = mpsc::channel::<()>();
        let label = what.clone();
        let started = Instant::now();
        let spawned = std::thread::Builder::new()
            .name("cudajit-progress".into())
            .spawn(move || loop {
                match stopped.recv_timeout(HEARTBEAT) {
                    Err(RecvTimeoutError::Timeout) => tracing::info!(
                        "cudajit: {label}: still running after {} s",
                        started.elapsed().as_secs()
                    ),
                    _ => return,
                }
            });
        Step {
            what,
            started,
            stop: spawned.ok().map(|_| stop),
            finished: false,
        }
    }

    /// A step over `bytes` of input: [`Step::long`] above [`LONG_INPUT`] (an NCCL device
    /// library), else [`Step::new`].
    pub fn sized(what: impl Into<String>, bytes: usize) -> Step {
        if bytes > LONG_INPUT {
            Step::long(what)
        } else {
            Step::new(what)
        }
    }

    /// Ends the step and returns its duration.
    pub fn finish(mut self) -> Duration {
        self.end()
    }

    fn end(&mut self) -> Duration {
        let elapsed = self.started.elapsed();
        if self.finished {
            return elapsed;
        }
        self.finished = true;
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        let ms = elapsed.as_secs_f64() * 1e3;
        if elapsed >= SLOW {
            tracing::info!("cudajit: {} took {ms:.0} ms", self.what);
        } else {
            tracing::debug!("cudajit: {} took {ms:.1} ms", self.what);
        }
        elapsed
    }
}

impl Drop for Step {
    fn drop(&mut self) {
        self.end();
    }
}
