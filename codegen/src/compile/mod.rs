//! The JIT pipeline, without the driver: captured kernel → IR → NVVM IR → LTO-IR (libNVVM)
//! → cubin (nvJitLink), with the in-memory and on-disk caches in front.
//!
//! - [`options`]: what changes the generated code, as each compiler is told it;
//! - [`error`]: why a kernel could not be compiled;
//! - [`lower`]: the language step (captured kernel → validated IR) and the NVVM IR writer;
//! - [`cached`]: the memory and disk caches in front of a compile;
//! - [`link`]: NVVM IR → LTO-IR → cubin, with libdevice and the device libraries;
//! - [`missing_externs`]: a failed link's unresolved symbols, named for the user;
//! - [`arch_target`]: `sm_90` or `sm_90a` for a kernel, and instructions that need the
//!   latter, named for the user.
//!
//! - [`key`]: a compile's cache key and launch identity, composed from [`crate::cache::key`]'s
//!   builder, the options and the compiler's identity (the cache stays below the compile).

pub mod arch_target;
pub mod cached;
pub mod error;
pub mod key;
pub mod link;
pub mod lower;
pub mod missing_externs;
pub mod options;

pub use arch_target::kernel_target;
pub use cached::{compile_kernel, CompileReport, CompiledKernel, CubinOrigin};
pub use error::{CompileError, MissingExtern};
pub use link::{compile_nvvm_ir, link_nvvm_ir, linked_ptx};
pub use lower::{nvvm_ir, nvvm_ir_with};
pub use options::CompileOptions;

pub use crate::cache::key::library_identity;
pub use key::{cache_key, cubin_key, launch_identity, CUBIN_KEY_FORMAT, LAUNCH_IDENTITY_FORMAT};
