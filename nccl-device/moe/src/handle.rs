//! A routing of tokens to experts and what dispatch derives from it: the handle combine
//! needs to bring each token's outputs back.

use super::config::{MoeError, MoeMode};
use super::ranks::{MoeRanks, SymmetricTensor};

/// One routing: each rank's `topk_idx` and `topk_weights` (`[tokens × top-k]`, on the
/// device) and what dispatch derives from it, all in symmetric buffers sized for the
/// group's limits:
///
/// | buffer | mode | per rank |
/// | --- | --- | --- |
/// | [`topk_idx`](MoeHandle::topk_idx) | both | `[max tokens × top-k]` `i32`: the experts of each token, `-1` for none |
/// | [`topk_weights`](MoeHandle::topk_weights) | both | `[max tokens × top-k]` `f32` |
/// | [`expert_counts`](MoeHandle::expert_counts) | both | `[local experts]` `i32`: tokens each local expert received |
/// | [`received_counts`](MoeHandle::received_counts) | low-latency | `[local experts × ranks]` `i32`: tokens each rank sent each local expert |
/// | | high-throughput | `[ranks]` `i32`: tokens each rank sent this one |
/// | [`slots`](MoeHandle::slots) | low-latency | `[max tokens × top-k]` `i32`: the row of each (token, expert) in its expert's block |
/// | [`positions`](MoeHandle::positions) | high-throughput | `[max tokens × ranks]` `i32`: each token's place among this rank's tokens to each rank, `-1` if none |
/// | [`received_offsets`](MoeHandle::received_offsets) | high-throughput | `[ranks + 1]` `i32`: the first received row of each source, then the total |
/// | [`received_topk_idx`](MoeHandle::received_topk_idx) | high-throughput | `[ranks × max tokens × top-k]` `i32`: each received token's experts as local indices, `-1` for those elsewhere |
/// | [`received_topk_weights`](MoeHandle::received_topk_weights) | high-throughput | `[ranks × max tokens × top-k]` `f32`: their weights (the backward combine's input) |
/// | [`combined_weights`](MoeHandle::combined_weights) | high-throughput | `[max tokens × top-k]` `f32`: the backward combine's weights |
///
/// A token routed twice to one expert is sent once (and, in low-latency mode, weighted
/// twice by combine).
pub struct MoeHandle {
    group: u64,
    top_k: usize,
    max_tokens: usize,
    experts: usize,
    ranks: usize,
    /// Each local rank's tokens, once a routing is set.
    tokens: Vec<Option<usize>>,
    /// Whether each local rank's layout pass of its current routing was launched.
    laid_out: Vec<bool>,
    topk_idx: SymmetricTensor<i32>,
    topk_weights: SymmetricTensor<f32>,
    received_counts: SymmetricTensor<i32>,
    expert_counts: SymmetricTensor<i32>,
    layout: Layout,
}

/// What each mode's dispatch records.
enum Layout {
    LowLatency { slots: SymmetricTensor<i32> },
    HighThroughput(Box<HighThroughputLayout>),
}

/// What the high-throughput layout pass and dispatch record.
pub(crate) struct HighThroughputLayout {
    pub(crate) positions: SymmetricTensor<i32>,
    pub(crate) source_expert_counts: SymmetricTensor<i32>,
    pub(crate) received_offsets: SymmetricTensor<i32>,
    pub(crate) received_topk_idx: SymmetricTensor<i32>,
    pub(crate) received_topk_weights: SymmetricTensor<f32>,
    pub(crate) combined_weights: SymmetricTensor<f32>,
}

impl std::fmt::Debug for MoeHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MoeHandle")
            .field("top_k", &self.top_k)
            .field("tokens", &self.tokens)
            .finish_non_exhaustive()
    }
}

impl MoeHandle {
    pub(crate) fn new(
        group: u64,
        ranks: MoeRanks<'_>,
        mode: MoeMode,
        max_tokens: usize,
        experts: usize,
        top_k: usize,
    ) -> Result<Self, MoeError> {
        let pairs = max_tokens * top_k;
        let n = ranks.nranks();
        let per_rank = experts / n;
        let (received_counts, layout) = match mode {
            MoeMode::LowLatency => (
                ranks.alloc(per_rank * n)?,
                Layout::LowLatency {
                    slots: ranks.alloc(pairs)?,
                },
            ),
            MoeMode::HighThroughput => (
                ranks.alloc(n)?,
                Layout::HighThroughput(Box::new(HighThroughputLayout {
                    positions: ranks.alloc(max_tokens * n)?,
                    source_expert_counts: ranks.alloc(n * per_rank)?,
                    received_offsets: ranks.alloc(n + 1)?,
                    received_topk_idx: ranks.alloc(n * pairs)?,
                    received_topk_weights: ranks.alloc(n * pairs)?,
                    combined_weights: ranks.alloc(pairs)?,
                })),
            ),
        };
        Ok(MoeHandle {
            group,
            top_k,
            max_tokens,
            experts,
            ranks: n,
            tokens: vec![None; ranks.local_ranks()],
            laid_out: vec![false; ranks.local_ranks()],
            topk_idx: ranks.alloc(pairs)?,
            topk_weights: ranks.alloc(pairs)?,
            received_counts,
            expert_counts: ranks.alloc(per_rank)?,
            layout,
        })
    }

    /// The mode of the group the handle is for.
    pub fn mode(&self) -> MoeMode {
        match self.layout {
            Layout::LowLatency { .. } => MoeMode::LowLatency,
            Layout::HighThroughput(_) => MoeMode::HighThroughput,
        }
    }

    /// Whether local rank `i`'s layout pass of its current routing was launched.
    pub(crate) fn laid_out(&self, i: usize) -> bool {
        self.laid_out.get(i).copied().unwrap_or(false)
    }

    pub(crate) fn set_laid_out(&mut self, i: usize) {
        self.laid_out[i] = true;
    }

    /// Experts per token.
    pub fn top_k(&self) -> usize {
        self.top_k
    }

    /// Local rank `i`'s tokens, once its routing is set.
    pub fn tokens(&self, i: usize) -> Option<usize> {
        self.tokens.get(i).copied().flatten()
    }

    pub(crate) fn group(&self) -> u64 {
        self.group
    }

    /// Sets local rank `i`'s routing from the host: `topk_idx[t * top_k + j]` is token
    /// `t`'s `j`-th expert (`-1`: none), `topk_weights` its weight; the tokens are
    /// `topk_idx.len() / top_k`. Every length and index is checked.
    pub fn set_routing(
        &mut self,
        i: usize,
        topk_idx: &[i32],
        topk_weights: &[f32],
    ) -> Result<(), MoeError> {
        if !topk_idx.len().is_multiple_of(self.top_k) {
            return Err(MoeError::mismatch(
                "topk_idx length",
                topk_idx.len(),
                format!("it must be tokens × top_k ({})", self.top_k),
            ));
        }
        if topk_weights.len() != topk_idx.len() {
            return Err(MoeError::mismatch(
                "topk_weights length",
                topk_weights.len(),
                format!("it must equal topk_idx's ({})", topk_idx.len()),
            ));
        }
        if let Some(k) = topk_idx
            .iter()
            .position(|&e| e < -1 || e >= self.experts as i32)
        {
            return Err(MoeError::mismatch(
                "topk_idx",
                k,
                format!(
                    "entry {k} (token {}, expert {}) is {}: experts are 0 to {}, or -1 for none",
                    k / self.top_k,
                    k % self.top_k,
                    topk_idx[k],
                    self.experts - 1
                ),
            ));
        }
        let tokens = topk_idx.len() / self.top_k;
        self.check_tokens(i, tokens)?;
        self.topk_idx.copy_from_host(i, topk_idx)?;
        self.topk_weights.copy_from_host(i, topk_weights)?;
        self.tokens[i] = Some(tokens);
        self.laid_out[i] = false;
        Ok(())
    }

    /// Sets local rank `i`'s routing to `tokens` tokens whose experts and weights are
    /// already in [`MoeHandle::topk_idx`] and [`MoeHandle::topk_weights`] (written by a
    /// kernel: a router's top-k). Indices outside `0..experts` count as none.
    pub fn set_device_routing(&mut self, i: usize, tokens: usize) -> Result<(), MoeError> {
        self.check_tokens(i, tokens)?;
        self.tokens[i] = Some(tokens);
        self.laid_out[i] = false;
        Ok(())
    }

    fn check_tokens(&self, i: usize, tokens: usize) -> Result<(), MoeError> {
        if i >= self.tokens.len() {
            return Err(MoeError::mismatch(
                "local rank",
                i,
                format!("this process drives {} rank(s)", self.tokens.len()),
            ));
        }
        if tokens > self.max_tokens {
            return Err(MoeError::mismatch(
                "tokens",
                tokens,
                format!(
                    "the group holds at most {} per rank (MoeConfig::max_tokens_per_rank)",
                    self.max_tokens
                ),
            ));
        }
        Ok(())
    }

    /// Each token's experts, `[max tokens × top-k]` `i32`.
    pub fn topk_idx(&self) -> &SymmetricTensor<i32> {
        &self.topk_idx
    }

    /// Each token's weights, `[max tokens × top-k]` `f32`.
    pub fn topk_weights(&self) -> &SymmetricTensor<f32> {
        &self.topk_weights
    }

    /// Where dispatch put each (token, expert): its row in the expert's block of this
    /// rank, `[max tokens × top-k]` `i32` (entries of no expert are left as they were).
    /// Low-latency mode.
    pub fn slots(&self) -> Result<&SymmetricTensor<i32>, MoeError> {
        match &self.layout {
            Layout::LowLatency { slots } => Ok(slots),
            Layout::HighThroughput(_) => Err(self.wrong_mode("slots")),
        }
    }

    /// Each token's place among this rank's tokens to each rank, `[max tokens × ranks]`
    /// `i32`, `-1` where it does not go (the layout pass's). High-throughput mode.
    pub fn positions(&self) -> Result<&SymmetricTensor<i32>, MoeError> {
        Ok(&self.high_throughput("positions")?.positions)
    }

    /// The first received row of each source rank, then the total, `[ranks + 1]` `i32`.
    /// High-throughput mode.
    pub fn received_offsets(&self) -> Result<&SymmetricTensor<i32>, MoeError> {
        Ok(&self.high_throughput("received_offsets")?.received_offsets)
    }

    /// (token, expert) pairs each source sent each local expert, `[ranks × local
    /// experts]` `i32`. High-throughput mode.
    pub fn source_expert_counts(&self) -> Result<&SymmetricTensor<i32>, MoeError> {
        Ok(&self
            .high_throughput("source_expert_counts")?
            .source_expert_counts)
    }

    /// Each received token's experts as local indices (`-1` for those elsewhere),
    /// `[ranks × max tokens × top-k]` `i32`. High-throughput mode.
    pub fn received_topk_idx(&self) -> Result<&SymmetricTensor<i32>, MoeError> {
        Ok(&self.high_throughput("received_topk_idx")?.received_topk_idx)
    }

    /// Each received token's weights, `[ranks × max tokens × top-k]` `f32`: dispatch's
    /// output, and the backward combine's input. High-throughput mode. Every weight is
    /// the routing's, also where `received_topk_idx` is `-1` (an expert of another rank,
    /// or no expert): DeepEP's dispatch zeroes those.
    pub fn received_topk_weights(&self) -> Result<&SymmetricTensor<f32>, MoeError> {
        Ok(&self
            .high_throughput("received_topk_weights")?
            .received_topk_weights)
    }

    /// The backward combine's weights, `[max tokens × top-k]` `f32`: for each token and
    /// `j`, the sum over the ranks it went to of their `received_topk_weights` at its row.
    /// High-throughput mode.
    pub fn combined_weights(&self) -> Result<&SymmetricTensor<f32>, MoeError> {
        Ok(&self.high_throughput("combined_weights")?.combined_weights)
    }

    /// Tokens local rank `i` received (the layout's total), on the host.
    pub fn read_received_tokens(&self, i: usize) -> Result<usize, MoeError> {
        let offsets = self.received_offsets()?.to_vec(i, self.ranks + 1)?;
        Ok(offsets[self.ranks] as usize)
    }

    pub(crate) fn high_throughput(
        &self,
        what: &'static str,
    ) -> Result<&HighThroughputLayout, MoeError> {
        match &self.layout {
            Layout::HighThroughput(layout) => Ok(layout),
            Layout::LowLatency { .. } => Err(self.wrong_mode(what)),
        }
    }

    fn wrong_mode(&self, operation: &'static str) -> MoeError {
        MoeError::WrongMode {
            operation,
            mode: self.mode(),
        }
    }

    /// Tokens each rank sent each local expert, `[local experts × ranks]` `i32` (low
    /// latency), or tokens each rank sent this one, `[ranks]` (high throughput); on the
    /// device, valid after dispatch (the layout pass).
    pub fn received_counts(&self) -> &SymmetricTensor<i32> {
        &self.received_counts
    }

    /// Tokens each local expert received, `[local experts]` `i32`, on the device.
    pub fn expert_counts(&self) -> &SymmetricTensor<i32> {
        &self.expert_counts
    }

    /// [`MoeHandle::received_counts`] of local rank `i` on the host: entry
    /// `local_expert * ranks + source` (low latency) or `source` (high throughput). Read
    /// after dispatch ran (the stream synchronised; on simulated ranks, every rank
    /// launched).
    pub fn read_received_counts(&self, i: usize) -> Result<Vec<i32>, MoeError> {
        Ok(self.received_counts.to_vec(i, self.received_counts.len())?)
    }

    /// [`MoeHandle::expert_counts`] of local rank `i` on the host.
    pub fn read_expert_counts(&self, i: usize) -> Result<Vec<i32>, MoeError> {
        Ok(self.expert_counts.to_vec(i, self.experts / self.ranks)?)
    }

    /// Releases the handle's buffers now (on GPUs).
    pub fn close(self) -> Result<(), MoeError> {
        self.topk_idx.close()?;
        self.topk_weights.close()?;
        self.received_counts.close()?;
        self.expert_counts.close()?;
        match self.layout {
            Layout::LowLatency { slots } => Ok(slots.close()?),
            Layout::HighThroughput(layout) => {
                layout.positions.close()?;
                layout.source_expert_counts.close()?;
                layout.received_offsets.close()?;
                layout.received_topk_idx.close()?;
                layout.received_topk_weights.close()?;
                Ok(layout.combined_weights.close()?)
            }
        }
    }
}
