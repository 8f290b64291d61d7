//! cudajit's back end: from the validated kernel IR to a cubin, without the driver.
//!
//! - [`nvvm`]: NVVM IR text writer (LLVM 7.0.1 dialect).
//! - [`toolchain`]: discovery and loading of libNVVM, libdevice, nvJitLink, NVRTC, nvcc.
//! - [`compile`]: NVVM IR → LTO-IR → cubin, behind the caches.
//! - [`cache`]: cache keys and the on-disk store.
//! - [`dump`], [`log`], [`progress`]: `CUDAJIT_DUMP`, `CUDAJIT_LOG` and long-step logging.
//! - [`device_library`]: reading the device libraries kernels link (files, providers).
//! - [`cubin`]: checks of linker output.
//! - [`target`]: the GPU architecture value.
pub mod cache;
pub mod compile;
pub mod cubin;
pub mod device_library;
pub mod dump;
pub mod log;
pub mod nvvm;
pub mod progress;
mod sync;
pub mod target;
pub mod toolchain;

pub use target::{Arch, ArchFeatures};
