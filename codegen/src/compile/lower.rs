//! A captured kernel's specialisation, lowered to validated IR by the language
//! ([`CapturedKernel::lower`]), written as NVVM IR.

use cudajit_core::lower::Specialization;
use cudajit_core::CapturedKernel;

use super::{CompileError, CompileOptions};
use crate::nvvm::{self, NvvmIr};

/// The NVVM IR text of a captured kernel's specialisation.
pub fn nvvm_ir(
    captured: &'static CapturedKernel,
    spec: &Specialization,
) -> Result<String, CompileError> {
    nvvm_ir_with(captured, spec, &CompileOptions::default())
}

/// The NVVM IR text of a captured kernel's specialisation under `options`.
pub fn nvvm_ir_with(
    captured: &'static CapturedKernel,
    spec: &Specialization,
    options: &CompileOptions,
) -> Result<String, CompileError> {
    let entry = cudajit_core::lower::entry_symbol(captured.name, spec);
    write_nvvm(captured, spec, options, &entry).map(|ir| ir.text)
}

/// The NVVM IR of a captured kernel's specialisation under `options`, with what it
/// declares; `entry` is the kernel's symbol (computed once per compile by the caller).
pub(crate) fn write_nvvm(
    captured: &'static CapturedKernel,
    spec: &Specialization,
    options: &CompileOptions,
    entry: &str,
) -> Result<NvvmIr, CompileError> {
    let (module, info) = captured.lower(spec)?;
    crate::dump::ir(entry, &module);
    let write = options.write_options(captured.file);
    nvvm::write_module_with(&module, &info, &write).map_err(|source| CompileError::Write {
        kernel: captured.name.to_owned(),
        source,
    })
}
