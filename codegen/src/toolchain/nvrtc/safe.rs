//! Safe NVRTC: loading and version for now.

use std::path::Path;

use super::result;
use super::sys::NvrtcSys;
use crate::toolchain::discover::Located;
use crate::toolchain::dylib::DynLib;
use crate::toolchain::error::Result;

/// A loaded NVRTC.
///
/// `Send + Sync` for the same reason as [`Nvvm`](crate::toolchain::Nvvm):
/// function pointers into a never-unloaded library, and NVRTC programs (once
/// compile support lands) are per call.
pub struct Nvrtc {
    sys: NvrtcSys,
    lib: DynLib,
    version: (i32, i32),
}

impl std::fmt::Debug for Nvrtc {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Nvrtc")
            .field("path", &self.lib.path())
            .field("version", &self.version)
            .finish_non_exhaustive()
    }
}

impl Nvrtc {
    /// Loads NVRTC from `located` and queries its version once.
    pub fn load(located: &Located) -> Result<Nvrtc> {
        let lib = DynLib::open(located)?;
        let sys = NvrtcSys::resolve(&lib)?;
        // SAFETY: `sys` was just resolved from a real NVRTC.
        let version = unsafe { result::version(&sys) }?;
        tracing::debug!(?version, path = %lib.path().display(), "NVRTC ready");
        Ok(Nvrtc { sys, lib, version })
    }

    /// `nvrtcVersion`: (major, minor).
    pub fn version(&self) -> (i32, i32) {
        self.version
    }

    /// The file the library was loaded from.
    pub fn path(&self) -> &Path {
        self.lib.path()
    }

    /// NVRTC's description of a status code.
    pub fn error_string(&self, code: i32) -> String {
        // SAFETY: `self.sys` was resolved from a real NVRTC.
        unsafe { result::error_string(&self.sys, code) }
    }

    /// The raw table, for compile support built on top of this type.
    pub fn sys(&self) -> &NvrtcSys {
        &self.sys
    }

    /// Whether this NVRTC exports everything needed to compile to LTO-IR.
    pub fn can_compile_to_ltoir(&self) -> bool {
        let s = &self.sys;
        s.create_program.is_some()
            && s.destroy_program.is_some()
            && s.compile_program.is_some()
            && s.get_program_log_size.is_some()
            && s.get_program_log.is_some()
            && s.get_ltoir_size.is_some()
            && s.get_ltoir.is_some()
    }
}
