//! The dimensions every kernel takes, and the limits of the kernels' shared tables.

use cudajit::DeviceCopy;

/// The most experts a token may be routed to (the shared tables of a token's sources).
pub const MAX_TOP_K: usize = 8;

/// The most threads per CTA the kernels take (the dispatch's shared list of a chunk's
/// tokens has one entry per thread).
pub const MAX_THREADS: usize = 1024;

/// The most ranks of a high-throughput group (its kernels keep a table of every rank's
/// offset in shared memory); NVLink domains have at most 72 GPUs.
pub const MAX_RANKS: usize = 72;

/// The most experts per rank of a high-throughput group (its layout counts each local
/// expert's tokens in shared memory).
pub const MAX_LOCAL_EXPERTS: usize = 1024;

/// The dimensions of one launch, passed by value.
#[derive(Clone, Copy, Debug, PartialEq, Eq, DeviceCopy)]
#[repr(C)]
pub struct MoeShape {
    /// This rank's tokens (at most `max_tokens`).
    pub tokens: u64,
    /// Experts per token (1 to [`MAX_TOP_K`]).
    pub top_k: u64,
    /// Elements per token.
    pub hidden: u64,
    /// Tokens per rank the buffers hold.
    pub max_tokens: u64,
    /// Experts in all (a multiple of the ranks).
    pub experts: u64,
}
