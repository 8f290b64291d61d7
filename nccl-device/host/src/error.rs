//! Errors of the NCCL host layer. Every variant names the cause and, where there is
//! one, the fix; all are `Clone` (text only inside) so a failed load can be cached.

use std::fmt;
use std::path::PathBuf;
use std::time::Duration;

use cudajit_codegen::toolchain::discover::searched_list;

use crate::version::NcclVersion;

/// A failed NCCL call: which function, its `ncclResult_t`, and NCCL's own words
/// (`ncclGetErrorString` of the code, `ncclGetLastError` of the communicator).
#[derive(Clone, PartialEq, Eq, cudajit_error_debug::ReadableDebug)]
pub struct NcclCallError {
    /// The C function, e.g. `ncclCommInitRank`.
    pub function: &'static str,
    /// The raw `ncclResult_t`.
    pub code: i32,
    /// The enumerator's name, e.g. `ncclInvalidUsage`.
    pub name: &'static str,
    /// `ncclGetErrorString(code)`.
    pub error_string: String,
    /// `ncclGetLastError(comm)`: NCCL's description of the last failure (may be empty).
    pub last_error: String,
}

impl fmt::Display for NcclCallError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} failed with {} ({}): {}",
            self.function, self.name, self.code, self.error_string
        )?;
        if !self.last_error.is_empty() {
            write!(f, "; NCCL's last error: {}", self.last_error.trim_end())?;
        }
        Ok(())
    }
}

impl std::error::Error for NcclCallError {}

/// Everything that can go wrong in the NCCL host layer.
#[derive(Clone, thiserror::Error, cudajit_error_debug::ReadableDebug)]
#[non_exhaustive]
pub enum NcclError {
    /// No `libnccl.so.2` anywhere; `searched` lists every place tried, in order.
    #[error(
        "NCCL (libnccl.so.2) not found. Searched, in order:\n{}\nFix: install NCCL 2.28.3 or newer \
         (`pip install nvidia-nccl-cu13`, or the libnccl2 package) or point CUDAJIT_NCCL_LIBRARY \
         at libnccl.so.2",
        searched_list(searched)
    )]
    LibraryNotFound {
        /// Every place tried.
        searched: Vec<String>,
    },

    /// An explicit path variable names nothing.
    #[error("{var}={} does not name an existing {what}; fix the variable or unset it", path.display())]
    BadOverride {
        /// The variable, e.g. `CUDAJIT_NCCL_LIBRARY`.
        var: &'static str,
        /// Its value.
        path: PathBuf,
        /// "file" or "directory".
        what: &'static str,
    },

    /// `dlopen` failed.
    #[error("cannot load NCCL from {}: {message}", path.display())]
    Load {
        /// The file or soname.
        path: PathBuf,
        /// The loader's message.
        message: String,
    },

    /// The library lacks a symbol this layer needs.
    #[error("NCCL at {} does not export `{symbol}`: it is not NCCL {} or newer", path.display(), crate::version::MIN_SUPPORTED)]
    MissingSymbol {
        /// The library.
        path: PathBuf,
        /// The missing function.
        symbol: &'static str,
    },

    /// The library is older than the oldest supported release.
    #[error("NCCL {version} at {} is too old: cudajit needs NCCL {} or newer (the device API's host side); install a newer NCCL or point CUDAJIT_NCCL_LIBRARY at one", path.display(), crate::version::MIN_SUPPORTED)]
    TooOld {
        /// What `ncclGetVersion` reported.
        version: NcclVersion,
        /// The library.
        path: PathBuf,
    },

    /// The library and the headers that device code is compiled against are different
    /// releases: struct layouts (e.g. `ncclDevComm`) would disagree.
    #[error(
        "NCCL version mismatch: the library {} is {library_version} but the headers {} are \
         {headers_version}; device code must be built against the headers of the loaded \
         release. Fix: use one installation (set NCCL_HOME, or CUDAJIT_NCCL_LIBRARY and \
         CUDAJIT_NCCL_INCLUDE, to the same release)",
        library.display(),
        headers.display()
    )]
    VersionMismatch {
        /// The loaded library.
        library: PathBuf,
        /// `ncclGetVersion`.
        library_version: NcclVersion,
        /// The `nccl.h` read.
        headers: PathBuf,
        /// Its `NCCL_VERSION_CODE`.
        headers_version: NcclVersion,
    },

    /// `nccl.h` exists but cannot be read or parsed.
    #[error("cannot read the NCCL version from {}: {message}", path.display())]
    BadHeaders {
        /// The header.
        path: PathBuf,
        /// What went wrong.
        message: String,
    },

    /// The headers device code needs are not installed beside the library.
    #[error("no NCCL headers (nccl.h) for the library {}. Searched:\n{}\nFix: install the headers of the same release (libnccl-dev, or the wheel's include/), or set CUDAJIT_NCCL_INCLUDE", library.display(), searched_list(searched))]
    HeadersNotFound {
        /// The loaded library.
        library: PathBuf,
        /// Every directory tried.
        searched: Vec<String>,
    },

    /// This release's layout of a versioned struct is not among the generated ones.
    #[error("NCCL {version}: the layout of {what} is unknown to this build of cudajit-nccl (generated for {known}). Fix: add the release with nccl-device/scripts/regenerate-bindings.sh {version}, or use one of those releases")]
    UnknownLayout {
        /// The loaded release.
        version: NcclVersion,
        /// The struct, e.g. `ncclDevComm`.
        what: &'static str,
        /// The releases the generated layouts cover.
        known: String,
    },

    /// A requirement asks for something the loaded release has no field for.
    #[error("NCCL {version} has no `{field}` in ncclDevCommRequirements; it needs a newer NCCL (GIN and shared barriers arrived in 2.28.9)")]
    UnsupportedRequirement {
        /// The loaded release.
        version: NcclVersion,
        /// The C field.
        field: &'static str,
    },

    /// An NCCL call failed.
    #[error(transparent)]
    Call(#[from] NcclCallError),

    /// A (non-blocking) operation did not finish in time; the communicator was aborted.
    #[error("NCCL {operation} did not complete within {after:?} (a peer rank probably died or never started); the communicator was aborted. Raise the limit with CUDAJIT_NCCL_TIMEOUT_S if the job is just slow")]
    Timeout {
        /// What was waited for, e.g. `ncclCommInitRank`.
        operation: String,
        /// The limit.
        after: Duration,
    },

    /// The device API cannot be used with this communicator; `reason` says why.
    #[error("the NCCL device API is not usable here: {reason}")]
    DeviceApiUnavailable {
        /// The failed precondition.
        reason: String,
    },

    /// `ncclCommWindowRegister` returned success without producing a window (NCCL 2.28
    /// can do this when the memory or the communicator does not qualify).
    #[error("ncclCommWindowRegister returned success but no window for rank {rank} (NCCL {version}); the memory must come from ncclMemAlloc and be 4096-byte aligned, and every local rank must have peer access and cuMem")]
    WindowNotRegistered {
        /// The rank whose window is null.
        rank: i32,
        /// The loaded release.
        version: NcclVersion,
    },

    /// A CUDA driver call (through cudarc) failed.
    #[error("CUDA: {what}: {message}")]
    Cuda {
        /// What was being done.
        what: String,
        /// The driver's message.
        message: String,
    },

    /// The multi-process bootstrap failed (environment, TCP exchange, launcher).
    #[error("NCCL bootstrap: {0}")]
    Bootstrap(String),

    /// A caller-supplied value is out of range.
    #[error("invalid argument: {0}")]
    InvalidArgument(String),

    /// A variable the host layer reads (`CUDAJIT_NCCL_TIMEOUT_S`, ...) is set to a value
    /// cudajit cannot use.
    #[error(transparent)]
    Environment(#[from] cudajit_core::EnvVarError),
}

/// The crate's result type.
pub type Result<T, E = NcclError> = std::result::Result<T, E>;

impl NcclError {
    /// A [`NcclError::Cuda`] from a cudarc error.
    pub(crate) fn cuda(what: impl Into<String>, e: impl fmt::Display) -> Self {
        NcclError::Cuda {
            what: what.into(),
            message: e.to_string(),
        }
    }
}
