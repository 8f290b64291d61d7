//! The language's one entry point for back ends: a captured kernel and its specialisation
//! become a validated `(Module, KernelInfo)`.
//!
//! Both back ends (the NVVM writer in `cudajit-codegen`, the CPU simulator in `cudajit-sim`)
//! start from [`CapturedKernel::lower`], so parsing the captured syntax, collecting the
//! device functions and structs the kernel reaches, lowering and validating happen in one
//! place, with one error type.

use crate::ir::Module;
use crate::lower::{self, LowerError, ReachableItems, Specialization};
use crate::valid::{self, KernelInfo, ValidationError};
use crate::CapturedKernel;

/// Why a captured kernel could not become validated IR. Every variant names the kernel.
///
/// These are the messages the compile errors of the back ends show unchanged.
#[derive(thiserror::Error, cudajit_error_debug::ReadableDebug)]
#[non_exhaustive]
pub enum LowerCapturedError {
    /// The captured syntax of the kernel or of a device function it reaches does not
    /// parse: the program was built by another version of the macros.
    #[error("kernel `{kernel}`: the captured form is unreadable ({source}); rebuild the program")]
    Captured {
        /// The function whose captured form is unreadable (a device function's own name).
        kernel: String,
        source: serde_json::Error,
    },
    /// Lowering refused the kernel or a device function it reaches.
    #[error("kernel `{kernel}` ({file}:{source})")]
    Lower {
        kernel: String,
        /// The file of the function lowering refused (the span is in `source`).
        file: String,
        source: LowerError,
    },
    /// The lowered IR failed validation: a bug of lowering, never of the user's kernel.
    #[error("kernel `{kernel}`: {source}")]
    Invalid {
        kernel: String,
        source: ValidationError,
    },
}

impl CapturedKernel {
    /// The IR of this kernel's specialisation `spec`, with the [`KernelInfo`] proof that it
    /// is valid: what every back end takes.
    pub fn lower(
        &'static self,
        spec: &Specialization,
    ) -> Result<(Module, KernelInfo), LowerCapturedError> {
        let kernel = || self.name.to_owned();
        let mut source = self
            .parse()
            .map_err(|source| LowerCapturedError::Captured {
                kernel: kernel(),
                source,
            })?;
        let mut library = self.reachable_items()?;
        library.pass_on_tuple_results(&mut source);
        let module = lower::lower_kernel(&source, &library, spec).map_err(|source| {
            LowerCapturedError::Lower {
                kernel: kernel(),
                file: self.file.to_owned(),
                source,
            }
        })?;
        let info = valid::validate(&module).map_err(|source| LowerCapturedError::Invalid {
            kernel: kernel(),
            source,
        })?;
        Ok((module, info))
    }

    /// The device functions and struct layouts this kernel reaches, parsed.
    fn reachable_items(&'static self) -> Result<ReachableItems, LowerCapturedError> {
        let mut library = ReachableItems::new();
        for layout in self.reachable_structs() {
            library.add_struct(*layout);
        }
        // The first reachable function is the kernel itself.
        for function in self.reachable().into_iter().skip(1) {
            let source = function
                .parse()
                .map_err(|source| LowerCapturedError::Captured {
                    kernel: function.name.to_owned(),
                    source,
                })?;
            library
                .add(source)
                .map_err(|source| LowerCapturedError::Lower {
                    kernel: self.name.to_owned(),
                    file: function.file.to_owned(),
                    source,
                })?;
        }
        Ok(library)
    }
}
