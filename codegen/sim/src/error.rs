//! What a simulated launch reports: every error names the kernel, and those raised by a
//! thread name its block, its thread and the source position of the operation.

use std::fmt;

/// Where in a launch something happened.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SimSite {
    /// The kernel's entry symbol.
    pub kernel: String,
    /// The function running (the kernel or a `#[device]` function).
    pub function: String,
    /// `file:line:column` of the operation (in the file of the function running).
    pub location: String,
    /// Where the function running was called from, innermost first, out to the kernel:
    /// (caller, `file:line:column` of the call). Empty in the kernel itself.
    pub callers: Vec<(String, String)>,
    /// `block_idx()` of the block.
    pub block: [u32; 3],
    /// `thread_idx()` of the thread.
    pub thread: [u32; 3],
    /// Which launch of a group ([`super::launch_group`]) it was, e.g. `rank 1`; `None` for
    /// a plain launch.
    pub launch: Option<String>,
}

impl fmt::Display for SimSite {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let [bx, by, bz] = self.block;
        let [tx, ty, tz] = self.thread;
        write!(f, "kernel `{}`, ", self.kernel)?;
        if let Some(launch) = &self.launch {
            write!(f, "{launch}, ")?;
        }
        write!(
            f,
            "block ({bx}, {by}, {bz}), thread ({tx}, {ty}, {tz}), at {}",
            self.location
        )?;
        if self.function != self.kernel {
            write!(f, " in `{}`", self.function)?;
        }
        for (caller, location) in &self.callers {
            write!(f, ", called from `{caller}` at {location}")?;
        }
        Ok(())
    }
}

/// Why a simulated launch failed. A launch stops at the first error of its lowest-numbered
/// failing block.
#[derive(Clone, PartialEq, Eq, thiserror::Error, cudajit_error_debug::ReadableDebug)]
#[non_exhaustive]
pub enum SimError {
    /// An index outside its slice or array (`x[i]` with `i >= x.len()`).
    #[error("{site}: index out of bounds: the len is {len} but the index is {index}")]
    OutOfBounds {
        site: Box<SimSite>,
        index: u64,
        len: u64,
    },
    /// A sub-slice `&x[start..end]` reversed or past the end of `x`.
    #[error("{site}: range out of bounds: the len is {len} but the range is {start}..{end}")]
    RangeOutOfBounds {
        site: Box<SimSite>,
        start: u64,
        end: u64,
        len: u64,
    },
    /// A failed `assert!` (or bounds check the front end emitted): the GPU would stop the
    /// kernel with `CUDA_ERROR_ASSERT`.
    #[error("{site}: {message}")]
    Assertion { site: Box<SimSite>, message: String },
    /// A `sync_threads()` that not every thread of the block reaches: some threads exited
    /// or wait at another barrier. On a GPU this hangs or corrupts silently.
    #[error("{site}: barrier divergence: {detail}")]
    BarrierDivergence { site: Box<SimSite>, detail: String },
    /// Two threads of a block accessed one shared-memory element with no `sync_threads()`
    /// between, at least one of them writing without an atomic.
    #[error("{site}: data race on shared memory: {detail}")]
    SharedMemoryRace { site: Box<SimSite>, detail: String },
    /// Two threads accessed one element of a writable slice with nothing ordering them
    /// (no barrier of their block, no `grid_sync()`, no fence and atomic between their
    /// blocks), at least one of them writing without an atomic. Found only when global
    /// races are tracked (`SimOptions::global_race_detection`, `CUDAJIT_SIM_RACES=global`).
    #[error("{site}: data race on global memory: {detail}")]
    GlobalMemoryRace { site: Box<SimSite>, detail: String },
    /// A warp shuffle or vote whose mask names threads that do not execute it, or that
    /// reads a lane that does not take part.
    #[error("{site}: warp synchronisation: {detail}")]
    Warp { site: Box<SimSite>, detail: String },
    /// An access outside any buffer, misaligned, or a store to a read-only buffer.
    #[error("{site}: invalid memory access: {detail}")]
    MemoryAccess { site: Box<SimSite>, detail: String },
    /// An `#[extern_device]` function failed in its host implementation, or has none.
    #[error("{site}: extern function: {detail}")]
    Extern { site: Box<SimSite>, detail: String },
    /// A thread ran for `milliseconds` without stopping: most likely a loop waiting on a flag
    /// that no thread sets, or that a thread of its own block sets (the simulator runs one
    /// thread of a block at a time, until it exits or waits at a barrier, so a spinning
    /// thread never lets that one run).
    #[error("{site}: the thread has run for {:.1} s without stopping (the simulator's watchdog): a loop waiting on a value no other thread writes while it spins? On the simulator a thread runs until it exits or reaches `sync_threads()` or a warp operation, so spinning on a flag set by a thread of the same block never ends; raise the limit with CUDAJIT_SIM_WATCHDOG_S (seconds, 0 = off) for a long legitimate loop", *milliseconds as f64 / 1e3)]
    Hang {
        site: Box<SimSite>,
        milliseconds: u64,
    },
    /// An integer division or remainder by zero (`/`, `%`, `div_euclid`, `rem_euclid`,
    /// `div_ceil`): Rust panics there; a GPU gives an unspecified value (PTX's all ones),
    /// so the simulator stops the kernel at the operation rather than compute it.
    #[error("{site}: {} (Rust panics here, a GPU gives an unspecified value): check the divisor first", division_message(*remainder))]
    DivisionByZero { site: Box<SimSite>, remainder: bool },
    /// An inline PTX instruction used against the PTX ISA's rules (a `cp.async` from
    /// shared memory, a warp-collective instruction some lanes of the warp do not run, ..):
    /// on a GPU undefined behaviour, a hang or a fault.
    #[error("{site}: inline PTX: {detail}")]
    Ptx { site: Box<SimSite>, detail: String },
    /// The kernel uses something the simulator cannot run.
    #[error("kernel `{kernel}`: {what} is not supported by the CPU simulator (in `{function}` at {location})")]
    Unsupported {
        kernel: String,
        function: String,
        location: String,
        what: String,
    },
    /// The launch itself is invalid: configuration or arguments.
    #[error("kernel `{kernel}`: {detail}")]
    Launch { kernel: String, detail: String },
}

impl SimError {
    /// Where it happened, for errors raised by a thread.
    pub fn site(&self) -> Option<&SimSite> {
        match self {
            SimError::OutOfBounds { site, .. }
            | SimError::RangeOutOfBounds { site, .. }
            | SimError::Assertion { site, .. }
            | SimError::BarrierDivergence { site, .. }
            | SimError::SharedMemoryRace { site, .. }
            | SimError::GlobalMemoryRace { site, .. }
            | SimError::Warp { site, .. }
            | SimError::MemoryAccess { site, .. }
            | SimError::Extern { site, .. }
            | SimError::Hang { site, .. }
            | SimError::DivisionByZero { site, .. }
            | SimError::Ptx { site, .. } => Some(site),
            SimError::Unsupported { .. } | SimError::Launch { .. } => None,
        }
    }

    /// The kernel's entry symbol.
    pub fn kernel(&self) -> &str {
        match self {
            SimError::Unsupported { kernel, .. } | SimError::Launch { kernel, .. } => kernel,
            other => other.site().map(|s| s.kernel.as_str()).unwrap_or("?"),
        }
    }
}

/// Rust's panic message for a division (or remainder) by zero.
fn division_message(remainder: bool) -> &'static str {
    if remainder {
        "attempt to calculate the remainder with a divisor of zero"
    } else {
        "attempt to divide by zero"
    }
}
