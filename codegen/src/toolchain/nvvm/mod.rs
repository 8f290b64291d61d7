//! libNVVM: NVVM IR (LLVM 7 dialect) to PTX or LTO-IR.
//!
//! `sys` is the raw symbol table, `result` turns status codes into
//! `Result`s, `safe` holds the RAII types re-exported here.

pub mod result;
pub mod safe;
pub mod sys;

pub use safe::{Nvvm, NvvmModule, NvvmOutput};
