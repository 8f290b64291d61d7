//! The kernel language of cudajit, independent of syntax and of NVVM.
//!
//! A `#[kernel]` function goes through these stages, each in its own module:
//!
//! 1. [`ast`]: the kernel body as the macro captured it: plain data with the user's spans,
//!    serialised into the program at compile time.
//! 2. [`lower`]: type inference (the same types rustc gave the body) and lowering into the
//!    typed [`ir`], once per specialisation.
//! 3. [`valid`]: a validator that checks the IR and returns a [`valid::KernelInfo`], the
//!    proof (types of every expression) that back ends rely on.
//!
//! [`frontend`] chains the stages into the one entry point back ends call,
//! [`CapturedKernel::lower`]: a captured kernel and its specialisation in, a validated
//! `(Module, KernelInfo)` out.
//!
//! [`device`] holds the host-side declarations of the device intrinsics, so that kernel
//! bodies stay valid Rust that rustc type-checks.

pub mod abi;
pub mod ast;
mod captured;
pub mod constant;
pub mod device;
pub mod env;
pub mod external;
#[cfg(feature = "lower")]
pub mod frontend;
pub mod intrinsics;
pub mod ir;
pub mod layout;
#[cfg(feature = "lower")]
pub mod lower;
pub mod math;
pub mod methods;
pub mod ptx_template;
pub mod span;
pub mod tensor_op;
pub mod types;
#[cfg(feature = "lower")]
pub mod valid;

pub use captured::{CapturedFunction, CapturedKernel, DeviceFunction, SpecificArch};
pub use constant::{ConstantValue, KernelConstant};
pub use env::{EnvVar, EnvVarError};
#[cfg(feature = "lower")]
pub use frontend::LowerCapturedError;
pub use span::Span;
pub use types::Scalar;

/// The distributed slices of `#[device]` impl blocks (`methods::DEVICE_IMPL_BLOCKS`), for the
/// macros' generated code.
#[doc(hidden)]
pub use linkme;

/// A fingerprint of this crate's sources (`build.rs`): the code generator's cache key holds
/// it, so a build whose lowering differs never reuses another build's cubins.
pub const SOURCE_FINGERPRINT: &str = env!("CUDAJIT_CORE_SOURCE_FINGERPRINT");
