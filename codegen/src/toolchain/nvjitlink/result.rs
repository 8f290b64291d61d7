//! nvJitLink calls with status codes turned into `Result<_, CallError>`.
//!
//! # Safety (every function here)
//! `sys` must have been resolved from a real nvJitLink, and a `handle`
//! argument must be live, created by that library, and not used by another
//! thread during the call.

use std::ffi::{c_char, c_uint, CStr};

use super::sys::{
    nvJitLinkHandle, nvJitLinkInputType, nvJitLinkResult, NvJitLinkSys, NVJITLINK_SUCCESS,
};
use crate::toolchain::discover::Component;
use crate::toolchain::error::CallError;
use crate::toolchain::ffi::c_text;

/// The `nvJitLinkResult` enumerator name of `code`, from nvJitLink.h.
pub fn status_name(code: nvJitLinkResult) -> &'static str {
    match code {
        0 => "NVJITLINK_SUCCESS",
        1 => "NVJITLINK_ERROR_UNRECOGNIZED_OPTION",
        2 => "NVJITLINK_ERROR_MISSING_ARCH",
        3 => "NVJITLINK_ERROR_INVALID_INPUT",
        4 => "NVJITLINK_ERROR_PTX_COMPILE",
        5 => "NVJITLINK_ERROR_NVVM_COMPILE",
        6 => "NVJITLINK_ERROR_INTERNAL",
        7 => "NVJITLINK_ERROR_THREADPOOL",
        8 => "NVJITLINK_ERROR_UNRECOGNIZED_INPUT",
        9 => "NVJITLINK_ERROR_FINALIZE",
        10 => "NVJITLINK_ERROR_NULL_INPUT",
        11 => "NVJITLINK_ERROR_INCOMPATIBLE_OPTIONS",
        12 => "NVJITLINK_ERROR_INCORRECT_INPUT_TYPE",
        13 => "NVJITLINK_ERROR_ARCH_MISMATCH",
        14 => "NVJITLINK_ERROR_OUTDATED_LIBRARY",
        15 => "NVJITLINK_ERROR_MISSING_FATBIN",
        16 => "NVJITLINK_ERROR_UNRECOGNIZED_ARCH",
        17 => "NVJITLINK_ERROR_UNSUPPORTED_ARCH",
        18 => "NVJITLINK_ERROR_LTO_NOT_ENABLED",
        _ => "NVJITLINK_ERROR_UNKNOWN",
    }
}

/// `Ok(())` for `NVJITLINK_SUCCESS`, else a `CallError` naming `function`.
pub fn check(function: &'static str, code: nvJitLinkResult) -> Result<(), CallError> {
    if code == NVJITLINK_SUCCESS {
        return Ok(());
    }
    Err(CallError {
        component: Component::NvJitLink,
        function,
        code,
        status: status_name(code),
    })
}

/// `nvJitLinkVersion`, or `None` when the library predates it.
///
/// # Safety
/// See the module docs.
pub unsafe fn version(sys: &NvJitLinkSys) -> Option<Result<(u32, u32), CallError>> {
    let f = sys.version?;
    let (mut major, mut minor): (c_uint, c_uint) = (0, 0);
    // SAFETY: two valid out-pointers.
    let code = unsafe { f(&mut major, &mut minor) };
    Some(check("nvJitLinkVersion", code).map(|()| (major, minor)))
}

/// `nvJitLinkCreate`. Returns the status *and* the handle: on a bad option
/// nvJitLink may still hand back a handle whose error log explains it, and
/// the caller owns (must destroy) any non-null handle either way.
///
/// # Safety
/// See the module docs; `options` must hold live NUL-terminated strings.
pub unsafe fn create(
    sys: &NvJitLinkSys,
    options: &[*const c_char],
) -> (Result<(), CallError>, nvJitLinkHandle) {
    let mut handle: nvJitLinkHandle = std::ptr::null_mut();
    let n = u32::try_from(options.len()).unwrap_or(u32::MAX);
    // SAFETY: valid out-pointer; `n` live strings per the caller.
    let code = unsafe { (sys.create)(&mut handle, n, options.as_ptr()) };
    (check("nvJitLinkCreate", code), handle)
}

/// `nvJitLinkDestroy`; nulls `handle`.
///
/// # Safety
/// See the module docs; `handle` must not be used afterwards.
pub unsafe fn destroy(sys: &NvJitLinkSys, handle: &mut nvJitLinkHandle) -> Result<(), CallError> {
    // SAFETY: live handle per the caller.
    check("nvJitLinkDestroy", unsafe { (sys.destroy)(handle) })
}

/// `nvJitLinkAddData`.
///
/// # Safety
/// See the module docs.
pub unsafe fn add_data(
    sys: &NvJitLinkSys,
    handle: nvJitLinkHandle,
    kind: nvJitLinkInputType,
    bytes: &[u8],
    name: &CStr,
) -> Result<(), CallError> {
    // SAFETY: data/size describe `bytes` (copied by nvJitLink before it
    // returns); `name` is NUL-terminated and outlives the call.
    let code = unsafe {
        (sys.add_data)(
            handle,
            kind,
            bytes.as_ptr().cast(),
            bytes.len(),
            name.as_ptr(),
        )
    };
    check("nvJitLinkAddData", code)
}

/// `nvJitLinkComplete`.
///
/// # Safety
/// See the module docs.
pub unsafe fn complete(sys: &NvJitLinkSys, handle: nvJitLinkHandle) -> Result<(), CallError> {
    // SAFETY: live handle.
    check("nvJitLinkComplete", unsafe { (sys.complete)(handle) })
}

/// `nvJitLinkGetLinkedCubinSize` + `nvJitLinkGetLinkedCubin`.
///
/// # Safety
/// See the module docs.
pub unsafe fn linked_cubin(
    sys: &NvJitLinkSys,
    handle: nvJitLinkHandle,
) -> Result<Vec<u8>, CallError> {
    let mut size = 0usize;
    // SAFETY: valid out-pointer.
    check("nvJitLinkGetLinkedCubinSize", unsafe {
        (sys.get_linked_cubin_size)(handle, &mut size)
    })?;
    let mut buf = vec![0u8; size];
    // SAFETY: `buf` has exactly the size nvJitLink asked for.
    check("nvJitLinkGetLinkedCubin", unsafe {
        (sys.get_linked_cubin)(handle, buf.as_mut_ptr().cast())
    })?;
    Ok(buf)
}

/// `nvJitLinkGetLinkedPtxSize` + `nvJitLinkGetLinkedPtx` (needs `-lto`).
///
/// # Safety
/// See the module docs.
pub unsafe fn linked_ptx(sys: &NvJitLinkSys, handle: nvJitLinkHandle) -> Result<String, CallError> {
    let functions = ("nvJitLinkGetLinkedPtxSize", "nvJitLinkGetLinkedPtx");
    // SAFETY: forwarded caller contract.
    unsafe {
        text(
            handle,
            sys.get_linked_ptx_size,
            sys.get_linked_ptx,
            functions,
        )
    }
}

/// `nvJitLinkGetErrorLogSize` + `nvJitLinkGetErrorLog`.
///
/// # Safety
/// See the module docs.
pub unsafe fn error_log(sys: &NvJitLinkSys, handle: nvJitLinkHandle) -> Result<String, CallError> {
    let functions = ("nvJitLinkGetErrorLogSize", "nvJitLinkGetErrorLog");
    // SAFETY: forwarded caller contract.
    unsafe { text(handle, sys.get_error_log_size, sys.get_error_log, functions) }
}

/// `nvJitLinkGetInfoLogSize` + `nvJitLinkGetInfoLog`.
///
/// # Safety
/// See the module docs.
pub unsafe fn info_log(sys: &NvJitLinkSys, handle: nvJitLinkHandle) -> Result<String, CallError> {
    let functions = ("nvJitLinkGetInfoLogSize", "nvJitLinkGetInfoLog");
    // SAFETY: forwarded caller contract.
    unsafe { text(handle, sys.get_info_log_size, sys.get_info_log, functions) }
}

/// The size-then-fill protocol shared by the text getters.
///
/// # Safety
/// `size_fn`/`fill_fn` must be a matching getter pair of a real nvJitLink
/// and `handle` live.
unsafe fn text(
    handle: nvJitLinkHandle,
    size_fn: unsafe extern "C" fn(nvJitLinkHandle, *mut usize) -> nvJitLinkResult,
    fill_fn: unsafe extern "C" fn(nvJitLinkHandle, *mut c_char) -> nvJitLinkResult,
    (size_name, fill_name): (&'static str, &'static str),
) -> Result<String, CallError> {
    let mut size = 0usize;
    // SAFETY: valid out-pointer.
    check(size_name, unsafe { size_fn(handle, &mut size) })?;
    // One spare byte: whether `size` counts the terminator is not documented
    // consistently across getters.
    let mut buf = vec![0u8; size + 1];
    // SAFETY: `buf` is larger than the size nvJitLink reported.
    check(fill_name, unsafe {
        fill_fn(handle, buf.as_mut_ptr().cast())
    })?;
    Ok(c_text(&buf))
}
