//! The ranks a group of experts spans, on GPUs or simulated, and the symmetric buffers
//! they share: [`cudajit_nccl_sim::LsaRanks`] (shared with the M-to-N reshard) under the
//! group's name, and its errors as the group's.

use super::config::MoeError;

pub use cudajit_nccl_sim::SymmetricTensor;

/// The ranks of this process that take part, and how they reach each other: GPUs (a
/// communicator and its device communicator, with an LSA barrier per CTA of the group's
/// kernels, `MoeConfig::requirements`) or every rank of a simulated world of one node.
pub type MoeRanks<'a> = cudajit_nccl_sim::LsaRanks<'a>;

// Its errors as the group's, variant by variant.
cudajit_nccl_sim::from_ranks_error!(MoeError);
