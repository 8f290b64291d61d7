//! nvJitLink: links LTO-IR, PTX and cubins into a cubin.
//!
//! `sys` is the raw symbol table, `result` turns status codes into
//! `Result`s, `safe` holds the RAII types re-exported here.

pub mod result;
pub mod safe;
pub mod sys;

pub use safe::{InputKind, LinkInput, Linked, NvJitLink};
