//! Raw NCCL: the function table resolved from a dynamically loaded `libnccl.so.2`,
//! the release-independent C types, and the generated per-release struct layouts.
//!
//! The library is never unloaded: NCCL starts proxy and bootstrap threads and registers
//! `atexit` handlers, and `dlclose` while any of those exist crashes later. Keeping it
//! mapped makes every resolved function pointer valid for the rest of the process,
//! which lets the table be plain `Copy` data.

pub mod layout;
pub mod types;

use std::ffi::{c_char, c_int, c_void};
use std::mem::ManuallyDrop;
use std::path::{Path, PathBuf};

pub use types::*;

use crate::error::{NcclError, Result};

type CommFn = unsafe extern "C" fn(ncclComm_t) -> ncclResult_t;
type CommIntFn = unsafe extern "C" fn(ncclComm_t, *mut c_int) -> ncclResult_t;
/// `(const void* send, void* recv, size_t count, ncclDataType_t, ncclRedOp_t, ncclComm_t,
/// cudaStream_t)`: `ncclAllReduce` and `ncclReduceScatter`.
type ReduceFn = unsafe extern "C" fn(
    *const c_void,
    *mut c_void,
    usize,
    ncclDataType_t,
    ncclRedOp_t,
    ncclComm_t,
    cudaStream_t,
) -> ncclResult_t;

/// Every NCCL host function this crate calls. Signatures are transcribed from `nccl.h`
/// and `nccl_device/core.h` (2.28.3 to 2.32.3 declare them identically); versioned
/// structs are passed as `void*` to a [`layout`] buffer of the loaded release.
#[derive(Clone, Copy, Debug)]
pub struct NcclSys {
    /// `ncclGetVersion(int*)`
    pub get_version: unsafe extern "C" fn(*mut c_int) -> ncclResult_t,
    /// `ncclGetErrorString(ncclResult_t)`
    pub get_error_string: unsafe extern "C" fn(ncclResult_t) -> *const c_char,
    /// `ncclGetLastError(ncclComm_t)` (the communicator may be null)
    pub get_last_error: unsafe extern "C" fn(ncclComm_t) -> *const c_char,
    /// `ncclGetUniqueId(ncclUniqueId*)`
    pub get_unique_id: unsafe extern "C" fn(*mut ncclUniqueId) -> ncclResult_t,
    /// `ncclCommInitRankConfig(ncclComm_t*, int nranks, ncclUniqueId, int rank, ncclConfig_t*)`
    pub comm_init_rank_config: unsafe extern "C" fn(
        *mut ncclComm_t,
        c_int,
        ncclUniqueId,
        c_int,
        *mut c_void,
    ) -> ncclResult_t,
    /// `ncclCommInitAll(ncclComm_t*, int ndev, const int* devlist)`
    pub comm_init_all: unsafe extern "C" fn(*mut ncclComm_t, c_int, *const c_int) -> ncclResult_t,
    /// `ncclCommFinalize(ncclComm_t)`
    pub comm_finalize: CommFn,
    /// `ncclCommDestroy(ncclComm_t)`
    pub comm_destroy: CommFn,
    /// `ncclCommAbort(ncclComm_t)`
    pub comm_abort: CommFn,
    /// `ncclCommGetAsyncError(ncclComm_t, ncclResult_t*)`
    pub comm_get_async_error: unsafe extern "C" fn(ncclComm_t, *mut ncclResult_t) -> ncclResult_t,
    /// `ncclCommCount(ncclComm_t, int*)`
    pub comm_count: CommIntFn,
    /// `ncclCommCuDevice(ncclComm_t, int*)`
    pub comm_cu_device: CommIntFn,
    /// `ncclCommUserRank(ncclComm_t, int*)`
    pub comm_user_rank: CommIntFn,
    /// `ncclGroupStart()`
    pub group_start: unsafe extern "C" fn() -> ncclResult_t,
    /// `ncclGroupEnd()`
    pub group_end: unsafe extern "C" fn() -> ncclResult_t,
    /// `ncclAllReduce(const void* send, void* recv, size_t count, ncclDataType_t,
    /// ncclRedOp_t, ncclComm_t, cudaStream_t)`
    pub all_reduce: ReduceFn,
    /// `ncclAllGather(const void* send, void* recv, size_t sendcount, ncclDataType_t,
    /// ncclComm_t, cudaStream_t)`
    pub all_gather: unsafe extern "C" fn(
        *const c_void,
        *mut c_void,
        usize,
        ncclDataType_t,
        ncclComm_t,
        cudaStream_t,
    ) -> ncclResult_t,
    /// `ncclReduceScatter(const void* send, void* recv, size_t recvcount, ncclDataType_t,
    /// ncclRedOp_t, ncclComm_t, cudaStream_t)`
    pub reduce_scatter: ReduceFn,
    /// `ncclSend(const void* send, size_t count, ncclDataType_t, int peer, ncclComm_t,
    /// cudaStream_t)`
    pub send: unsafe extern "C" fn(
        *const c_void,
        usize,
        ncclDataType_t,
        c_int,
        ncclComm_t,
        cudaStream_t,
    ) -> ncclResult_t,
    /// `ncclRecv(void* recv, size_t count, ncclDataType_t, int peer, ncclComm_t,
    /// cudaStream_t)`
    pub recv: unsafe extern "C" fn(
        *mut c_void,
        usize,
        ncclDataType_t,
        c_int,
        ncclComm_t,
        cudaStream_t,
    ) -> ncclResult_t,
    /// `ncclMemAlloc(void**, size_t)`
    pub mem_alloc: unsafe extern "C" fn(*mut *mut c_void, usize) -> ncclResult_t,
    /// `ncclMemFree(void*)`
    pub mem_free: unsafe extern "C" fn(*mut c_void) -> ncclResult_t,
    /// `ncclCommWindowRegister(ncclComm_t, void*, size_t, ncclWindow_t*, int winFlags)`
    pub comm_window_register: unsafe extern "C" fn(
        ncclComm_t,
        *mut c_void,
        usize,
        *mut ncclWindow_t,
        c_int,
    ) -> ncclResult_t,
    /// `ncclCommWindowDeregister(ncclComm_t, ncclWindow_t)`
    pub comm_window_deregister: unsafe extern "C" fn(ncclComm_t, ncclWindow_t) -> ncclResult_t,
    /// `ncclDevCommCreate(ncclComm_t, const ncclDevCommRequirements*, ncclDevComm*)`
    pub dev_comm_create:
        unsafe extern "C" fn(ncclComm_t, *const c_void, *mut c_void) -> ncclResult_t,
    /// `ncclDevCommDestroy(ncclComm_t, const ncclDevComm*)`
    pub dev_comm_destroy: unsafe extern "C" fn(ncclComm_t, *const c_void) -> ncclResult_t,
    /// `ncclCommQueryProperties(ncclComm_t, ncclCommProperties*)`: 2.29 and newer.
    pub comm_query_properties:
        Option<unsafe extern "C" fn(ncclComm_t, *mut c_void) -> ncclResult_t>,
}

/// An opened `libnccl.so.2` that is never closed (module docs).
pub(crate) struct DynLib {
    lib: ManuallyDrop<libloading::Library>,
    path: PathBuf,
}

impl DynLib {
    /// `dlopen`s `path` (a file or a bare soname).
    pub(crate) fn open(path: &Path) -> Result<Self> {
        // SAFETY: loading runs NCCL's initialisers, which have no preconditions on the
        // caller; nothing else is executed here.
        let lib = unsafe { libloading::Library::new(path) }.map_err(|e| NcclError::Load {
            path: path.to_path_buf(),
            message: e.to_string(),
        })?;
        Ok(DynLib {
            lib: ManuallyDrop::new(lib),
            path: path.to_path_buf(),
        })
    }

    /// The symbol `name` as `T`, if exported.
    ///
    /// # Safety
    /// `T` must be the `extern "C"` function pointer type of the symbol's C declaration.
    unsafe fn optional<T: Copy>(&self, name: &str) -> Option<T> {
        // SAFETY: `T` is the symbol's type (caller); the copied-out pointer outlives the
        // `Symbol` borrow because the library is never unloaded.
        let sym = unsafe { self.lib.get::<T>(name.as_bytes()) }.ok()?;
        Some(*sym)
    }

    /// Like [`DynLib::optional`], a missing symbol being an error.
    ///
    /// # Safety
    /// As for [`DynLib::optional`].
    unsafe fn required<T: Copy>(&self, name: &'static str) -> Result<T> {
        // SAFETY: forwarded caller contract.
        unsafe { self.optional(name) }.ok_or_else(|| NcclError::MissingSymbol {
            path: self.path.clone(),
            symbol: name,
        })
    }
}

impl NcclSys {
    /// Resolves every entry point of `lib`.
    pub(crate) fn resolve(lib: &DynLib) -> Result<Self> {
        macro_rules! sym {
            ($name:literal) => {
                // SAFETY: the field's type is transcribed from the symbol's declaration in
                // nccl.h / nccl_device/core.h; versioned structs travel as `void*`.
                unsafe { lib.required($name) }?
            };
        }
        Ok(NcclSys {
            get_version: sym!("ncclGetVersion"),
            get_error_string: sym!("ncclGetErrorString"),
            get_last_error: sym!("ncclGetLastError"),
            get_unique_id: sym!("ncclGetUniqueId"),
            comm_init_rank_config: sym!("ncclCommInitRankConfig"),
            comm_init_all: sym!("ncclCommInitAll"),
            comm_finalize: sym!("ncclCommFinalize"),
            comm_destroy: sym!("ncclCommDestroy"),
            comm_abort: sym!("ncclCommAbort"),
            comm_get_async_error: sym!("ncclCommGetAsyncError"),
            comm_count: sym!("ncclCommCount"),
            comm_cu_device: sym!("ncclCommCuDevice"),
            comm_user_rank: sym!("ncclCommUserRank"),
            group_start: sym!("ncclGroupStart"),
            group_end: sym!("ncclGroupEnd"),
            all_reduce: sym!("ncclAllReduce"),
            all_gather: sym!("ncclAllGather"),
            reduce_scatter: sym!("ncclReduceScatter"),
            send: sym!("ncclSend"),
            recv: sym!("ncclRecv"),
            mem_alloc: sym!("ncclMemAlloc"),
            mem_free: sym!("ncclMemFree"),
            comm_window_register: sym!("ncclCommWindowRegister"),
            comm_window_deregister: sym!("ncclCommWindowDeregister"),
            dev_comm_create: sym!("ncclDevCommCreate"),
            dev_comm_destroy: sym!("ncclDevCommDestroy"),
            // SAFETY: as in `sym!`.
            comm_query_properties: unsafe { lib.optional("ncclCommQueryProperties") },
        })
    }
}
