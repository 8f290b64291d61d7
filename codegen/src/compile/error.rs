//! Why a kernel could not be compiled: every error names the kernel.

use cudajit_core::external::LibraryError;
use cudajit_core::LowerCapturedError;

use crate::cubin::CubinError;
use crate::nvvm::WriteError;
use crate::toolchain::ToolchainError;

/// Why a kernel could not be compiled. Every variant names the kernel.
#[derive(Debug, thiserror::Error)]
pub enum CompileError {
    /// The captured kernel did not become validated IR ([`CapturedKernel::lower`]).
    ///
    /// [`CapturedKernel::lower`]: cudajit_core::CapturedKernel::lower
    #[error(transparent)]
    Lower(#[from] LowerCapturedError),
    #[error("kernel `{kernel}`: {source}")]
    Write { kernel: String, source: WriteError },
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
