//! What can go wrong planning or running a reshard.

/// What went wrong describing, planning or running a reshard. Every mismatch is found
/// before anything is launched.
#[derive(thiserror::Error, cudajit_error_debug::ReadableDebug)]
#[non_exhaustive]
pub enum M2nError {
    /// A dimension does not fit the mesh, the tensor, the plan, the ranks or the device
    /// communicator; nothing was launched.
    #[error("{dimension} is {value}, but {requirement}")]
    Mismatch {
        /// What was given wrong (`mesh ranks`, `placements`, `global shape`, `dtype`, ...).
        dimension: &'static str,
        value: usize,
        /// What it must be, and where the limit comes from.
        requirement: String,
    },
    /// The plan does not cover every element of a destination shard exactly once (a bug
    /// of the planner, reported instead of moving wrong data).
    #[error("the plan covers {covered} of destination rank {rank}'s {expected} elements {how}")]
    Coverage {
        rank: usize,
        expected: usize,
        covered: usize,
        how: &'static str,
    },
    /// A launch or a copy failed.
    #[error(transparent)]
    Launch(#[from] cudajit::Error),
    /// NCCL refused an allocation or a copy.
    #[error(transparent)]
    Nccl(#[from] cudajit_nccl::NcclError),
}

impl M2nError {
    pub(crate) fn mismatch(
        dimension: &'static str,
        value: usize,
        requirement: impl Into<String>,
    ) -> Self {
        M2nError::Mismatch {
            dimension,
            value,
            requirement: requirement.into(),
        }
    }

    /// The dimension a [`M2nError::Mismatch`] names.
    pub fn dimension(&self) -> Option<&'static str> {
        match self {
            M2nError::Mismatch { dimension, .. } => Some(dimension),
            _ => None,
        }
    }
}
