//! Progress and duration of long compile steps (an NCCL bridge built by nvcc, an LTO link
//! against a 10 MB device library), and the notice a user sees when one runs long.
//!
//! [`notice`]: whatever the log settings, an operation (a compile, a simulated launch) still
//! running after [`NOTICE_AFTER`] prints one line on stderr naming the kernel and the step,
//! in the spirit of cargo's "Blocking waiting for file lock": a silent program that is only
//! slow is told apart from a hung one. `CUDAJIT_NOTICE_AFTER_S` changes the delay (`0`: no
//! notices).
//!
//! A [`Step`] logs its start at debug level and its end with its duration: at info level
//! when it took longer than [`SLOW`], else at debug level. A step declared long
//! ([`Step::long`]) logs its start at info level and, until it ends, a "still running" line
//! every [`HEARTBEAT`] from a helper thread, so a user looking at a silent program knows
//! what it waits for.

use std::sync::mpsc::{self, RecvTimeoutError, Sender};
use std::sync::{Condvar, Mutex, OnceLock};
use std::time::{Duration, Instant};

use cudajit_core::{EnvVar, EnvVarError};

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

/// How long an operation runs before [`notice`] says so, unless `CUDAJIT_NOTICE_AFTER_S`
/// says otherwise.
pub const NOTICE_AFTER: Duration = Duration::from_secs(3);

/// The variable that sets the notices' delay in seconds (`0`: none).
pub const NOTICE_VARIABLE: &str = "CUDAJIT_NOTICE_AFTER_S";

/// The notices' delay: `None` when turned off.
pub fn notice_delay() -> Result<Option<Duration>, EnvVarError> {
    let delay = EnvVar::process(NOTICE_VARIABLE).seconds(Some("0 turns the notices off"))?;
    Ok(match delay {
        None => Some(NOTICE_AFTER),
        Some(delay) => (!delay.is_zero()).then_some(delay),
    })
}

/// An operation being watched; dropping it ends the watch. See [`notice`].
#[must_use = "the watch ends when this is dropped"]
pub struct Watched {
    id: Option<u64>,
}

impl Drop for Watched {
    fn drop(&mut self) {
        if let Some(id) = self.id {
            let watcher = watcher();
            lock(&watcher.pending).retain(|p| p.id != id);
        }
    }
}

/// Prints `cudajit: kernel `{kernel}`: {step} — still running after N s` on stderr once,
/// if the operation is still running (the returned value not dropped) after the delay.
/// Costs a lock and a push: one watcher thread, started at the first call, serves every
/// operation of the process. With notices off nothing is watched; an invalid
/// `CUDAJIT_NOTICE_AFTER_S` is the error.
pub fn notice(kernel: &str, step: &str) -> Result<Watched, EnvVarError> {
    let Some(delay) = notice_delay_memo()? else {
        return Ok(Watched { id: None });
    };
    let watcher = watcher();
    let mut pending = lock(&watcher.pending);
    let id = watcher
        .next_id
        .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    pending.push(Pending {
        id,
        due: Instant::now() + delay,
        delay,
        line: format!("kernel `{kernel}`: {step}"),
    });
    watcher.changed.notify_one();
    Ok(Watched { id: Some(id) })
}

/// The delay, read once per process (a launch must not read the environment).
fn notice_delay_memo() -> Result<Option<Duration>, EnvVarError> {
    static DELAY: OnceLock<Result<Option<Duration>, EnvVarError>> = OnceLock::new();
    DELAY.get_or_init(notice_delay).clone()
}

struct Pending {
    id: u64,
    due: Instant,
    delay: Duration,
    line: String,
}

struct Watcher {
    pending: Mutex<Vec<Pending>>,
    changed: Condvar,
    next_id: std::sync::atomic::AtomicU64,
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|p| p.into_inner())
}

fn watcher() -> &'static Watcher {
    static WATCHER: OnceLock<&'static Watcher> = OnceLock::new();
    WATCHER.get_or_init(|| {
        let watcher: &'static Watcher = Box::leak(Box::new(Watcher {
            pending: Mutex::new(Vec::new()),
            changed: Condvar::new(),
            next_id: std::sync::atomic::AtomicU64::new(0),
        }));
        let spawned = std::thread::Builder::new()
            .name("cudajit-notices".into())
            .spawn(move || watch(watcher, &mut std::io::stderr()));
        if let Err(error) = spawned {
            tracing::debug!("cudajit: no notices of long operations ({error})");
        }
        watcher
    })
}

/// The watcher thread: sleeps until the earliest due operation, prints its line once
/// (without holding the lock: a blocked stderr must not block launches), forgets it.
fn watch(watcher: &Watcher, out: &mut dyn std::io::Write) {
    loop {
        let mut pending = lock(&watcher.pending);
        let now = Instant::now();
        let mut due = Vec::new();
        pending.retain(|p| {
            if p.due > now {
                return true;
            }
            due.push(format!(
                "cudajit: {} — still running after {:.1} s",
                p.line,
                p.delay.as_secs_f64()
            ));
            false
        });
        if due.is_empty() {
            // Sleep until the earliest is due, or a new one arrives; a poisoned lock only
            // means a panicking thread held it, the list is still whole.
            match pending.iter().map(|p| p.due).min() {
                Some(next) => {
                    let wait = next.saturating_duration_since(Instant::now());
                    drop(watcher.changed.wait_timeout(pending, wait));
                }
                None => drop(watcher.changed.wait(pending)),
            }
            continue;
        }
        drop(pending);
        for line in due {
            let _ = writeln!(out, "{line}");
        }
    }
}
