//! NCCL for cudajit programs: the host layer of `cudajit-nccl` (communicators, symmetric
//! buffers, device communicators) re-exported, and [`device`], NCCL's device API for
//! `#[kernel]`s.
//!
//! The device API lives here rather than in `cudajit-nccl` because it is written with
//! cudajit's own attributes (`#[extern_device]`), whose expansions name the `cudajit`
//! crate, which itself depends on `cudajit-nccl`.

pub use cudajit_nccl::*;

pub mod device;
pub mod moe;
pub mod sim;
#[cfg(test)]
mod symbol_spellings;
