//! Why a kernel could not be compiled: every error names the kernel.

use cudajit_core::external::LibraryError;
use cudajit_core::{EnvVarError, LowerCapturedError};

use crate::cubin::CubinError;
use crate::nvvm::WriteError;
use crate::target::Arch;
use crate::toolchain::ToolchainError;

/// Why a kernel could not be compiled. Every variant names the kernel.
#[derive(thiserror::Error, cudajit_error_debug::ReadableDebug)]
#[non_exhaustive]
pub enum CompileError {
    /// The captured kernel did not become validated IR ([`CapturedKernel::lower`]).
    ///
    /// [`CapturedKernel::lower`]: cudajit_core::CapturedKernel::lower
    #[error(transparent)]
    Lower(#[from] LowerCapturedError),
    #[error("kernel `{kernel}`: {source}")]
    Write { kernel: String, source: WriteError },
    /// A variable the compile reads (`CUDAJIT_CACHE_MAX_BYTES`, `CUDAJIT_BOUNDS_CHECKS`,
    /// ...) is set to a value cudajit cannot use.
    #[error("kernel `{kernel}`: {source}")]
    Environment { kernel: String, source: EnvVarError },
    #[error("kernel `{kernel}`: {source}")]
    Toolchain {
        kernel: String,
        source: ToolchainError,
    },
    #[error("kernel `{kernel}`: nvJitLink produced no usable cubin: {source}")]
    Cubin { kernel: String, source: CubinError },
    #[error("kernel `{kernel}`: {source}")]
    Library {
        kernel: String,
        source: LibraryError,
    },
    /// A kernel declared `#[kernel(arch = "sm_XYa")]` compiled for another compute
    /// capability, which cannot run an `sm_XYa` cubin.
    #[error(
        "kernel `{kernel}` is declared `#[kernel(arch = \"{required}\")]`: it uses \
         architecture-specific instructions and runs only on GPUs of compute capability \
         {major}.{minor}, so it cannot be compiled for {arch}; launch it on such a GPU, or \
         compile it for `Arch::new({major}, {minor})`"
    )]
    ArchMismatch {
        kernel: String,
        required: String,
        major: u32,
        minor: u32,
        arch: Arch,
    },
    /// ptxas refused instructions the portable target lacks but its architecture-specific
    /// form has (`wgmma.*` on `sm_90`).
    #[error(
        "kernel `{kernel}` uses {} which {arch} does not support: it is an \
         architecture-specific instruction of {specific}; declare the kernel \
         `#[kernel(arch = \"{specific}\")]`, which compiles it for {specific} on every \
         launch and `compile_for_arch` (`Arch::SM_90A` is sm_90a)\n--- nvJitLink log ---\n{log}",
        instructions.iter().map(|i| format!("`{i}`")).collect::<Vec<_>>().join(", ")
    )]
    NeedsSpecificArch {
        kernel: String,
        /// The instructions ptxas named, each once.
        instructions: Vec<String>,
        arch: Arch,
        specific: Arch,
        log: String,
    },
    #[error(
        "kernel `{kernel}`: {}\n--- nvJitLink log ---\n{log}",
        missing.iter().map(ToString::to_string).collect::<Vec<_>>().join("; ")
    )]
    MissingExtern {
        kernel: String,
        missing: Vec<MissingExtern>,
        log: String,
    },
}

/// An `#[extern_device]` symbol that no linked device library defines.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MissingExtern {
    /// The symbol nvJitLink could not resolve.
    pub symbol: String,
    /// The `#[extern_device]` function bound to it, if one is.
    pub function: Option<String>,
    /// The library the function names, and where its bytes come from.
    pub library: Option<(String, String)>,
}

impl std::fmt::Display for MissingExtern {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match (&self.function, &self.library) {
            (Some(function), Some((library, origin))) => write!(
                f,
                "the `#[extern_device]` function `{function}` binds to the symbol `{}`, which \
                 the device library `{library}` ({origin}) does not define; check the symbol \
                 (`#[link_name]`), that the library exports it `extern \"C\"`, and that it \
                 was rebuilt",
                self.symbol
            ),
            _ => write!(f, "no linked input defines the symbol `{}`", self.symbol),
        }
    }
}
