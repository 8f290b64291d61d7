//! Raw libNVVM function table (from `nvvm.h`, CUDA 13.0), resolved at load.
#![allow(non_camel_case_types)]

use std::ffi::{c_char, c_int, c_void};

use crate::toolchain::dylib::DynLib;
use crate::toolchain::error::Result;

/// `nvvmResult`: an `int`-sized C enum. Kept as a plain integer because a
/// newer library may return codes this crate has no variant for.
pub type nvvmResult = c_int;

/// `nvvmProgram`: opaque pointer to `struct _nvvmProgram`.
pub type nvvmProgram = *mut c_void;

/// `NVVM_SUCCESS`.
pub const NVVM_SUCCESS: nvvmResult = 0;

/// Every libNVVM entry point this crate uses.
#[derive(Clone, Copy, Debug)]
pub struct NvvmSys {
    /// `const char *nvvmGetErrorString(nvvmResult)`
    pub get_error_string: unsafe extern "C" fn(nvvmResult) -> *const c_char,
    /// `nvvmResult nvvmVersion(int *major, int *minor)`
    pub version: unsafe extern "C" fn(*mut c_int, *mut c_int) -> nvvmResult,
    /// `nvvmResult nvvmIRVersion(int *majorIR, int *minorIR, int *majorDbg, int *minorDbg)`
    pub ir_version:
        unsafe extern "C" fn(*mut c_int, *mut c_int, *mut c_int, *mut c_int) -> nvvmResult,
    /// `nvvmResult nvvmCreateProgram(nvvmProgram *prog)`
    pub create_program: unsafe extern "C" fn(*mut nvvmProgram) -> nvvmResult,
    /// `nvvmResult nvvmDestroyProgram(nvvmProgram *prog)`
    pub destroy_program: unsafe extern "C" fn(*mut nvvmProgram) -> nvvmResult,
    /// `nvvmResult nvvmAddModuleToProgram(nvvmProgram, const char *buffer, size_t size, const char *name)`
    pub add_module_to_program:
        unsafe extern "C" fn(nvvmProgram, *const c_char, usize, *const c_char) -> nvvmResult,
    /// `nvvmResult nvvmLazyAddModuleToProgram(nvvmProgram, const char *buffer, size_t size, const char *name)`
    pub lazy_add_module_to_program:
        unsafe extern "C" fn(nvvmProgram, *const c_char, usize, *const c_char) -> nvvmResult,
    /// `nvvmResult nvvmCompileProgram(nvvmProgram, int numOptions, const char **options)`
    pub compile_program:
        unsafe extern "C" fn(nvvmProgram, c_int, *const *const c_char) -> nvvmResult,
    /// `nvvmResult nvvmVerifyProgram(nvvmProgram, int numOptions, const char **options)`
    pub verify_program:
        unsafe extern "C" fn(nvvmProgram, c_int, *const *const c_char) -> nvvmResult,
    /// `nvvmResult nvvmGetCompiledResultSize(nvvmProgram, size_t *bufferSizeRet)`
    pub get_compiled_result_size: unsafe extern "C" fn(nvvmProgram, *mut usize) -> nvvmResult,
    /// `nvvmResult nvvmGetCompiledResult(nvvmProgram, char *buffer)`
    pub get_compiled_result: unsafe extern "C" fn(nvvmProgram, *mut c_char) -> nvvmResult,
    /// `nvvmResult nvvmGetProgramLogSize(nvvmProgram, size_t *bufferSizeRet)`
    pub get_program_log_size: unsafe extern "C" fn(nvvmProgram, *mut usize) -> nvvmResult,
    /// `nvvmResult nvvmGetProgramLog(nvvmProgram, char *buffer)`
    pub get_program_log: unsafe extern "C" fn(nvvmProgram, *mut c_char) -> nvvmResult,
}

impl NvvmSys {
    /// Resolves every entry point; a missing one is a `MissingSymbol` error.
    pub(crate) fn resolve(lib: &DynLib) -> Result<Self> {
        // SAFETY: for every `required` below, the field's type is transcribed
        // from the matching declaration in nvvm.h; `size_t` is `usize` on
        // every platform Rust and CUDA share.
        unsafe {
            Ok(NvvmSys {
                get_error_string: lib.required(&["nvvmGetErrorString"])?,
                version: lib.required(&["nvvmVersion"])?,
                ir_version: lib.required(&["nvvmIRVersion"])?,
                create_program: lib.required(&["nvvmCreateProgram"])?,
                destroy_program: lib.required(&["nvvmDestroyProgram"])?,
                add_module_to_program: lib.required(&["nvvmAddModuleToProgram"])?,
                lazy_add_module_to_program: lib.required(&["nvvmLazyAddModuleToProgram"])?,
                compile_program: lib.required(&["nvvmCompileProgram"])?,
                verify_program: lib.required(&["nvvmVerifyProgram"])?,
                get_compiled_result_size: lib.required(&["nvvmGetCompiledResultSize"])?,
                get_compiled_result: lib.required(&["nvvmGetCompiledResult"])?,
                get_program_log_size: lib.required(&["nvvmGetProgramLogSize"])?,
                get_program_log: lib.required(&["nvvmGetProgramLog"])?,
            })
        }
    }
}
