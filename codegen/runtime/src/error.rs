//! The facade's error type.

use cudajit_codegen::compile::CompileError;
use cudajit_core::LowerCapturedError;
use cudarc::driver::DriverError;

use crate::launch::LaunchConfigError;

/// Everything a launch, a compile or a context request can fail with.
#[derive(thiserror::Error, cudajit_error_debug::ReadableDebug)]
#[non_exhaustive]
pub enum Error {
    /// No usable GPU: no CUDA driver, or no device.
    #[error("no GPU found: {0}")]
    NoGpu(String),
    /// The kernel could not be compiled.
    #[error(transparent)]
    Compile(#[from] CompileError),
    /// The launch configuration is invalid for this kernel or device; nothing was launched.
    #[error("kernel `{kernel}`: {source}")]
    LaunchConfig {
        kernel: String,
        source: LaunchConfigError,
    },
    /// A kernel with more generic and `#[comptime]` parameters than cudajit supports.
    #[error("kernel `{kernel}` has more than 16 generic and #[comptime] parameters")]
    TooManyParameters { kernel: String },
    /// The driver refused to load the compiled module.
    #[error("kernel `{kernel}`: the CUDA driver could not load its cubin ({source}); the driver may be older than the toolchain that built it")]
    Load { kernel: String, source: DriverError },
    /// A CUDA driver call outside a kernel's launch failed (allocation, copy, ...); lets
    /// programs use `?` on cudarc calls.
    #[error("CUDA driver call failed: {0}")]
    Cuda(#[from] DriverError),
    /// A kernel run on the CPU simulator did something wrong (an index out of bounds, a
    /// failed assertion, a barrier not every thread reaches, a data race on shared
    /// memory...), or uses what the simulator cannot run.
    #[error("CPU simulator: {0}")]
    Simulator(#[from] cudajit_sim::SimError),
    /// A stream and a buffer of different backends.
    #[error("{0}")]
    Backend(String),
    /// An environment variable cudajit reads is set to a value it cannot use
    /// (`CUDAJIT_BACKEND=cpu2`, ...).
    #[error(transparent)]
    Environment(#[from] cudajit_core::EnvVarError),
    /// [`crate::log::init`] installed nothing.
    #[error("cudajit::log::init: {0}")]
    LogInit(#[from] cudajit_codegen::log::InitError),
    /// A driver call of a kernel's load or launch failed.
    #[error("kernel `{kernel}`: {what} failed: {source}")]
    Driver {
        kernel: String,
        what: &'static str,
        source: DriverError,
    },
    /// An argument's launch check refused the launch before anything was enqueued: for a
    /// communicating kernel (one taking a `cudajit::nccl::device::DevComm`), a device
    /// communicator with fewer LSA barriers than the grid has CTAs, or ranks of the
    /// communicator that do not agree on the kernel they launch.
    #[error("kernel `{kernel}`: {message}")]
    Collective { kernel: String, message: String },
    /// A tensor map could not be encoded (its layout, or the buffer it describes); lets
    /// programs use `?` on `TensorMap::encode`.
    #[error(transparent)]
    TensorMap(#[from] crate::tensor_map::TensorMapError),
}

/// A kernel that does not lower is a compile error on either back end (the simulator lowers
/// through the same [`cudajit_core::CapturedKernel::lower`] as the GPU path), so programs
/// match one variant, [`Error::Compile`], whichever back end they run.
impl From<LowerCapturedError> for Error {
    fn from(error: LowerCapturedError) -> Self {
        Error::Compile(CompileError::from(error))
    }
}
