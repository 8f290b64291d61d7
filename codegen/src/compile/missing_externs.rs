//! Naming what a failed link could not resolve: each unresolved symbol mapped back to the
//! `#[extern_device]` function bound to it and the device library that should define it.

use cudajit_core::external::DeviceLibrary;
use cudajit_core::CapturedKernel;

use super::{CompileError, MissingExtern};
use crate::device_library::LibraryParts;
use crate::nvvm::NvvmIr;
use crate::target::Arch;
use crate::toolchain::ToolchainError;

/// A link failure that names unresolved symbols, mapped back to the `#[extern_device]`
/// functions `ir` calls and the device libraries of `captured` (linked for `arch`).
pub(crate) fn name_missing_externs(
    error: CompileError,
    captured: &'static CapturedKernel,
    ir: &NvvmIr,
    arch: Arch,
) -> CompileError {
    let CompileError::Toolchain {
        kernel,
        source: ToolchainError::NvJitLinkFailed(failure),
    } = &error
    else {
        return error;
    };
    let unresolved = failure.unresolved_symbols();
    if unresolved.is_empty() {
        return error;
    }
    let externs = extern_functions(captured, ir);
    let missing = unresolved
        .into_iter()
        .map(|symbol| {
            let bound = externs.iter().find(|(_, s, _)| *s == symbol);
            MissingExtern {
                function: bound.map(|(function, _, _)| function.clone()),
                library: bound.map(|(_, _, library)| {
                    (library.name().to_owned(), library.origin_for(arch.number()))
                }),
                symbol,
            }
        })
        .collect();
    CompileError::MissingExtern {
        kernel: kernel.clone(),
        missing,
        log: failure.error_log.clone(),
    }
}

/// The `#[extern_device]` functions `captured` reaches that `ir` calls: (function, symbol,
/// library), in the order `captured` reaches them. The symbols are those the writer
/// declared, so nothing is parsed again.
fn extern_functions(
    captured: &'static CapturedKernel,
    ir: &NvvmIr,
) -> Vec<(String, String, &'static DeviceLibrary)> {
    let mut found = Vec::new();
    for function in captured.reachable() {
        let Some(library) = function.library else {
            continue;
        };
        for call in ir
            .externs
            .iter()
            .filter(|call| call.function == function.name)
        {
            found.push((call.function.clone(), call.symbol.clone(), library()));
        }
    }
    found
}
