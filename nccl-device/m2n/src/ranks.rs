//! The ranks a reshard spans, on GPUs or simulated, and the symmetric buffers they share:
//! [`cudajit_nccl_sim::LsaRanks`] (shared with the mixture-of-experts group) under the
//! reshard's name, and its errors as the reshard's.

use super::error::M2nError;
use cudajit_nccl_sim::RanksError;

pub use cudajit_nccl_sim::SymmetricTensor;

/// The ranks of this process that take part, and how they reach each other: GPUs (a
/// communicator and its device communicator, with an LSA barrier per CTA of the reshard
/// kernels, `M2nConfig::requirements`) or every rank of a simulated world of one node.
/// [`alloc`](cudajit_nccl_sim::LsaRanks::alloc) makes the window a caller registers around
/// its source tensor for
/// [`ReshardHandle::reshard_with_window`](super::ReshardHandle::reshard_with_window).
pub type M2nRanks<'a> = cudajit_nccl_sim::LsaRanks<'a>;

impl From<RanksError> for M2nError {
    fn from(error: RanksError) -> Self {
        match error {
            RanksError::Mismatch {
                dimension,
                value,
                requirement,
            } => M2nError::Mismatch {
                dimension,
                value,
                requirement,
            },
            RanksError::Launch(e) => M2nError::Launch(e),
            RanksError::Nccl(e) => M2nError::Nccl(e),
            // A later kind of ranks error keeps its message.
            other => M2nError::Launch(cudajit::Error::Backend(other.to_string())),
        }
    }
}
