//! Dispatch and combine on the host, element by element: what the kernels must produce,
//! bit for bit (same slots, same order of fused multiply-adds, one rounding to `bf16`).
//! The tests, the example and the benchmark check the kernels against it.

use super::config::MoeConfig;
use cudajit::bf16;

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

/// What the high-throughput layout pass gives every rank.
#[derive(Clone, Debug, PartialEq)]
pub struct Layout {
    /// Per rank, `[tokens × ranks]`: token `t`'s place among the rank's tokens to rank
    /// `r`, `-1` if it has no expert there.
    pub positions: Vec<Vec<i32>>,
    /// Per rank, `[ranks]`: tokens from each source.
    pub received_counts: Vec<Vec<i32>>,
    /// Per rank, `[ranks × local experts]`: (token, distinct expert) pairs from each
    /// source.
    pub source_expert_counts: Vec<Vec<i32>>,
    /// Per rank, `[local experts]`.
    pub expert_counts: Vec<Vec<i32>>,
    /// Per rank, `[ranks + 1]`: each source's first row, then the total.
    pub received_offsets: Vec<Vec<i32>>,
}

/// The layout of `routings` (one per rank): token `t` of rank `s` goes to rank `r` when
/// one of its experts is `r`'s, at row `offsets_r[s] + (s's tokens before t going to r)`.
pub fn high_throughput_layout(
    config: &MoeConfig,
    ranks: usize,
    top_k: usize,
    routings: &[RankRouting<'_>],
) -> Layout {
    let per_rank = config.experts / ranks;
    let mut out = Layout {
        positions: routings
            .iter()
            .map(|r| vec![-1; r.topk_idx.len() / top_k * ranks])
            .collect(),
        received_counts: vec![vec![0; ranks]; ranks],
        source_expert_counts: vec![vec![0; ranks * per_rank]; ranks],
        expert_counts: vec![vec![0; per_rank]; ranks],
        received_offsets: vec![vec![0; ranks + 1]; ranks],
    };
    for (source, routing) in routings.iter().enumerate() {
        let tokens = routing.topk_idx.len() / top_k;
        for t in 0..tokens {
            let picks = &routing.topk_idx[t * top_k..(t + 1) * top_k];
            let mut distinct: Vec<i32> = picks.iter().copied().filter(|&e| e >= 0).collect();
            distinct.sort_unstable();
            distinct.dedup();
            for r in 0..ranks {
                let here: Vec<i32> = distinct
                    .iter()
                    .copied()
                    .filter(|&e| e as usize / per_rank == r)
                    .collect();
                if here.is_empty() {
                    continue;
                }
                out.positions[source][t * ranks + r] = out.received_counts[r][source];
                out.received_counts[r][source] += 1;
                for e in here {
                    let local = e as usize % per_rank;
                    out.source_expert_counts[r][source * per_rank + local] += 1;
                    out.expert_counts[r][local] += 1;
                }
            }
        }
    }
    for r in 0..ranks {
        for s in 0..ranks {
            out.received_offsets[r][s + 1] = out.received_offsets[r][s] + out.received_counts[r][s];
        }
    }
    out
}

/// What high-throughput dispatch delivers on every rank, `total` rows each.
#[derive(Clone, Debug, PartialEq)]
pub struct FlatDispatched {
    /// Per rank, `[total × hidden]`.
    pub received: Vec<Vec<bf16>>,
    /// Per rank, `[total × top-k]`: local expert indices, `-1` for experts elsewhere.
    pub received_topk_idx: Vec<Vec<i32>>,
    /// Per rank, `[total × top-k]`.
    pub received_topk_weights: Vec<Vec<f32>>,
}

/// High-throughput dispatch of `routings` with `layout`.
pub fn high_throughput_dispatch(
    config: &MoeConfig,
    ranks: usize,
    top_k: usize,
    routings: &[RankRouting<'_>],
    layout: &Layout,
) -> FlatDispatched {
    let per_rank = config.experts / ranks;
    let hidden = config.hidden;
    let totals: Vec<usize> = (0..ranks)
        .map(|r| layout.received_offsets[r][ranks] as usize)
        .collect();
    let mut out = FlatDispatched {
        received: totals
            .iter()
            .map(|&n| vec![bf16::ZERO; n * hidden])
            .collect(),
        received_topk_idx: totals.iter().map(|&n| vec![0; n * top_k]).collect(),
        received_topk_weights: totals.iter().map(|&n| vec![0.0; n * top_k]).collect(),
    };
    for (source, routing) in routings.iter().enumerate() {
        for t in 0..routing.topk_idx.len() / top_k {
            for r in 0..ranks {
                let position = layout.positions[source][t * ranks + r];
                if position < 0 {
                    continue;
                }
                let row = (layout.received_offsets[r][source] + position) as usize;
                out.received[r][row * hidden..(row + 1) * hidden]
                    .copy_from_slice(&routing.tokens[t * hidden..(t + 1) * hidden]);
                for j in 0..top_k {
                    let e = routing.topk_idx[t * top_k + j];
                    let local = if e >= 0 && e as usize / per_rank == r {
                        (e as usize % per_rank) as i32
                    } else {
                        -1
                    };
                    out.received_topk_idx[r][row * top_k + j] = local;
                    out.received_topk_weights[r][row * top_k + j] =
                        routing.topk_weights[t * top_k + j];
                }
            }
        }
    }
    out
}

/// High-throughput combine: token `t` of rank `s` is, element by element, the `f32` sum
/// in rank order of its rows of `expert_output` (per rank, `[rows × hidden]`) on the ranks
/// it went to, rounded to `bf16` once. `[tokens × hidden]` per rank.
pub fn high_throughput_combine(
    config: &MoeConfig,
    ranks: usize,
    top_k: usize,
    routings: &[RankRouting<'_>],
    layout: &Layout,
    expert_output: &[Vec<bf16>],
) -> Vec<Vec<bf16>> {
    let hidden = config.hidden;
    gather_rows(
        ranks,
        top_k,
        routings,
        layout,
        hidden,
        |r, row, h, sum: &mut f32| {
            *sum += expert_output[r][row * hidden + h].to_f32();
        },
    )
    .into_iter()
    .map(|sums| sums.into_iter().map(bf16::from_f32).collect())
    .collect()
}

/// The backward combine's weights: for token `t` of rank `s` and each `j < top_k`, the
/// `f32` sum in rank order of `received_weights` (per rank, `[rows × top-k]`) at its rows
/// on the ranks it went to. `[tokens × top-k]` per rank.
pub fn high_throughput_combine_weights(
    ranks: usize,
    top_k: usize,
    routings: &[RankRouting<'_>],
    layout: &Layout,
    received_weights: &[Vec<f32>],
) -> Vec<Vec<f32>> {
    gather_rows(
        ranks,
        top_k,
        routings,
        layout,
        top_k,
        |r, row, j, sum: &mut f32| {
            *sum += received_weights[r][row * top_k + j];
        },
    )
}

/// For every rank's token `t` and `k < width`, `add(r, row, k, sum)` over the ranks `r` it
/// went to in order (its row there), from `sum = 0.0`.
fn gather_rows(
    ranks: usize,
    top_k: usize,
    routings: &[RankRouting<'_>],
    layout: &Layout,
    width: usize,
    add: impl Fn(usize, usize, usize, &mut f32),
) -> Vec<Vec<f32>> {
    routings
        .iter()
        .enumerate()
        .map(|(source, routing)| {
            let tokens = routing.topk_idx.len() / top_k;
            let mut out = vec![0.0f32; tokens * width];
            for t in 0..tokens {
                for r in 0..ranks {
                    let position = layout.positions[source][t * ranks + r];
                    if position < 0 {
                        continue;
                    }
                    let row = (layout.received_offsets[r][source] + position) as usize;
                    for k in 0..width {
                        add(r, row, k, &mut out[t * width + k]);
                    }
                }
            }
            out
        })
        .collect()
}
