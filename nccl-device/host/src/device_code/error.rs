//! Errors of the device-library provider. Each names the NCCL release and the files
//! involved and says what to do, because the person reading it usually did not choose
//! the NCCL installation consciously (a wheel pulled in by PyTorch, a system package).

use std::path::PathBuf;

use cudajit_codegen::toolchain::ToolchainError;

use crate::version::NcclVersion;

/// What can go wrong while providing or linking an NCCL device library.
#[derive(Clone, thiserror::Error, cudajit_error_debug::ReadableDebug)]
#[non_exhaustive]
pub enum DeviceCodeError {
    /// A variable the provider reads (`CUDAJIT_CACHE`, ...) is set to a value cudajit
    /// cannot use.
    #[error(transparent)]
    Environment(#[from] cudajit_core::EnvVarError),

    /// The release ships no device library and has no bridge in this build.
    #[error(
        "NCCL {version} at {}: no device library. It ships no libnccl_device.ltoir beside \
         the library, and cudajit's bridge covers the 2.28 headers only. Fix: use NCCL 2.28.x, \
         or a release whose wheel ships lib/libnccl_device.ltoir (nvidia-nccl-cu13 2.31 or \
         newer), e.g. `pip install nvidia-nccl-cu13==2.32.3`",
        library.display()
    )]
    NoDeviceLibrary {
        /// The release.
        version: NcclVersion,
        /// `libnccl.so.2`.
        library: PathBuf,
    },

    /// The bridge must be compiled but the release's headers are not installed.
    #[error(
        "NCCL {version} at {}: the device-library bridge is compiled from nccl_device.h, but \
         no headers were found beside the library. Fix: install the headers of the same \
         release (libnccl-dev) or set CUDAJIT_NCCL_INCLUDE",
        library.display()
    )]
    NoHeaders {
        /// The release.
        version: NcclVersion,
        /// `libnccl.so.2`.
        library: PathBuf,
    },

    /// No nvcc to compile the bridge with.
    #[error("NCCL {version}: compiling the device-library bridge needs nvcc: {source}")]
    NvccNotFound {
        /// The release the bridge was for.
        version: NcclVersion,
        /// Where it was searched.
        #[source]
        source: ToolchainError,
    },

    /// nvcc is there but the CUDA runtime headers it needs are not.
    #[error(
        "nvcc at {} has no CUDA headers (cuda_runtime.h). Searched:\n{}\nFix: set \
         CUDAJIT_CUDA_INCLUDE to a CUDA 13 include directory, or run \
         nccl-device/scripts/fetch-wheels.sh --cuda-headers",
        nvcc.display(),
        searched.join("\n")
    )]
    CudaHeadersNotFound {
        /// The nvcc found.
        nvcc: PathBuf,
        /// Every directory tried, with the reason it was rejected.
        searched: Vec<String>,
    },

    /// nvcc rejected the bridge.
    #[error(
        "nvcc failed to compile cudajit's device-library bridge for NCCL {version} (headers \
         {}):\n$ {command}\n{stderr}\nFix: the headers are probably not 2.28's (check \
         NCCL_VERSION_CODE in nccl.h), or nvcc is too old for them (CUDA 12.8+/13.x)",
        include_dir.display()
    )]
    BridgeCompile {
        /// The release.
        version: NcclVersion,
        /// Its include directory.
        include_dir: PathBuf,
        /// The command line run.
        command: String,
        /// nvcc's output.
        stderr: String,
    },

    /// Reading or writing a file failed.
    #[error("{what} {}: {message}", path.display())]
    Io {
        /// What was being done, e.g. "cannot read the device library".
        what: &'static str,
        /// The file.
        path: PathBuf,
        /// The OS's message.
        message: String,
    },

    /// A kernel needs a function that this generation's table does not map.
    #[error(
        "device function `{function}` is not provided by {generation} ({}, NCCL {version}). \
         Fix: use an NCCL release whose device library has it, or avoid the function",
        path.display()
    )]
    FunctionUnavailable {
        /// Our name.
        function: String,
        /// The table's generation.
        generation: &'static str,
        /// The library file.
        path: PathBuf,
        /// The release.
        version: NcclVersion,
    },

    /// The link left symbols undefined: the kernel calls what the library does not define.
    #[error(
        "{} called by the kernel {} not defined by {generation} at {} (NCCL {version}). \
         Fix: call only functions of that release's device API (the symbol tables of \
         cudajit_nccl::device_code::symbols list them), or also link the library that \
         defines {}\n--- nvJitLink error log ---\n{log}",
        describe(missing),
        if missing.len() == 1 { "is" } else { "are" },
        path.display(),
        if missing.len() == 1 { "it" } else { "them" }
    )]
    MissingSymbols {
        /// Each undefined symbol, with our name for it when the table knows one.
        missing: Vec<MissingSymbol>,
        /// The table's generation.
        generation: &'static str,
        /// The library file.
        path: PathBuf,
        /// The release.
        version: NcclVersion,
        /// nvJitLink's raw error log.
        log: String,
    },

    /// The device library was made by a newer NVVM than nvJitLink can read.
    #[error(
        "the NCCL {version} device library {} was built by a newer CUDA than nvJitLink {} \
         ({nvjitlink_version}) can read (NVJITLINK_ERROR_OUTDATED_LIBRARY). Fix: use a newer \
         nvJitLink, e.g. `pip install nvidia-nvjitlink==13.5.37` and CUDAJIT_NVJITLINK=<its \
         lib/libnvJitLink.so.13>, or an NCCL release built with your CUDA",
        path.display(),
        nvjitlink.display()
    )]
    NvJitLinkTooOld {
        /// The release.
        version: NcclVersion,
        /// The device library.
        path: PathBuf,
        /// The nvJitLink used.
        nvjitlink: PathBuf,
        /// Its `major.minor`.
        nvjitlink_version: String,
    },

    /// cudajit's C-ABI shim over the `.ltoir` could not be made.
    #[error("NCCL {version} device library {}: {source}", path.display())]
    Shim {
        /// The release.
        version: NcclVersion,
        /// The `.ltoir`.
        path: PathBuf,
        /// What went wrong.
        #[source]
        source: super::shim::ShimError,
    },

    /// Any other link failure (nvJitLink's own report, with its logs).
    #[error("linking with the NCCL {version} device library {}: {source}", path.display())]
    Link {
        /// The release.
        version: NcclVersion,
        /// The library file.
        path: PathBuf,
        /// nvJitLink's failure.
        #[source]
        source: ToolchainError,
    },
}

/// One undefined symbol of a failed link.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MissingSymbol {
    /// The linker symbol.
    pub symbol: String,
    /// Our function name, when some generation's table maps that symbol.
    pub function: Option<String>,
}

fn describe(missing: &[MissingSymbol]) -> String {
    let each: Vec<String> = missing
        .iter()
        .map(|m| match &m.function {
            Some(f) if f.starts_with("gin_") => format!(
                "device function `{f}` (symbol `{}`; GIN is provided only by NCCL 2.32+'s \
                 libnccl_device.ltoir, through cudajit's shim)",
                m.symbol
            ),
            Some(f) => format!("device function `{f}` (symbol `{}`)", m.symbol),
            None => format!("symbol `{}`", m.symbol),
        })
        .collect();
    each.join(", ")
}

/// The provider's result type.
pub type Result<T, E = DeviceCodeError> = std::result::Result<T, E>;
