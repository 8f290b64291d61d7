//! NCCL for cudajit programs (feature `nccl`): the host layer of `cudajit-nccl`
//! (communicators, symmetric buffers, device communicators) at this module's root,
//! [`device`], NCCL's device API for `#[kernel]`s (`cudajit-nccl-device`), [`sim`], the
//! same on simulated ranks (`cudajit-nccl-sim`), with the `moe` feature [`moe`],
//! mixture-of-experts dispatch and combine (`cudajit-moe`), and with the `m2n` feature
//! [`m2n`], M-to-N resharding of distributed tensors (`cudajit-m2n`).

pub use cudajit_nccl::*;

#[cfg(feature = "m2n")]
pub use cudajit_m2n as m2n;
#[cfg(feature = "moe")]
pub use cudajit_moe as moe;
pub use cudajit_nccl_device as device;
pub use cudajit_nccl_sim as sim;
