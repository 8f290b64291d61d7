//! Raw NVRTC function table (from `nvrtc.h`, CUDA 13.0).
//!
//! Only `nvrtcVersion` and `nvrtcGetErrorString` are required today; the
//! compilation entry points are resolved as `Option`s so a safe compile API
//! can be added later without changing how the library is loaded.
#![allow(non_camel_case_types)]

use std::ffi::{c_char, c_int, c_void};

use crate::toolchain::dylib::DynLib;
use crate::toolchain::error::Result;

/// `nvrtcResult`, kept as an integer (see `nvvm::sys::nvvmResult`).
pub type nvrtcResult = c_int;

/// `nvrtcProgram`: opaque pointer to `struct _nvrtcProgram`.
pub type nvrtcProgram = *mut c_void;

/// `NVRTC_SUCCESS`.
pub const NVRTC_SUCCESS: nvrtcResult = 0;

type SizeFn = unsafe extern "C" fn(nvrtcProgram, *mut usize) -> nvrtcResult;
type FillFn = unsafe extern "C" fn(nvrtcProgram, *mut c_char) -> nvrtcResult;

/// NVRTC entry points.
#[derive(Clone, Copy, Debug)]
pub struct NvrtcSys {
    /// `const char *nvrtcGetErrorString(nvrtcResult)`
    pub get_error_string: unsafe extern "C" fn(nvrtcResult) -> *const c_char,
    /// `nvrtcResult nvrtcVersion(int *major, int *minor)`
    pub version: unsafe extern "C" fn(*mut c_int, *mut c_int) -> nvrtcResult,
    /// `nvrtcCreateProgram(prog*, src, name, numHeaders, headers, includeNames)`
    pub create_program: Option<
        unsafe extern "C" fn(
            *mut nvrtcProgram,
            *const c_char,
            *const c_char,
            c_int,
            *const *const c_char,
            *const *const c_char,
        ) -> nvrtcResult,
    >,
    /// `nvrtcDestroyProgram(nvrtcProgram *prog)`
    pub destroy_program: Option<unsafe extern "C" fn(*mut nvrtcProgram) -> nvrtcResult>,
    /// `nvrtcCompileProgram(prog, int numOptions, const char * const *options)`
    pub compile_program:
        Option<unsafe extern "C" fn(nvrtcProgram, c_int, *const *const c_char) -> nvrtcResult>,
    /// `nvrtcGetProgramLogSize(prog, size_t *)`
    pub get_program_log_size: Option<SizeFn>,
    /// `nvrtcGetProgramLog(prog, char *)`
    pub get_program_log: Option<FillFn>,
    /// `nvrtcGetPTXSize(prog, size_t *)`
    pub get_ptx_size: Option<SizeFn>,
    /// `nvrtcGetPTX(prog, char *)`
    pub get_ptx: Option<FillFn>,
    /// `nvrtcGetCUBINSize(prog, size_t *)`
    pub get_cubin_size: Option<SizeFn>,
    /// `nvrtcGetCUBIN(prog, char *)`
    pub get_cubin: Option<FillFn>,
    /// `nvrtcGetLTOIRSize(prog, size_t *)` (CUDA 12.0+)
    pub get_ltoir_size: Option<SizeFn>,
    /// `nvrtcGetLTOIR(prog, char *)` (CUDA 12.0+)
    pub get_ltoir: Option<FillFn>,
}

impl NvrtcSys {
    /// Resolves the table; only the required entries can fail.
    pub(crate) fn resolve(lib: &DynLib) -> Result<Self> {
        // SAFETY: every field's type below is transcribed from the matching
        // declaration in nvrtc.h; `size_t` is `usize`.
        unsafe {
            Ok(NvrtcSys {
                get_error_string: lib.required(&["nvrtcGetErrorString"])?,
                version: lib.required(&["nvrtcVersion"])?,
                create_program: lib.optional(&["nvrtcCreateProgram"]),
                destroy_program: lib.optional(&["nvrtcDestroyProgram"]),
                compile_program: lib.optional(&["nvrtcCompileProgram"]),
                get_program_log_size: lib.optional(&["nvrtcGetProgramLogSize"]),
                get_program_log: lib.optional(&["nvrtcGetProgramLog"]),
                get_ptx_size: lib.optional(&["nvrtcGetPTXSize"]),
                get_ptx: lib.optional(&["nvrtcGetPTX"]),
                get_cubin_size: lib.optional(&["nvrtcGetCUBINSize"]),
                get_cubin: lib.optional(&["nvrtcGetCUBIN"]),
                get_ltoir_size: lib.optional(&["nvrtcGetLTOIRSize"]),
                get_ltoir: lib.optional(&["nvrtcGetLTOIR"]),
            })
        }
    }
}
