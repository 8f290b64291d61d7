//! Which functions a failed link left unresolved, read from nvJitLink's error log.
//!
//! nvJitLink reports a call that no input defines through ptxas, as
//! `ptxas fatal   : Unresolved extern function '<symbol>'`, and the status alone
//! (`NVJITLINK_ERROR_PTX_COMPILE`) covers every PTX failure. The log names the symbol
//! but not the NCCL function or library, so the provider maps the name back through the
//! symbol tables and names the library itself.

use super::symbols::{BRIDGE_2_28, LTOIR_2_32, SHIM_GIN};

/// The unresolved symbols named in `log`, each once, in order of appearance (the parser
/// lives with nvJitLink's bindings in the codegen crate).
pub use cudajit_codegen::toolchain::unresolved_symbols;

/// Our name for `symbol` when some generation's table maps it.
pub fn function_of(symbol: &str) -> Option<&'static str> {
    [&LTOIR_2_32, &BRIDGE_2_28, &SHIM_GIN]
        .iter()
        .find_map(|t| t.by_symbol(symbol))
        .map(|e| e.function.name())
}
