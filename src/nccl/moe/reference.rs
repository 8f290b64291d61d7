//! Dispatch and combine on the host, element by element: what the kernels must produce,
//! bit for bit (same slots, same order of fused multiply-adds, one rounding to `bf16`).
//! The tests, the example and the benchmark check the kernels against it.

use super::config::MoeConfig;
use crate::bf16;

/// One rank's routing: `tokens` is `[n × hidden]`, `topk_idx` and `topk_weights`
/// `[n × top-k]` (`-1`: no expert).
#[derive(Clone, Copy, Debug)]
pub struct RankRouting<'a> {
    pub tokens: &'a [bf16],
    pub topk_idx: &'a [i32],
    pub topk_weights: &'a [f32],
}

/// What dispatch delivers on every rank.
#[derive(Clone, Debug, PartialEq)]
pub struct Dispatched {
    /// Per rank, `[local experts × ranks × max tokens × hidden]`; rows no token went to
    /// are zero.
    pub received: Vec<Vec<bf16>>,
    /// Per rank, `[local experts × ranks]`.
    pub received_counts: Vec<Vec<i32>>,
    /// Per rank, `[local experts]`.
    pub expert_counts: Vec<Vec<i32>>,
    /// Per rank, `[tokens × top-k]`: the row of each (token, expert) in its expert's block
    /// of the sending rank; `-1` where the entry names no expert.
    pub slots: Vec<Vec<i32>>,
}

/// Dispatch of `routings` (one per rank) over `ranks` ranks: token `t` of rank `s` goes to
/// each expert `e` among its top-k, once, into row `count of rank s's tokens before t
/// routed to e` of block `[e % per_rank][s]` on rank `e / per_rank`.
pub fn dispatch(
    config: &MoeConfig,
    ranks: usize,
    top_k: usize,
    routings: &[RankRouting<'_>],
) -> Dispatched {
    let per_rank = config.experts / ranks;
    let (hidden, max) = (config.hidden, config.max_tokens_per_rank);
    let mut out = Dispatched {
        received: vec![vec![bf16::ZERO; per_rank * ranks * max * hidden]; ranks],
        received_counts: vec![vec![0; per_rank * ranks]; ranks],
        expert_counts: vec![vec![0; per_rank]; ranks],
        slots: routings
            .iter()
            .map(|r| vec![-1; r.topk_idx.len()])
            .collect(),
    };
    for (source, routing) in routings.iter().enumerate() {
        let tokens = routing.topk_idx.len() / top_k;
        for e in 0..config.experts {
            let (owner, local) = (e / per_rank, e % per_rank);
            let mut sent = 0;
            for t in 0..tokens {
                let picks = &routing.topk_idx[t * top_k..(t + 1) * top_k];
                if !picks.contains(&(e as i32)) {
                    continue;
                }
                for (j, &p) in picks.iter().enumerate() {
                    if p == e as i32 {
                        out.slots[source][t * top_k + j] = sent as i32;
                    }
                }
                let row = ((local * ranks + source) * max + sent) * hidden;
                out.received[owner][row..row + hidden]
                    .copy_from_slice(&routing.tokens[t * hidden..(t + 1) * hidden]);
                sent += 1;
            }
            out.received_counts[owner][local * ranks + source] = sent as i32;
            out.expert_counts[owner][local] += sent as i32;
        }
    }
    out
}

/// Combine on every rank: token `t` of rank `s` is, element by element, `acc = 0.0f32`,
/// then for `j` in order over its experts `acc = weight[j].mul_add(output, acc)` with
/// `output` the row of `expert_output` on the expert's rank at the token's slot, rounded
/// to `bf16` once. `[tokens × hidden]` per rank.
pub fn combine(
    config: &MoeConfig,
    ranks: usize,
    top_k: usize,
    routings: &[RankRouting<'_>],
    slots: &[Vec<i32>],
    expert_output: &[Vec<bf16>],
) -> Vec<Vec<bf16>> {
    let per_rank = config.experts / ranks;
    let (hidden, max) = (config.hidden, config.max_tokens_per_rank);
    routings
        .iter()
        .enumerate()
        .map(|(source, routing)| {
            let tokens = routing.topk_idx.len() / top_k;
            let mut out = vec![bf16::ZERO; tokens * hidden];
            for t in 0..tokens {
                for h in 0..hidden {
                    let mut acc = 0.0f32;
                    for j in 0..top_k {
                        let e = routing.topk_idx[t * top_k + j];
                        if e < 0 || e as usize >= config.experts {
                            continue;
                        }
                        let (owner, local) = (e as usize / per_rank, e as usize % per_rank);
                        let slot = slots[source][t * top_k + j] as usize;
                        let row = ((local * ranks + source) * max + slot) * hidden;
                        let x = expert_output[owner][row + h].to_f32();
                        acc = routing.topk_weights[t * top_k + j].mul_add(x, acc);
                    }
                    out[t * hidden + h] = bf16::from_f32(acc);
                }
            }
            out
        })
        .collect()
}
