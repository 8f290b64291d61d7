//! A routing of tokens to experts and what dispatch derives from it: the handle combine
//! needs to bring each token's outputs back.

use super::config::MoeError;
use super::ranks::{MoeRanks, SymmetricTensor};

/// One routing: each rank's `topk_idx` and `topk_weights` (`[tokens × top-k]`, on the
/// device), the slot dispatch chose for each (token, expert), and the received counts,
/// all in symmetric buffers sized for the group's limits:
///
/// | buffer | per rank |
/// | --- | --- |
/// | [`topk_idx`](MoeHandle::topk_idx) | `[max tokens × top-k]` `i32`: the experts of each token, `-1` for none |
/// | [`topk_weights`](MoeHandle::topk_weights) | `[max tokens × top-k]` `f32` |
/// | [`slots`](MoeHandle::slots) | `[max tokens × top-k]` `i32`: the row of each (token, expert) in its expert's block of this rank |
/// | [`received_counts`](MoeHandle::received_counts) | `[local experts × ranks]` `i32`: tokens each rank sent each local expert |
/// | [`expert_counts`](MoeHandle::expert_counts) | `[local experts]` `i32`: their sums |
///
/// A token routed twice to one expert is sent once and weighted twice.
pub struct MoeHandle {
    group: u64,
    top_k: usize,
    max_tokens: usize,
    experts: usize,
    ranks: usize,
    /// Each local rank's tokens, once a routing is set.
    tokens: Vec<Option<usize>>,
    topk_idx: SymmetricTensor<i32>,
    topk_weights: SymmetricTensor<f32>,
    slots: SymmetricTensor<i32>,
    received_counts: SymmetricTensor<i32>,
    expert_counts: SymmetricTensor<i32>,
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
        max_tokens: usize,
        experts: usize,
        top_k: usize,
    ) -> Result<Self, MoeError> {
        let pairs = max_tokens * top_k;
        let per_rank = experts / ranks.nranks();
        Ok(MoeHandle {
            group,
            top_k,
            max_tokens,
            experts,
            ranks: ranks.nranks(),
            tokens: vec![None; ranks.local_ranks()],
            topk_idx: ranks.alloc(pairs)?,
            topk_weights: ranks.alloc(pairs)?,
            slots: ranks.alloc(pairs)?,
            received_counts: ranks.alloc(per_rank * ranks.nranks())?,
            expert_counts: ranks.alloc(per_rank)?,
        })
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
        if topk_idx.len() % self.top_k != 0 {
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
        Ok(())
    }

    /// Sets local rank `i`'s routing to `tokens` tokens whose experts and weights are
    /// already in [`MoeHandle::topk_idx`] and [`MoeHandle::topk_weights`] (written by a
    /// kernel: a router's top-k). Indices outside `0..experts` count as none.
    pub fn set_device_routing(&mut self, i: usize, tokens: usize) -> Result<(), MoeError> {
        self.check_tokens(i, tokens)?;
        self.tokens[i] = Some(tokens);
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
    pub fn slots(&self) -> &SymmetricTensor<i32> {
        &self.slots
    }

    /// Tokens each rank sent each local expert, `[local experts × ranks]` `i32`, on the
    /// device (valid after dispatch).
    pub fn received_counts(&self) -> &SymmetricTensor<i32> {
        &self.received_counts
    }

    /// Tokens each local expert received, `[local experts]` `i32`, on the device.
    pub fn expert_counts(&self) -> &SymmetricTensor<i32> {
        &self.expert_counts
    }

    /// [`MoeHandle::received_counts`] of local rank `i` on the host: entry
    /// `local_expert * ranks + source`. Read after dispatch ran (the stream synchronised;
    /// on simulated ranks, every rank launched).
    pub fn read_received_counts(&self, i: usize) -> Result<Vec<i32>, MoeError> {
        let per_rank = self.experts / self.ranks;
        self.received_counts.to_vec(i, per_rank * self.ranks)
    }

    /// [`MoeHandle::expert_counts`] of local rank `i` on the host.
    pub fn read_expert_counts(&self, i: usize) -> Result<Vec<i32>, MoeError> {
        self.expert_counts.to_vec(i, self.experts / self.ranks)
    }

    /// Releases the handle's buffers now (on GPUs).
    pub fn close(self) -> Result<(), MoeError> {
        self.topk_idx.close()?;
        self.topk_weights.close()?;
        self.slots.close()?;
        self.received_counts.close()?;
        self.expert_counts.close()
    }
}
