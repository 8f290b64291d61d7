//! The tensor cores from cudajit kernels, as `#[device]` functions over `ptx!`, written in
//! the kernel language: [`tensor`] (re-exported by the facade as `cudajit::tensor`).
//!
//! The modules live under `src/tensor/`, the path they had in the facade, so that the
//! source locations the simulator and the NVVM back end report (`src/tensor/mbarrier.rs:..`)
//! stay what programs and tests match.

// The macros' expansions name the runtime `::cudajit` (what the facade re-exports), so this
// crate, built on the runtime without the facade, names it so too.
extern crate cudajit_runtime as cudajit;

pub mod tensor;
