//! The ranks a group of experts spans, on GPUs or simulated, and the symmetric buffers
//! they share: [`cudajit_nccl_sim::LsaRanks`] (shared with the M-to-N reshard) under the
//! group's name, and its errors as the group's.

use super::config::MoeError;
use cudajit_nccl_sim::RanksError;

pub use cudajit_nccl_sim::SymmetricTensor;

/// The ranks of this process that take part, and how they reach each other: GPUs (a
/// communicator and its device communicator, with an LSA barrier per CTA of the group's
/// kernels, `MoeConfig::requirements`) or every rank of a simulated world of one node.
pub type MoeRanks<'a> = cudajit_nccl_sim::LsaRanks<'a>;

impl From<RanksError> for MoeError {
    fn from(error: RanksError) -> Self {
        match error {
            RanksError::Mismatch {
                dimension,
                value,
                requirement,
            } => MoeError::Mismatch {
                dimension,
                value,
                requirement,
            },
            RanksError::Launch(e) => MoeError::Launch(e),
            RanksError::Nccl(e) => MoeError::Nccl(e),
            // A later kind of ranks error keeps its message.
            other => MoeError::Launch(cudajit::Error::Backend(other.to_string())),
        }
    }
}
