//! Errors of the toolchain module.
//!
//! Every variant is `Clone` (no `io::Error` or `libloading::Error` inside, only
//! their text) so that a failed discovery or load can be cached in a `OnceLock`
//! and handed out again to every caller.

use std::fmt;
use std::path::PathBuf;

use super::component::{searched_list, Component};

/// A failed call into one of the NVIDIA libraries: which function, which
/// status code, and the status code's name from the library's header.
#[derive(Clone, PartialEq, Eq, cudajit_error_debug::ReadableDebug)]
pub struct CallError {
    /// The library the function belongs to.
    pub component: Component,
    /// The C function that failed, e.g. `nvvmCreateProgram`.
    pub function: &'static str,
    /// The raw status code it returned.
    pub code: i32,
    /// The status code's name, e.g. `NVVM_ERROR_INVALID_IR`.
    pub status: &'static str,
}

impl fmt::Display for CallError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} call {} failed with {} ({})",
            self.component, self.function, self.status, self.code
        )
    }
}

impl std::error::Error for CallError {}

/// Everything that can go wrong while finding, loading or driving the NVIDIA
/// compiler libraries.
#[derive(Clone, thiserror::Error, cudajit_error_debug::ReadableDebug)]
#[non_exhaustive]
pub enum ToolchainError {
    /// A component was not found anywhere; `searched` lists every place tried.
    #[error(
        "{component} not found. Searched, in order:\n{}\nFix: {fix}",
        searched_list(searched)
    )]
    NotFound {
        /// The component that is missing.
        component: Component,
        /// Every place that was tried, in search order.
        searched: Vec<String>,
        /// What the user should do about it.
        fix: String,
    },

    /// An explicit `CUDAJIT_*` override names a file that does not exist.
    /// This is an error rather than a fall-through: the user asked for that
    /// file, and silently using another one would hide the typo.
    #[error("{var}={} does not name an existing file ({component} override)", path.display())]
    BadOverride {
        /// The component the variable overrides.
        component: Component,
        /// The environment variable, e.g. `CUDAJIT_NVVM`.
        var: String,
        /// The path it holds.
        path: PathBuf,
    },

    /// `CUDAJIT_TOOLS_DIR` names no directory: a typo there would otherwise let another
    /// installation be used without a word.
    #[error(
        "CUDAJIT_TOOLS_DIR={} is not a directory: point it at the site-packages directory \
         holding NVIDIA's wheels (`pip install --target DIR`) or at a prefix holding one (a \
         virtual environment), or unset it",
        path.display()
    )]
    BadToolsDir {
        /// The path it holds.
        path: PathBuf,
    },

    /// `dlopen` of a located library failed.
    #[error("cannot load {component} from {}: {message}", path.display())]
    Load {
        /// The library.
        component: Component,
        /// The path (or bare soname) handed to the loader.
        path: PathBuf,
        /// The loader's message.
        message: String,
    },

    /// A loaded library lacks a required symbol (wrong file or too old).
    #[error("{component} at {} does not export `{symbol}` (tried: {})", path.display(), tried.join(", "))]
    MissingSymbol {
        /// The library.
        component: Component,
        /// Where it was loaded from.
        path: PathBuf,
        /// The symbol's plain name.
        symbol: String,
        /// Every spelling that was tried (versioned names first).
        tried: Vec<String>,
    },

    /// A library call failed outside compilation or linking proper.
    #[error(transparent)]
    Call(#[from] CallError),

    /// libNVVM rejected the program; carries its full log (boxed: the
    /// details are large and errors travel through many `Result`s).
    #[error(transparent)]
    NvvmCompile(Box<NvvmCompileFailure>),

    /// nvJitLink failed to link; carries its error and info logs.
    #[error(transparent)]
    NvJitLinkFailed(Box<LinkFailure>),

    /// An argument cannot be passed to C (for example it contains a NUL byte).
    #[error("invalid argument for {component}: {message}")]
    InvalidArgument {
        /// The library the argument was meant for.
        component: Component,
        /// What is wrong with it.
        message: String,
    },

    /// Reading a located file (libdevice) failed.
    #[error("cannot read {component} at {}: {message}", path.display())]
    Io {
        /// The component whose file could not be read.
        component: Component,
        /// The file.
        path: PathBuf,
        /// The I/O error's text.
        message: String,
    },

    /// Running `nvcc --version` failed or printed something unexpected.
    #[error("nvcc at {}: {message}", path.display())]
    Nvcc {
        /// The nvcc executable.
        path: PathBuf,
        /// What went wrong.
        message: String,
    },
}

/// A failed libNVVM compilation, with everything needed to diagnose it.
#[derive(Clone, PartialEq, Eq, thiserror::Error, cudajit_error_debug::ReadableDebug)]
#[error(
    "libNVVM failed to compile [{}] with options [{}]: {function} returned {status} ({code})\n--- libNVVM log ---\n{log}",
    modules.join(", "),
    options.join(" ")
)]
pub struct NvvmCompileFailure {
    /// The failing step, e.g. `nvvmCompileProgram`.
    pub function: &'static str,
    /// The status name, e.g. `NVVM_ERROR_COMPILATION`.
    pub status: &'static str,
    /// The raw status code.
    pub code: i32,
    /// libNVVM's program log, complete.
    pub log: String,
    /// The options the program was compiled with.
    pub options: Vec<String>,
    /// The names of the modules in the program.
    pub modules: Vec<String>,
}

/// A failed nvJitLink link, with everything needed to diagnose it.
#[derive(Clone, PartialEq, Eq, thiserror::Error, cudajit_error_debug::ReadableDebug)]
#[error(
    "nvJitLink failed to link [{}] with options [{}]: {function} returned {status} ({code})\n--- nvJitLink error log ---\n{error_log}\n--- nvJitLink info log ---\n{info_log}",
    inputs.join(", "),
    options.join(" ")
)]
pub struct LinkFailure {
    /// The failing step, e.g. `nvJitLinkComplete`.
    pub function: &'static str,
    /// The status name, e.g. `NVJITLINK_ERROR_PTX_COMPILE`.
    pub status: &'static str,
    /// The raw status code.
    pub code: i32,
    /// nvJitLink's error log.
    pub error_log: String,
    /// nvJitLink's info log.
    pub info_log: String,
    /// Each input as `name (kind)`, in the order added.
    pub inputs: Vec<String>,
    /// The options the link was created with.
    pub options: Vec<String>,
}

/// How nvJitLink (through ptxas) names a call that no input defines:
/// `ptxas fatal   : Unresolved extern function '<symbol>'`, with the status
/// `NVJITLINK_ERROR_PTX_COMPILE`, which covers every PTX failure.
const UNRESOLVED_MARKER: &str = "Unresolved extern function '";

impl LinkFailure {
    /// The symbols the link left unresolved, each once, in order of appearance.
    pub fn unresolved_symbols(&self) -> Vec<String> {
        unresolved_symbols(&self.error_log)
    }
}

/// The unresolved symbols named in an nvJitLink error log, each once, in order of
/// appearance.
pub fn unresolved_symbols(log: &str) -> Vec<String> {
    let mut found: Vec<String> = Vec::new();
    for line in log.lines() {
        let Some((_, rest)) = line.split_once(UNRESOLVED_MARKER) else {
            continue;
        };
        let Some((symbol, _)) = rest.split_once('\'') else {
            continue;
        };
        if !found.iter().any(|s| s == symbol) {
            found.push(symbol.to_owned());
        }
    }
    found
}

/// Convenience alias used throughout the module.
pub type Result<T, E = ToolchainError> = std::result::Result<T, E>;
