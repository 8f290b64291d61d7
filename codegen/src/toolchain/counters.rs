//! Process-global counters of compiler invocations, so callers (and tests)
//! can prove that a cache hit did not run libNVVM or nvJitLink.

use std::sync::atomic::{AtomicU64, Ordering};

static NVVM_COMPILES: AtomicU64 = AtomicU64::new(0);
static NVJITLINK_LINKS: AtomicU64 = AtomicU64::new(0);
static LIBRARIES_LOADED: AtomicU64 = AtomicU64::new(0);

/// A snapshot of the process-global invocation counters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct InvocationCounts {
    /// Calls of [`Nvvm::compile`](super::Nvvm::compile), failed ones included.
    pub nvvm_compiles: u64,
    /// Calls of [`NvJitLink::link`](super::NvJitLink::link), failed ones included.
    pub nvjitlink_links: u64,
    /// Successful `dlopen`s of a toolchain library for use.
    pub libraries_loaded: u64,
}

/// Reads the counters. They only grow; compare two snapshots.
pub fn invocation_counts() -> InvocationCounts {
    // Relaxed: each counter is independent and only needs to be monotonic.
    InvocationCounts {
        nvvm_compiles: NVVM_COMPILES.load(Ordering::Relaxed),
        nvjitlink_links: NVJITLINK_LINKS.load(Ordering::Relaxed),
        libraries_loaded: LIBRARIES_LOADED.load(Ordering::Relaxed),
    }
}

pub(crate) fn record_nvvm_compile() {
    NVVM_COMPILES.fetch_add(1, Ordering::Relaxed);
}

pub(crate) fn record_nvjitlink_link() {
    NVJITLINK_LINKS.fetch_add(1, Ordering::Relaxed);
}

pub(crate) fn record_library_loaded() {
    LIBRARIES_LOADED.fetch_add(1, Ordering::Relaxed);
}
