//! Discovery and dynamic loading of NVIDIA's compiler libraries: libNVVM,
//! libdevice, nvJitLink, NVRTC and nvcc.
//!
//! Nothing is linked at build time: the libraries are found at run time
//! ([`discover`]) in an explicit override, a CUDA toolkit, NVIDIA's Python
//! wheels or the loader's path, and opened with `dlopen` on first use.
//! libNVVM and nvJitLink follow the cudarc layout: `sys` (raw symbol table),
//! `result` (status codes as `Result`s) and `safe` (RAII types re-exported here).
//! NVRTC is called through cudarc's own binding, bound to the discovered file
//! (see [`nvrtc`]).
//!
//! Library handles are loaded once per [`Toolchain`] and never unloaded (see
//! `dylib.rs` for why).
#![deny(unsafe_op_in_unsafe_fn)]
#![deny(clippy::undocumented_unsafe_blocks)]
#![warn(missing_docs)]

mod component;
mod counters;
pub mod discover;
mod dylib;
mod error;
mod ffi;
mod identity;
mod nvcc;
pub mod nvjitlink;
pub mod nvrtc;
pub mod nvvm;
mod report;

#[cfg(test)]
mod tests;

use std::sync::OnceLock;

pub use counters::{invocation_counts, InvocationCounts};
pub use discover::{locate, locate_libdevice, Component, Located, Origin, RootSource, SearchEnv};
pub use error::{
    unresolved_symbols, CallError, LinkFailure, NvvmCompileFailure, Result, ToolchainError,
};
pub use identity::{FileIdentity, ToolchainIdentity};
pub use nvcc::{nvcc_version, parse_nvcc_version};
pub use nvjitlink::{InputKind, LinkInput, Linked, NvJitLink};
pub use nvrtc::Nvrtc;
pub use nvvm::{Nvvm, NvvmModule, NvvmOutput};
pub use report::{ToolchainReport, ToolchainVersions};

/// A located toolchain whose libraries load lazily, once.
///
/// libNVVM, libdevice and nvJitLink are located by [`Toolchain::discover`]
/// (compiling needs all three); NVRTC and nvcc are optional and located on
/// first request. Every lazy step, including a failure, is computed once and
/// cached, so concurrent callers never load a library twice.
#[derive(Debug)]
pub struct Toolchain {
    env: SearchEnv,
    nvvm_at: Located,
    libdevice_at: Located,
    nvjitlink_at: Located,
    nvrtc_at: OnceLock<Result<Located>>,
    nvcc_at: OnceLock<Result<Located>>,
    nvvm: OnceLock<Result<Nvvm>>,
    nvjitlink: OnceLock<Result<NvJitLink>>,
    nvrtc: OnceLock<Result<Nvrtc>>,
    libdevice: OnceLock<Result<Vec<u8>>>,
}

static GLOBAL: OnceLock<Result<Toolchain>> = OnceLock::new();

impl Toolchain {
    /// Locates libNVVM, the libdevice of the same installation when there is
    /// one, and nvJitLink. Loads nothing.
    pub fn discover(env: &SearchEnv) -> Result<Toolchain> {
        let nvvm_at = locate(Component::Nvvm, env)?;
        let libdevice_at = locate_libdevice(env, Some(&nvvm_at))?;
        let nvjitlink_at = locate(Component::NvJitLink, env)?;
        Ok(Toolchain {
            env: env.clone(),
            nvvm_at,
            libdevice_at,
            nvjitlink_at,
            nvrtc_at: OnceLock::new(),
            nvcc_at: OnceLock::new(),
            nvvm: OnceLock::new(),
            nvjitlink: OnceLock::new(),
            nvrtc: OnceLock::new(),
            libdevice: OnceLock::new(),
        })
    }

    /// The process-wide toolchain, discovered from the process environment on
    /// first call. The outcome, failure included, is cached for the life of
    /// the process: the environment is read once, so retrying could only give
    /// the same answer unless files appear mid-run; a caller that installs
    /// tools at run time can use [`Toolchain::discover`] directly.
    pub fn global() -> Result<&'static Toolchain> {
        GLOBAL
            .get_or_init(|| Toolchain::discover(&SearchEnv::from_process()))
            .as_ref()
            .map_err(Clone::clone)
    }

    /// Where libNVVM was found.
    pub fn nvvm_location(&self) -> &Located {
        &self.nvvm_at
    }

    /// Where libdevice was found.
    pub fn libdevice_location(&self) -> &Located {
        &self.libdevice_at
    }

    /// Where nvJitLink was found.
    pub fn nvjitlink_location(&self) -> &Located {
        &self.nvjitlink_at
    }

    /// Where NVRTC is, located on first call.
    pub fn nvrtc_location(&self) -> Result<&Located> {
        cached(&self.nvrtc_at, || locate(Component::Nvrtc, &self.env))
    }

    /// Where nvcc is, located on first call.
    pub fn nvcc_location(&self) -> Result<&Located> {
        cached(&self.nvcc_at, || locate(Component::Nvcc, &self.env))
    }

    /// libNVVM, loaded on first call.
    pub fn nvvm(&self) -> Result<&Nvvm> {
        cached(&self.nvvm, || Nvvm::load(&self.nvvm_at))
    }

    /// nvJitLink, loaded on first call.
    pub fn nvjitlink(&self) -> Result<&NvJitLink> {
        cached(&self.nvjitlink, || NvJitLink::load(&self.nvjitlink_at))
    }

    /// NVRTC, located and loaded on first call.
    pub fn nvrtc(&self) -> Result<&Nvrtc> {
        cached(&self.nvrtc, || Nvrtc::load(self.nvrtc_location()?))
    }

    /// The contents of libdevice, read on first call.
    pub fn libdevice_bytes(&self) -> Result<&[u8]> {
        let path = &self.libdevice_at.path;
        let read = || {
            std::fs::read(path).map_err(|e| ToolchainError::Io {
                component: Component::Libdevice,
                path: path.clone(),
                message: e.to_string(),
            })
        };
        cached(&self.libdevice, read).map(Vec::as_slice)
    }

    /// `nvcc --version` of the located nvcc, e.g. `"13.0.88"` (runs it).
    pub fn nvcc_version(&self) -> Result<String> {
        nvcc_version(&self.nvcc_location()?.path)
    }

    /// A cheap fingerprint of libNVVM, libdevice and nvJitLink (path, size,
    /// mtime; no loading, no hashing of file contents) for cache keys.
    pub fn identity(&self) -> ToolchainIdentity {
        let files = [&self.nvvm_at, &self.libdevice_at, &self.nvjitlink_at]
            .into_iter()
            .map(FileIdentity::of);
        ToolchainIdentity {
            files: files.collect(),
        }
    }

    /// The versions libNVVM and nvJitLink report (loads both).
    pub fn versions(&self) -> Result<ToolchainVersions> {
        let nvvm = self.nvvm()?;
        Ok(ToolchainVersions {
            nvvm: nvvm.version(),
            nvvm_ir: nvvm.ir_version(),
            nvjitlink: self.nvjitlink()?.version(),
        })
    }

    /// Where each component is and which rule found it, for display.
    pub fn report(&self) -> ToolchainReport<'_> {
        ToolchainReport { toolchain: self }
    }
}

/// `cell`'s value, computing it once; errors are cached too and cloned out.
fn cached<T>(cell: &OnceLock<Result<T>>, init: impl FnOnce() -> Result<T>) -> Result<&T> {
    cell.get_or_init(init).as_ref().map_err(Clone::clone)
}
