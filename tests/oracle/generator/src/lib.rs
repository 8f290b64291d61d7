//! Random kernel programs written as Rust source, for testing cudajit against rustc.
//!
//! A kernel is a Rust function that rustc type-checks; this crate makes rustc its
//! reference semantics too. [`generate::program`] builds a random program over the kernel
//! language (integers of every width with overflow, floats, casts, closures captured and
//! passed in any position to generic device functions, a struct with methods and
//! operators, arrays, `match`, loops with labels and `break` values, early returns, shared
//! memory and barriers, atomics), and [`render`] prints it twice from one text: as a
//! `#[kernel]` (which cudajit compiles and runs on its simulator or a GPU) and as a host
//! function (which rustc compiles; the harness iterates the threads, each barrier a phase
//! boundary). The `cudajit-oracle` crate compares the two bit for bit.

pub mod ast;
pub mod generate;
pub mod render;
pub mod rng;
pub mod types;

pub use ast::Program;
pub use generate::program;
