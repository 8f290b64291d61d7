//! NVRTC: the CUDA C++ runtime compiler (loading and version for now).
//!
//! `sys` is the raw symbol table, `result` turns status codes into
//! `Result`s, `safe` holds the types re-exported here.

pub mod result;
pub mod safe;
pub mod sys;

pub use safe::Nvrtc;
