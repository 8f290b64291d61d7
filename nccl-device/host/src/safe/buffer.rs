//! Symmetric memory: one `ncclMemAlloc` allocation per local rank, registered as an
//! `NCCL_WIN_COLL_SYMMETRIC` window in one group.

use std::ffi::c_void;
use std::marker::PhantomData;
use std::sync::Arc;

use crate::error::{NcclError, Result};
use crate::result::check;
use crate::safe::communicator::{CommShared, Communicator};
use crate::sys::{ncclWindow_t, NCCL_WIN_COLL_SYMMETRIC, NCCL_WIN_REQUIRED_ALIGNMENT};

/// `len` elements of `T` on every local rank, in memory from `ncclMemAlloc`, registered
/// as a symmetric window (the same offsets are valid on every rank, so device code can
/// address a peer's copy through the window).
pub struct SymmetricBuffer<T> {
    comm: Arc<CommShared>,
    parts: Parts,
    len: usize,
    _elem: PhantomData<T>,
}

/// The raw allocations and windows, released together.
struct Parts {
    ptrs: Vec<*mut c_void>,
    windows: Vec<ncclWindow_t>,
    bytes: usize,
}

// SAFETY: the raw pointers are device addresses and NCCL window handles, not host
// memory; they are used only through the communicator's serialised calls.
unsafe impl Send for Parts {}
// SAFETY: as above; `&Parts` only exposes the addresses.
unsafe impl Sync for Parts {}

impl<T> std::fmt::Debug for SymmetricBuffer<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SymmetricBuffer")
            .field("len", &self.len)
            .field("bytes", &self.parts.bytes)
            .field("ptrs", &self.parts.ptrs)
            .finish_non_exhaustive()
    }
}

impl Communicator {
    /// Allocates `len` elements of `T` on every local rank and registers them as one
    /// symmetric window. The size is rounded up to [`NCCL_WIN_REQUIRED_ALIGNMENT`]
    /// (4096 bytes) and every allocation is checked to start on that alignment. A null
    /// window after a successful registration (NCCL 2.28 can fail silently) is an error.
    pub fn alloc_symmetric<T: Copy + 'static>(&self, len: usize) -> Result<SymmetricBuffer<T>> {
        let shared = &self.shared;
        let _op = shared.lock()?;
        let raw = len
            .checked_mul(std::mem::size_of::<T>())
            .ok_or_else(|| NcclError::InvalidArgument(format!("{len} elements overflow usize")))?;
        let bytes = raw.max(1).div_ceil(NCCL_WIN_REQUIRED_ALIGNMENT) * NCCL_WIN_REQUIRED_ALIGNMENT;
        let sys = shared.nccl.sys();
        // `parts` releases whatever exists if a later step fails (Drop below).
        let mut parts = PartsGuard {
            comm: shared,
            parts: Parts {
                ptrs: Vec::new(),
                windows: Vec::new(),
                bytes,
            },
        };
        for r in &shared.ranks {
            shared.bind(r)?;
            let mut ptr: *mut c_void = std::ptr::null_mut();
            // SAFETY: valid out-pointer; allocates on the bound device.
            let code = unsafe { (sys.mem_alloc)(&mut ptr, bytes) };
            // SAFETY: live communicator for the last-error text.
            unsafe { check(sys, "ncclMemAlloc", code, r.comm) }?;
            parts.parts.ptrs.push(ptr);
            if !(ptr as usize).is_multiple_of(NCCL_WIN_REQUIRED_ALIGNMENT) {
                return Err(NcclError::InvalidArgument(format!(
                    "ncclMemAlloc returned {ptr:p}, not {NCCL_WIN_REQUIRED_ALIGNMENT}-byte aligned"
                )));
            }
        }
        let mut windows: Vec<ncclWindow_t> = vec![std::ptr::null_mut(); shared.ranks.len()];
        let out = windows.as_mut_ptr();
        let ptrs = parts.parts.ptrs.clone();
        let registered = shared.grouped("ncclCommWindowRegister", |i, r| {
            // SAFETY: `ptrs[i]` is a `bytes`-long ncclMemAlloc allocation on this rank's
            // device; `out.add(i)` is inside `windows`, which outlives the group.
            unsafe {
                (sys.comm_window_register)(
                    r.comm,
                    ptrs[i],
                    bytes,
                    out.add(i),
                    NCCL_WIN_COLL_SYMMETRIC,
                )
            }
        });
        // Keep whatever NCCL produced, so the guard deregisters it on failure.
        parts.parts.windows = windows.clone();
        registered?;
        if let Some(i) = windows.iter().position(|w| w.is_null()) {
            return Err(NcclError::WindowNotRegistered {
                rank: shared.ranks[i].rank,
                version: shared.nccl.version(),
            });
        }
        Ok(SymmetricBuffer {
            comm: shared.clone(),
            parts: parts.into_inner(),
            len,
            _elem: PhantomData,
        })
    }
}

impl<T> SymmetricBuffer<T> {
    /// Elements per rank.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the buffer has no elements.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Bytes allocated per rank (rounded up to 4096).
    pub fn allocated_bytes(&self) -> usize {
        self.parts.bytes
    }

    /// The device address of local rank `i`'s allocation.
    pub fn device_ptr(&self, i: usize) -> Option<u64> {
        self.parts.ptrs.get(i).map(|p| *p as u64)
    }

    /// Local rank `i`'s `ncclWindow_t` (a device-side pointer kernels take by value).
    pub fn window(&self, i: usize) -> Option<*mut c_void> {
        self.parts.windows.get(i).copied()
    }

    /// Copies `data` (at most [`len`](Self::len) elements) to local rank `i`'s memory.
    pub fn copy_from_host(&self, i: usize, data: &[T]) -> Result<()> {
        let (r, ptr) = self.rank_and_ptr(i, data.len())?;
        self.comm.bind(r)?;
        // SAFETY: `ptr` is a device allocation of at least `len * size_of::<T>()` bytes
        // (checked by rank_and_ptr); `data` is host memory of the same length.
        unsafe { cudarc::driver::result::memcpy_htod_sync(ptr, data) }
            .map_err(|e| NcclError::cuda("copy to the symmetric buffer", e))
    }

    /// Copies local rank `i`'s first `out.len()` elements into `out`.
    pub fn copy_to_host(&self, i: usize, out: &mut [T]) -> Result<()> {
        let (r, ptr) = self.rank_and_ptr(i, out.len())?;
        self.comm.bind(r)?;
        // SAFETY: as in `copy_from_host`, in the other direction.
        unsafe { cudarc::driver::result::memcpy_dtoh_sync(out, ptr) }
            .map_err(|e| NcclError::cuda("copy from the symmetric buffer", e))
    }

    /// Whether the buffer was allocated on `comm`.
    pub(crate) fn belongs_to(&self, comm: &Arc<CommShared>) -> bool {
        Arc::ptr_eq(&self.comm, comm)
    }

    fn rank_and_ptr(&self, i: usize, n: usize) -> Result<(&crate::safe::LocalRank, u64)> {
        let (Some(r), Some(ptr)) = (self.comm.ranks.get(i), self.device_ptr(i)) else {
            return Err(NcclError::InvalidArgument(format!("no local rank {i}")));
        };
        if n > self.len {
            return Err(NcclError::InvalidArgument(format!(
                "{n} elements do not fit a buffer of {}",
                self.len
            )));
        }
        Ok((r, ptr))
    }

    /// Deregisters the windows and frees the memory now, returning any error. While a
    /// dev comm of the communicator is alive this is deferred like a drop.
    pub fn close(mut self) -> Result<()> {
        let parts = std::mem::replace(&mut self.parts, Parts::empty());
        release_or_defer(&self.comm, parts)
    }
}

impl<T> Drop for SymmetricBuffer<T> {
    fn drop(&mut self) {
        let parts = std::mem::replace(&mut self.parts, Parts::empty());
        if let Err(e) = release_or_defer(&self.comm, parts) {
            tracing::warn!(error = %e, "releasing a symmetric buffer failed");
        }
    }
}

impl Parts {
    fn empty() -> Self {
        Parts {
            ptrs: Vec::new(),
            windows: Vec::new(),
            bytes: 0,
        }
    }

    /// Deregisters the windows (one group), then frees the memory.
    fn release(self, comm: &CommShared) -> Result<()> {
        let sys = comm.nccl.sys();
        let mut first = Ok(());
        if !comm.is_aborted() && self.windows.iter().any(|w| !w.is_null()) {
            let windows = &self.windows;
            first = comm.grouped("ncclCommWindowDeregister", |i, r| match windows.get(i) {
                // SAFETY: a window registered on this communicator, deregistered once.
                Some(w) if !w.is_null() => unsafe { (sys.comm_window_deregister)(r.comm, *w) },
                _ => crate::sys::ncclSuccess,
            });
        }
        for (i, ptr) in self.ptrs.into_iter().enumerate() {
            if let Some(r) = comm.ranks.get(i) {
                let _ = comm.bind(r);
            }
            // SAFETY: an ncclMemAlloc allocation, freed once, its window gone.
            let code = unsafe { (sys.mem_free)(ptr) };
            // SAFETY: null communicator: the global last error.
            first = first.and(unsafe { check(sys, "ncclMemFree", code, std::ptr::null_mut()) });
        }
        first
    }
}

/// Releases `parts` now, or after the last dev comm when one is alive (NCCL's order).
fn release_or_defer(comm: &Arc<CommShared>, parts: Parts) -> Result<()> {
    if parts.ptrs.is_empty() {
        return Ok(());
    }
    {
        let mut deferred = comm.deferred.lock().unwrap_or_else(|p| p.into_inner());
        if deferred.live_dev_comms > 0 {
            deferred.releases.push(Box::new(move |c: &CommShared| {
                if let Err(e) = parts.release(c) {
                    tracing::warn!(error = %e, "deferred symmetric buffer release failed");
                }
            }));
            return Ok(());
        }
    }
    let _op = comm.op_lock_for_teardown();
    parts.release(comm)
}

/// Releases a partly built buffer when allocation or registration fails.
struct PartsGuard<'c> {
    comm: &'c CommShared,
    parts: Parts,
}

impl PartsGuard<'_> {
    fn into_inner(mut self) -> Parts {
        std::mem::replace(&mut self.parts, Parts::empty())
    }
}

impl Drop for PartsGuard<'_> {
    fn drop(&mut self) {
        let parts = std::mem::replace(&mut self.parts, Parts::empty());
        if let Err(e) = parts.release(self.comm) {
            tracing::warn!(error = %e, "cleaning up a failed symmetric allocation");
        }
    }
}
