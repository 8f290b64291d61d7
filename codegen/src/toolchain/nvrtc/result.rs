//! NVRTC calls with status codes turned into `Result<_, CallError>`.
//!
//! # Safety (every function here)
//! `sys` must have been resolved from a real NVRTC.

use std::ffi::{c_int, CStr};

use super::sys::{nvrtcResult, NvrtcSys, NVRTC_SUCCESS};
use crate::toolchain::discover::Component;
use crate::toolchain::error::CallError;

/// The `nvrtcResult` enumerator name of `code`, from nvrtc.h.
pub fn status_name(code: nvrtcResult) -> &'static str {
    match code {
        0 => "NVRTC_SUCCESS",
        1 => "NVRTC_ERROR_OUT_OF_MEMORY",
        2 => "NVRTC_ERROR_PROGRAM_CREATION_FAILURE",
        3 => "NVRTC_ERROR_INVALID_INPUT",
        4 => "NVRTC_ERROR_INVALID_PROGRAM",
        5 => "NVRTC_ERROR_INVALID_OPTION",
        6 => "NVRTC_ERROR_COMPILATION",
        7 => "NVRTC_ERROR_BUILTIN_OPERATION_FAILURE",
        8 => "NVRTC_ERROR_NO_NAME_EXPRESSIONS_AFTER_COMPILATION",
        9 => "NVRTC_ERROR_NO_LOWERED_NAMES_BEFORE_COMPILATION",
        10 => "NVRTC_ERROR_NAME_EXPRESSION_NOT_VALID",
        11 => "NVRTC_ERROR_INTERNAL_ERROR",
        12 => "NVRTC_ERROR_TIME_FILE_WRITE_FAILED",
        13 => "NVRTC_ERROR_NO_PCH_CREATE_ATTEMPTED",
        14 => "NVRTC_ERROR_PCH_CREATE_HEAP_EXHAUSTED",
        15 => "NVRTC_ERROR_PCH_CREATE",
        16 => "NVRTC_ERROR_CANCELLED",
        17 => "NVRTC_ERROR_TIME_TRACE_FILE_WRITE_FAILED",
        _ => "NVRTC_ERROR_UNKNOWN",
    }
}

/// `Ok(())` for `NVRTC_SUCCESS`, else a `CallError` naming `function`.
pub fn check(function: &'static str, code: nvrtcResult) -> Result<(), CallError> {
    if code == NVRTC_SUCCESS {
        return Ok(());
    }
    Err(CallError {
        component: Component::Nvrtc,
        function,
        code,
        status: status_name(code),
    })
}

/// `nvrtcVersion`.
///
/// # Safety
/// See the module docs.
pub unsafe fn version(sys: &NvrtcSys) -> Result<(i32, i32), CallError> {
    let (mut major, mut minor): (c_int, c_int) = (0, 0);
    // SAFETY: two valid out-pointers.
    check("nvrtcVersion", unsafe {
        (sys.version)(&mut major, &mut minor)
    })?;
    Ok((major, minor))
}

/// `nvrtcGetErrorString(code)` as an owned string.
///
/// # Safety
/// See the module docs.
pub unsafe fn error_string(sys: &NvrtcSys, code: nvrtcResult) -> String {
    // SAFETY: any code is accepted; the result is a static string or NULL.
    let p = unsafe { (sys.get_error_string)(code) };
    if p.is_null() {
        return status_name(code).to_owned();
    }
    // SAFETY: non-NULL results point at a static NUL-terminated string.
    unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
}
