//! NCCL for cudajit programs (feature `nccl`): the host layer of `cudajit-nccl`
//! (communicators, symmetric buffers, device communicators) at this module's root,
//! [`device`], NCCL's device API for `#[kernel]`s (`cudajit-nccl-device`), [`sim`], the
//! same on simulated ranks (`cudajit-nccl-sim`), and with the `moe` feature [`moe`],
//! mixture-of-experts dispatch and combine (`cudajit-moe`).

pub use cudajit_nccl::*;

#[cfg(feature = "moe")]
pub use cudajit_moe as moe;
pub use cudajit_nccl_device as device;
pub use cudajit_nccl_sim as sim;
