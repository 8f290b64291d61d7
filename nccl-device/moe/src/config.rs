//! What a group of experts is (experts, tokens per rank, hidden size, mode, the grid its
//! kernels run on) and the errors a mismatch with it gives.

use super::shape::{MAX_LOCAL_EXPERTS, MAX_RANKS, MAX_THREADS, MAX_TOP_K};
use cudajit::LaunchConfig;

/// How dispatch lays out what it receives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum MoeMode {
    /// Decode-sized batches: every token written straight into its experts' slots on the
    /// ranks that own them, received expert-major, `[local experts × ranks × max tokens ×
    /// hidden]`, so a rank's slots exist before it knows how many tokens come.
    LowLatency,
    /// Training and prefill batches: a layout pass counts and places the tokens first,
    /// then each token goes once to each rank holding one of its experts, received flat,
    /// `[received tokens × hidden]`, with its routing (top-k indices local to the rank,
    /// and weights).
    HighThroughput,
}

/// How dispatch sends the tokens.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum DispatchFormat {
    /// As they are.
    Bf16,
    /// FP8 e4m3 bytes with an `f32` scale per token and 128 channels
    /// ([`super::fp8`]): half the bytes on the wire.
    Fp8E4m3,
}

/// The shape of a [`super::MoeGroup`]: its limits, checked at every launch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MoeConfig {
    /// Experts over all ranks; a multiple of the ranks (expert `e` lives on rank
    /// `e / (experts / ranks)`).
    pub experts: usize,
    /// The most tokens a rank dispatches at once: the receive buffers hold this many per
    /// (expert, source rank).
    pub max_tokens_per_rank: usize,
    /// Elements (`bf16`) per token.
    pub hidden: usize,
    pub mode: MoeMode,
    /// What dispatch delivers: the tokens (`Bf16`) or FP8 with scales (`Fp8E4m3`).
    pub dispatch_format: DispatchFormat,
    /// CTAs of every kernel, each with an LSA barrier (barrier index = CTA): the device
    /// communicator needs this many ([`MoeConfig::requirements`]).
    pub ctas: u32,
    /// Threads per CTA: a multiple of 32, at most 1024.
    pub threads: u32,
}

impl MoeConfig {
    /// A low-latency group with the grid of one CTA of 256 threads per expert, up to 132
    /// CTAs (an H200's SMs).
    pub fn low_latency(experts: usize, max_tokens_per_rank: usize, hidden: usize) -> Self {
        MoeConfig {
            experts,
            max_tokens_per_rank,
            hidden,
            mode: MoeMode::LowLatency,
            dispatch_format: DispatchFormat::Bf16,
            ctas: experts.clamp(1, 132) as u32,
            threads: 256,
        }
    }

    /// A high-throughput group with the grid of 132 CTAs of 256 threads (an H200's SMs).
    pub fn high_throughput(experts: usize, max_tokens_per_rank: usize, hidden: usize) -> Self {
        MoeConfig {
            mode: MoeMode::HighThroughput,
            ctas: 132,
            ..MoeConfig::low_latency(experts, max_tokens_per_rank, hidden)
        }
    }

    /// The grid of every kernel.
    pub fn launch_config(&self) -> LaunchConfig {
        LaunchConfig::new(self.ctas, self.threads)
    }

    /// What the device communicator of the group's ranks needs: an LSA barrier per CTA.
    pub fn requirements(&self) -> cudajit_nccl::DevCommRequirements {
        cudajit_nccl_device::requirements_for(&self.launch_config())
    }

    /// The group's own limits, and those against `ranks` ranks: an error naming the
    /// dimension that does not fit.
    pub(crate) fn check(&self, ranks: usize) -> Result<(), MoeError> {
        let positive = [
            ("experts", self.experts),
            ("max_tokens_per_rank", self.max_tokens_per_rank),
            ("hidden", self.hidden),
            ("ctas", self.ctas as usize),
        ];
        for (dimension, value) in positive {
            if value == 0 {
                return Err(MoeError::mismatch(dimension, 0, "it must be at least 1"));
            }
        }
        if !self.experts.is_multiple_of(ranks) {
            return Err(MoeError::mismatch(
                "experts",
                self.experts,
                format!(
                    "it must be a multiple of the ranks ({ranks}): each rank holds experts / ranks"
                ),
            ));
        }
        if !self.threads.is_multiple_of(32)
            || self.threads == 0
            || self.threads as usize > MAX_THREADS
        {
            return Err(MoeError::mismatch(
                "threads",
                self.threads as usize,
                format!("it must be a multiple of 32 from 32 to {MAX_THREADS} (the kernels work in whole warps)"),
            ));
        }
        if self.mode == MoeMode::HighThroughput {
            if ranks > MAX_RANKS {
                return Err(MoeError::mismatch(
                    "ranks",
                    ranks,
                    format!("a high-throughput group spans at most {MAX_RANKS} (its kernels keep a table per rank in shared memory)"),
                ));
            }
            if self.experts / ranks > MAX_LOCAL_EXPERTS {
                return Err(MoeError::mismatch(
                    "experts",
                    self.experts,
                    format!("a high-throughput group holds at most {MAX_LOCAL_EXPERTS} experts per rank (its layout counts them in shared memory)"),
                ));
            }
        }
        // Offsets into the receive window are byte offsets in `usize`.
        let received = self
            .experts
            .checked_mul(self.max_tokens_per_rank)
            .and_then(|n| n.checked_mul(self.hidden))
            .and_then(|n| n.checked_mul(2));
        if received.is_none() {
            return Err(MoeError::mismatch(
                "hidden",
                self.hidden,
                "experts × max_tokens_per_rank × hidden × 2 bytes overflows the address space",
            ));
        }
        Ok(())
    }
}

/// The top-k of a routing: 1 to [`MAX_TOP_K`].
pub(crate) fn check_top_k(top_k: usize) -> Result<(), MoeError> {
    if top_k == 0 || top_k > MAX_TOP_K {
        return Err(MoeError::mismatch(
            "top_k",
            top_k,
            format!("tokens go to 1 to {MAX_TOP_K} experts each"),
        ));
    }
    Ok(())
}

/// What went wrong in a mixture-of-experts group.
#[derive(thiserror::Error, cudajit_error_debug::ReadableDebug)]
#[non_exhaustive]
pub enum MoeError {
    /// A dimension does not fit the group, the handle, the ranks or the device
    /// communicator; nothing was launched.
    #[error("{dimension} is {value}, but {requirement}")]
    Mismatch {
        /// What was given wrong (`experts`, `tokens`, `top_k`, `topk_idx`, ...).
        dimension: &'static str,
        value: usize,
        /// What it must be, and where the limit comes from.
        requirement: String,
    },
    /// A launch before the handle has a routing for this rank.
    #[error("local rank {local_rank} has no routing: set one first (MoeHandle::set_routing or set_device_routing)")]
    NoRouting { local_rank: usize },
    /// An operation of the other mode (the staged dispatch is the low-latency mode's, the
    /// layout pass and the backward combine the high-throughput mode's).
    #[error("{operation} is not an operation of a {mode:?} group")]
    WrongMode {
        operation: &'static str,
        mode: MoeMode,
    },
    /// A high-throughput dispatch or combine before the layout pass of the current
    /// routing.
    #[error("local rank {local_rank} has no layout of its routing: launch MoeGroup::layout first")]
    NoLayout { local_rank: usize },
    /// A buffer of the other dispatch format (the received tokens are `bf16` or FP8).
    #[error("{buffer} is not a buffer of a group whose dispatch format is {format:?}")]
    WrongFormat {
        buffer: &'static str,
        format: DispatchFormat,
    },
    /// A launch or a copy failed.
    #[error(transparent)]
    Launch(#[from] cudajit::Error),
    /// NCCL refused an allocation or a copy.
    #[error(transparent)]
    Nccl(#[from] cudajit_nccl::NcclError),
}

impl MoeError {
    pub(crate) fn mismatch(
        dimension: &'static str,
        value: usize,
        requirement: impl Into<String>,
    ) -> Self {
        MoeError::Mismatch {
            dimension,
            value,
            requirement: requirement.into(),
        }
    }

    /// The dimension a [`MoeError::Mismatch`] names.
    pub fn dimension(&self) -> Option<&'static str> {
        match self {
            MoeError::Mismatch { dimension, .. } => Some(dimension),
            _ => None,
        }
    }
}
