//! NVRTC through cudarc's binding (`cudarc::nvrtc`), bound to the library cudajit found.
//!
//! cudarc 0.19 loads NVRTC itself, once per process, by trying bare sonames
//! (`libnvrtc.so`, `libnvrtc64*.so`, `libnvrtc.so.13`, ...) on the loader's search path;
//! it cannot be given a path, and it panics when nothing loads or a symbol is missing. So
//! [`Nvrtc::load`] first opens the file cudajit's discovery found (a wheel under
//! site-packages is on no search path), then checks that cudarc's loader resolves to that
//! very library: the dynamic loader answers a soname already loaded (`libnvrtc.so.13`)
//! with the loaded object, and the check compares `nvrtcVersion`'s address in both
//! handles. When cudarc would bind another NVRTC (one on `LD_LIBRARY_PATH` under a name
//! it tries first, or one a program loaded through cudarc before), loading fails with an
//! error saying so instead of using a different library than the one reported.
//! Symbols cudarc would panic on are checked in cudajit's handle first.
//!
//! NVRTC itself `dlopen`s `libnvrtc-builtins.so.<major>.<minor>` by soname when it
//! compiles; next to a wheel's library that is on no search path either, so the builtins
//! file beside the library is loaded first, the same way (found by `tests/real.rs`, whose
//! `compile_ptx` through cudarc failed without it).

use std::ffi::{c_int, c_void, CStr};
use std::path::Path;

use cudarc::nvrtc::sys;

use crate::toolchain::discover::{Component, Located};
use crate::toolchain::dylib::DynLib;
use crate::toolchain::error::{CallError, Result, ToolchainError};

/// A loaded NVRTC, called through `cudarc::nvrtc`.
///
/// `Send + Sync`: cudarc's functions are free functions over a never-unloaded library,
/// and NVRTC programs (once compile support lands) are per call.
pub struct Nvrtc {
    lib: DynLib,
    version: (i32, i32),
    ltoir: bool,
}

impl std::fmt::Debug for Nvrtc {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Nvrtc")
            .field("path", &self.lib.path())
            .field("version", &self.version)
            .finish_non_exhaustive()
    }
}

/// Entry points compiling to LTO-IR needs (CUDA 12.0+).
const LTOIR_SYMBOLS: [&str; 7] = [
    "nvrtcCreateProgram",
    "nvrtcDestroyProgram",
    "nvrtcCompileProgram",
    "nvrtcGetProgramLogSize",
    "nvrtcGetProgramLog",
    "nvrtcGetLTOIRSize",
    "nvrtcGetLTOIR",
];

impl Nvrtc {
    /// Loads NVRTC from `located`, binds cudarc's NVRTC to it, and queries its version once.
    pub fn load(located: &Located) -> Result<Nvrtc> {
        let lib = DynLib::open(located)?;
        if let Some(builtins) = builtins_beside(&located.path) {
            // Failure is left to NVRTC to report at compile time, as without this step.
            let _ = DynLib::open(&Located {
                component: Component::Nvrtc,
                path: builtins,
                origin: located.origin.clone(),
            });
        }
        let mismatch = |message: String| ToolchainError::Load {
            component: Component::Nvrtc,
            path: located.path.clone(),
            message,
        };
        // SAFETY: `*const c_void` is only compared, never called.
        let ours: *const c_void = unsafe { lib.required(&["nvrtcVersion"]) }?;
        let theirs = cudarc_symbol("nvrtcVersion").ok_or_else(|| {
            mismatch(
                "cudarc's NVRTC loader finds no libnvrtc by soname even with this file loaded"
                    .into(),
            )
        })?;
        if theirs != ours {
            return Err(mismatch(
                "cudarc's NVRTC loader resolves another libnvrtc (on the loader's search path, or loaded earlier by the program); remove it from LD_LIBRARY_PATH or point CUDAJIT_NVRTC at it"
                    .into(),
            ));
        }
        for symbol in ["nvrtcGetErrorString", "nvrtcVersion"] {
            // SAFETY: as above, the pointer is not called here.
            unsafe { lib.required::<*const c_void>(&[symbol]) }?;
        }
        let (mut major, mut minor): (c_int, c_int) = (0, 0);
        // SAFETY: two valid out-pointers; cudarc's `nvrtcVersion` resolves in the library
        // checked above, which exports it.
        let code = unsafe { sys::nvrtcVersion(&mut major, &mut minor) };
        if code != sys::nvrtcResult::NVRTC_SUCCESS {
            return Err(ToolchainError::Call(CallError {
                component: Component::Nvrtc,
                function: "nvrtcVersion",
                code: code as i32,
                status: static_error_string(code),
            }));
        }
        // SAFETY: as above.
        let ltoir = LTOIR_SYMBOLS
            .iter()
            .all(|s| unsafe { lib.optional::<*const c_void>(&[s]) }.is_some());
        let version = (major, minor);
        tracing::debug!(?version, path = %lib.path().display(), "NVRTC ready (through cudarc)");
        Ok(Nvrtc {
            lib,
            version,
            ltoir,
        })
    }

    /// `nvrtcVersion`: (major, minor).
    pub fn version(&self) -> (i32, i32) {
        self.version
    }

    /// The file the library was loaded from.
    pub fn path(&self) -> &Path {
        self.lib.path()
    }

    /// NVRTC's description of a status code (`NVRTC_ERROR_COMPILATION`).
    pub fn error_string(&self, code: i32) -> String {
        match status_of(code) {
            Some(status) => static_error_string(status).to_owned(),
            None => format!("NVRTC status {code}"),
        }
    }

    /// Whether this NVRTC exports everything needed to compile to LTO-IR, so that
    /// `cudarc::nvrtc::result`'s calls cannot panic on a missing symbol.
    pub fn can_compile_to_ltoir(&self) -> bool {
        self.ltoir
    }
}

/// `libnvrtc-builtins.so.13.0` in the directory of the NVRTC at `path`, if there is one.
fn builtins_beside(path: &Path) -> Option<std::path::PathBuf> {
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty())?;
    let mut found: Vec<_> = std::fs::read_dir(dir)
        .ok()?
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("libnvrtc-builtins.so"))
        })
        .collect();
    found.sort();
    found.into_iter().next()
}

/// The address of `symbol` in the library cudarc's NVRTC loader binds, without letting
/// it panic when none loads.
fn cudarc_symbol(symbol: &str) -> Option<*const c_void> {
    // SAFETY: `is_culib_present` only tries to open candidates; `culib` then opens the
    // first that loads (never unloaded); the symbol is read as an address, not called.
    unsafe {
        if !sys::is_culib_present() {
            return None;
        }
        let found = sys::culib().get::<*const c_void>(symbol.as_bytes()).ok()?;
        Some(*found)
    }
}

/// The status with raw value `code`, if NVRTC defines it.
fn status_of(code: i32) -> Option<sys::nvrtcResult> {
    use sys::nvrtcResult::*;
    [
        NVRTC_SUCCESS,
        NVRTC_ERROR_OUT_OF_MEMORY,
        NVRTC_ERROR_PROGRAM_CREATION_FAILURE,
        NVRTC_ERROR_INVALID_INPUT,
        NVRTC_ERROR_INVALID_PROGRAM,
        NVRTC_ERROR_INVALID_OPTION,
        NVRTC_ERROR_COMPILATION,
        NVRTC_ERROR_BUILTIN_OPERATION_FAILURE,
        NVRTC_ERROR_NO_NAME_EXPRESSIONS_AFTER_COMPILATION,
        NVRTC_ERROR_NO_LOWERED_NAMES_BEFORE_COMPILATION,
        NVRTC_ERROR_NAME_EXPRESSION_NOT_VALID,
        NVRTC_ERROR_INTERNAL_ERROR,
    ]
    .into_iter()
    .find(|s| *s as i32 == code)
}

/// `nvrtcGetErrorString(status)`: a static string inside NVRTC, which is never unloaded.
fn static_error_string(status: sys::nvrtcResult) -> &'static str {
    // SAFETY: only called once `Nvrtc::load` checked that cudarc's NVRTC is loaded and
    // exports the function; any status is accepted and the result is NULL or a static
    // NUL-terminated string that lives as long as the (never unloaded) library.
    let p = unsafe { sys::nvrtcGetErrorString(status) };
    if p.is_null() {
        return "NVRTC_ERROR_UNKNOWN";
    }
    // SAFETY: see above.
    unsafe { CStr::from_ptr(p) }
        .to_str()
        .unwrap_or("NVRTC_ERROR_UNKNOWN")
}
