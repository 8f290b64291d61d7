//! The language step of a compile: a captured kernel's specialisation lowered to
//! validated IR, then written as NVVM IR.

use cudajit_core::ir::Module;
use cudajit_core::lower::{Library, Specialization};
use cudajit_core::valid::KernelInfo;
use cudajit_core::CapturedKernel;

use super::{CompileError, CompileOptions};
use crate::nvvm::{self, NvvmIr};

/// The device functions `captured` reaches, parsed.
fn library_of(captured: &'static CapturedKernel) -> Result<Library, CompileError> {
    let mut library = Library::new();
    for layout in captured.reachable_structs() {
        library.add_struct(*layout);
    }
    for function in captured.reachable().into_iter().skip(1) {
        let source = function.parse().map_err(|source| CompileError::Captured {
            kernel: function.name.to_owned(),
            source,
        })?;
        library.add(source).map_err(|source| CompileError::Lower {
            kernel: captured.name.to_owned(),
            file: function.file.to_owned(),
            source,
        })?;
    }
    Ok(library)
}

/// The IR of a captured kernel's specialisation, validated.
pub fn lower_captured(
    captured: &'static CapturedKernel,
    spec: &Specialization,
) -> Result<(Module, KernelInfo), CompileError> {
    let kernel = || captured.name.to_owned();
    let source = captured.parse().map_err(|source| CompileError::Captured {
        kernel: kernel(),
        source,
    })?;
    let library = library_of(captured)?;
    let module = cudajit_core::lower::lower_kernel(&source, &library, spec).map_err(|source| {
        CompileError::Lower {
            kernel: kernel(),
            file: captured.file.to_owned(),
            source,
        }
    })?;
    let info = cudajit_core::valid::validate(&module).map_err(|source| CompileError::Invalid {
        kernel: kernel(),
        source,
    })?;
    Ok((module, info))
}

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
    let (module, info) = lower_captured(captured, spec)?;
    crate::dump::ir(entry, &module);
    let write = options.write_options(captured.file);
    nvvm::write_module_with(&module, &info, &write).map_err(|source| CompileError::Write {
        kernel: captured.name.to_owned(),
        source,
    })
}
