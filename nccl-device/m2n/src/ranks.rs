//! The ranks a reshard spans, on GPUs or simulated, and the symmetric buffers they share:
//! [`cudajit_nccl_sim::LsaRanks`] (shared with the mixture-of-experts group) under the
//! reshard's name, and its errors as the reshard's.

use super::error::M2nError;

pub use cudajit_nccl_sim::SymmetricTensor;

/// The ranks of this process that take part, and how they reach each other: GPUs (a
/// communicator and its device communicator, with an LSA barrier per CTA of the reshard
/// kernels, `M2nConfig::requirements`) or every rank of a simulated world of one node.
/// [`alloc`](cudajit_nccl_sim::LsaRanks::alloc) makes the window a caller registers around
/// its source tensor for
/// [`ReshardHandle::reshard_with_window`](super::ReshardHandle::reshard_with_window).
pub type M2nRanks<'a> = cudajit_nccl_sim::LsaRanks<'a>;

// Its errors as the reshard's, variant by variant.
cudajit_nccl_sim::from_ranks_error!(M2nError);
