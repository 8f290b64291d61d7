//! Raw nvJitLink function table (from `nvJitLink.h`, CUDA 13.0).
//!
//! nvJitLink versions its ABI in symbol names: the header maps the plain
//! `nvJitLinkCreate` onto `__nvJitLinkCreate_13_0` with an inline function,
//! so the versioned names are what C programs built against that header
//! call. The table is resolved with the versioned names of the first ABI the
//! library exports (see [`ABI_SUFFIXES`]), each falling back to its plain
//! name.
#![allow(non_camel_case_types)]

use std::ffi::{c_char, c_int, c_uint, c_void};

use crate::toolchain::dylib::DynLib;
use crate::toolchain::error::Result;

/// `nvJitLinkResult`, kept as an integer (see `nvvm::sys::nvvmResult`).
pub type nvJitLinkResult = c_int;

/// `nvJitLinkInputType`, an `int`-sized C enum.
pub type nvJitLinkInputType = c_int;

/// `nvJitLinkHandle`: opaque pointer to `struct nvJitLink`.
pub type nvJitLinkHandle = *mut c_void;

/// `NVJITLINK_SUCCESS`.
pub const NVJITLINK_SUCCESS: nvJitLinkResult = 0;

/// Symbol-name suffixes of the ABIs whose declarations this table matches,
/// preferred first.
pub const ABI_SUFFIXES: &[&str] = &["_13_0", "_12_0"];

type SizeFn = unsafe extern "C" fn(nvJitLinkHandle, *mut usize) -> nvJitLinkResult;
type TextFn = unsafe extern "C" fn(nvJitLinkHandle, *mut c_char) -> nvJitLinkResult;

/// Every nvJitLink entry point this crate uses.
#[derive(Clone, Copy, Debug)]
pub struct NvJitLinkSys {
    /// `nvJitLinkCreate(nvJitLinkHandle *handle, uint32_t numOptions, const char **options)`
    pub create:
        unsafe extern "C" fn(*mut nvJitLinkHandle, u32, *const *const c_char) -> nvJitLinkResult,
    /// `nvJitLinkDestroy(nvJitLinkHandle *handle)`
    pub destroy: unsafe extern "C" fn(*mut nvJitLinkHandle) -> nvJitLinkResult,
    /// `nvJitLinkAddData(handle, inputType, const void *data, size_t size, const char *name)`
    pub add_data: unsafe extern "C" fn(
        nvJitLinkHandle,
        nvJitLinkInputType,
        *const c_void,
        usize,
        *const c_char,
    ) -> nvJitLinkResult,
    /// `nvJitLinkComplete(handle)`
    pub complete: unsafe extern "C" fn(nvJitLinkHandle) -> nvJitLinkResult,
    /// `nvJitLinkGetLinkedCubinSize(handle, size_t *size)`
    pub get_linked_cubin_size: SizeFn,
    /// `nvJitLinkGetLinkedCubin(handle, void *cubin)`
    pub get_linked_cubin: unsafe extern "C" fn(nvJitLinkHandle, *mut c_void) -> nvJitLinkResult,
    /// `nvJitLinkGetLinkedPtxSize(handle, size_t *size)`
    pub get_linked_ptx_size: SizeFn,
    /// `nvJitLinkGetLinkedPtx(handle, char *ptx)`
    pub get_linked_ptx: TextFn,
    /// `nvJitLinkGetErrorLogSize(handle, size_t *size)`
    pub get_error_log_size: SizeFn,
    /// `nvJitLinkGetErrorLog(handle, char *log)`
    pub get_error_log: TextFn,
    /// `nvJitLinkGetInfoLogSize(handle, size_t *size)`
    pub get_info_log_size: SizeFn,
    /// `nvJitLinkGetInfoLog(handle, char *log)`
    pub get_info_log: TextFn,
    /// `nvJitLinkVersion(unsigned *major, unsigned *minor)`: unversioned, and
    /// absent from the oldest 12.x releases.
    pub version: Option<unsafe extern "C" fn(*mut c_uint, *mut c_uint) -> nvJitLinkResult>,
    /// The ABI suffix the table was resolved with (`""`: plain names only).
    pub abi_suffix: &'static str,
}

impl NvJitLinkSys {
    /// Resolves every entry point; a missing one is a `MissingSymbol` error.
    pub(crate) fn resolve(lib: &DynLib) -> Result<Self> {
        let exports = |name: String| {
            // SAFETY: a presence probe; the data-pointer type is never
            // dereferenced or called.
            let found = unsafe { lib.optional::<*const c_void>(&[name.as_str()]) };
            found.is_some()
        };
        let abi_suffix = ABI_SUFFIXES
            .iter()
            .copied()
            .find(|s| exports(format!("__nvJitLinkCreate{s}")))
            .unwrap_or("");
        let names =
            |plain: &str| -> [String; 2] { [format!("__{plain}{abi_suffix}"), plain.to_owned()] };
        macro_rules! sym {
            ($plain:literal) => {{
                let [v, p] = names($plain);
                // SAFETY: the field's type is transcribed from the declaration
                // of this symbol in nvJitLink.h (identical for the 12.0 and
                // 13.0 ABIs); `size_t` is `usize`.
                unsafe { lib.required(&[v.as_str(), p.as_str()]) }?
            }};
        }
        Ok(NvJitLinkSys {
            create: sym!("nvJitLinkCreate"),
            destroy: sym!("nvJitLinkDestroy"),
            add_data: sym!("nvJitLinkAddData"),
            complete: sym!("nvJitLinkComplete"),
            get_linked_cubin_size: sym!("nvJitLinkGetLinkedCubinSize"),
            get_linked_cubin: sym!("nvJitLinkGetLinkedCubin"),
            get_linked_ptx_size: sym!("nvJitLinkGetLinkedPtxSize"),
            get_linked_ptx: sym!("nvJitLinkGetLinkedPtx"),
            get_error_log_size: sym!("nvJitLinkGetErrorLogSize"),
            get_error_log: sym!("nvJitLinkGetErrorLog"),
            get_info_log_size: sym!("nvJitLinkGetInfoLogSize"),
            get_info_log: sym!("nvJitLinkGetInfoLog"),
            // SAFETY: type transcribed from nvJitLink.h.
            version: unsafe { lib.optional(&["nvJitLinkVersion"]) },
            abi_suffix,
        })
    }
}
