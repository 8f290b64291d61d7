//! NCCL host layer and NCCL device API for cudajit kernels.
//!
//! Planned; see this crate's README for the design. Nothing is exported yet.
