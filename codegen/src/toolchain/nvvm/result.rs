//! libNVVM calls with status codes turned into `Result<_, CallError>`.
//!
//! # Safety (every function here)
//! `sys` must have been resolved from a real libNVVM (so each pointer has
//! the type its field claims), and a `prog` argument must be a live program
//! created by that library and not used by another thread during the call.

use std::ffi::{c_char, c_int, CStr};

use super::sys::{nvvmProgram, nvvmResult, NvvmSys, NVVM_SUCCESS};
use crate::toolchain::discover::Component;
use crate::toolchain::error::CallError;
use crate::toolchain::ffi::c_text;

/// The `nvvmResult` enumerator name of `code`, from nvvm.h.
pub fn status_name(code: nvvmResult) -> &'static str {
    match code {
        0 => "NVVM_SUCCESS",
        1 => "NVVM_ERROR_OUT_OF_MEMORY",
        2 => "NVVM_ERROR_PROGRAM_CREATION_FAILURE",
        3 => "NVVM_ERROR_IR_VERSION_MISMATCH",
        4 => "NVVM_ERROR_INVALID_INPUT",
        5 => "NVVM_ERROR_INVALID_PROGRAM",
        6 => "NVVM_ERROR_INVALID_IR",
        7 => "NVVM_ERROR_INVALID_OPTION",
        8 => "NVVM_ERROR_NO_MODULE_IN_PROGRAM",
        9 => "NVVM_ERROR_COMPILATION",
        10 => "NVVM_ERROR_CANCELLED",
        _ => "NVVM_ERROR_UNKNOWN",
    }
}

/// `Ok(())` for `NVVM_SUCCESS`, else a `CallError` naming `function`.
pub fn check(function: &'static str, code: nvvmResult) -> Result<(), CallError> {
    if code == NVVM_SUCCESS {
        return Ok(());
    }
    Err(CallError {
        component: Component::Nvvm,
        function,
        code,
        status: status_name(code),
    })
}

/// `nvvmVersion`.
///
/// # Safety
/// See the module docs.
pub unsafe fn version(sys: &NvvmSys) -> Result<(i32, i32), CallError> {
    let (mut major, mut minor): (c_int, c_int) = (0, 0);
    // SAFETY: two valid out-pointers; `sys` is valid per the caller.
    check("nvvmVersion", unsafe {
        (sys.version)(&mut major, &mut minor)
    })?;
    Ok((major, minor))
}

/// `nvvmIRVersion`: (IR major, IR minor, debug-info major, debug-info minor).
///
/// # Safety
/// See the module docs.
pub unsafe fn ir_version(sys: &NvvmSys) -> Result<(i32, i32, i32, i32), CallError> {
    let mut v: [c_int; 4] = [0; 4];
    let [a, b, c, d] = &mut v;
    // SAFETY: four valid, distinct out-pointers.
    check("nvvmIRVersion", unsafe { (sys.ir_version)(a, b, c, d) })?;
    Ok((v[0], v[1], v[2], v[3]))
}

/// `nvvmCreateProgram`.
///
/// # Safety
/// See the module docs. The returned program must be destroyed exactly once.
pub unsafe fn create_program(sys: &NvvmSys) -> Result<nvvmProgram, CallError> {
    let mut prog: nvvmProgram = std::ptr::null_mut();
    // SAFETY: valid out-pointer.
    check("nvvmCreateProgram", unsafe {
        (sys.create_program)(&mut prog)
    })?;
    Ok(prog)
}

/// `nvvmDestroyProgram`; nulls `prog`.
///
/// # Safety
/// See the module docs; `prog` must not be used afterwards.
pub unsafe fn destroy_program(sys: &NvvmSys, prog: &mut nvvmProgram) -> Result<(), CallError> {
    // SAFETY: `prog` points at a live program per the caller.
    check("nvvmDestroyProgram", unsafe { (sys.destroy_program)(prog) })
}

/// `nvvmAddModuleToProgram`, or `nvvmLazyAddModuleToProgram` when `lazy`
/// (lazy modules only contribute the functions the others reference, which
/// is how libdevice is meant to be added).
///
/// # Safety
/// See the module docs.
pub unsafe fn add_module(
    sys: &NvvmSys,
    prog: nvvmProgram,
    bytes: &[u8],
    name: &CStr,
    lazy: bool,
) -> Result<(), CallError> {
    let (f, function) = if lazy {
        (sys.lazy_add_module_to_program, "nvvmLazyAddModuleToProgram")
    } else {
        (sys.add_module_to_program, "nvvmAddModuleToProgram")
    };
    // SAFETY: buffer and size describe `bytes` (libNVVM copies it before
    // returning); `name` is NUL-terminated and outlives the call.
    check(function, unsafe {
        f(prog, bytes.as_ptr().cast(), bytes.len(), name.as_ptr())
    })
}

/// `nvvmCompileProgram` (`verify == false`) or `nvvmVerifyProgram`.
///
/// # Safety
/// See the module docs; every pointer in `options` must be a live
/// NUL-terminated string.
pub unsafe fn compile_or_verify(
    sys: &NvvmSys,
    prog: nvvmProgram,
    options: &[*const c_char],
    verify: bool,
) -> Result<(), CallError> {
    let (f, function) = if verify {
        (sys.verify_program, "nvvmVerifyProgram")
    } else {
        (sys.compile_program, "nvvmCompileProgram")
    };
    let n = c_int::try_from(options.len()).unwrap_or(c_int::MAX);
    // SAFETY: `options` holds `n` valid C strings per the caller; libNVVM
    // reads but never writes the array despite its `const char **` type.
    check(function, unsafe { f(prog, n, options.as_ptr().cast_mut()) })
}

/// `nvvmGetCompiledResultSize` + `nvvmGetCompiledResult`, exactly the bytes
/// libNVVM reports (a PTX result includes its terminating NUL).
///
/// # Safety
/// See the module docs.
pub unsafe fn compiled_result(sys: &NvvmSys, prog: nvvmProgram) -> Result<Vec<u8>, CallError> {
    let mut size = 0usize;
    // SAFETY: valid out-pointer.
    check("nvvmGetCompiledResultSize", unsafe {
        (sys.get_compiled_result_size)(prog, &mut size)
    })?;
    let mut buf = vec![0u8; size];
    // SAFETY: `buf` has exactly the size libNVVM asked for.
    check("nvvmGetCompiledResult", unsafe {
        (sys.get_compiled_result)(prog, buf.as_mut_ptr().cast())
    })?;
    Ok(buf)
}

/// `nvvmGetProgramLogSize` + `nvvmGetProgramLog`, as text without the NUL.
///
/// # Safety
/// See the module docs.
pub unsafe fn program_log(sys: &NvvmSys, prog: nvvmProgram) -> Result<String, CallError> {
    let mut size = 0usize;
    // SAFETY: valid out-pointer.
    check("nvvmGetProgramLogSize", unsafe {
        (sys.get_program_log_size)(prog, &mut size)
    })?;
    let mut buf = vec![0u8; size.max(1)];
    // SAFETY: `buf` holds at least the size libNVVM asked for.
    check("nvvmGetProgramLog", unsafe {
        (sys.get_program_log)(prog, buf.as_mut_ptr().cast())
    })?;
    Ok(c_text(&buf))
}

/// `nvvmGetErrorString(code)` as an owned string.
///
/// # Safety
/// See the module docs.
pub unsafe fn error_string(sys: &NvvmSys, code: nvvmResult) -> String {
    // SAFETY: any code is accepted; the result is a static string or NULL.
    let p = unsafe { (sys.get_error_string)(code) };
    if p.is_null() {
        return status_name(code).to_owned();
    }
    // SAFETY: non-NULL results point at a static NUL-terminated string.
    unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
}
