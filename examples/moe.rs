//! Mixture-of-experts dispatch and combine with `cudajit::nccl::moe`: tokens routed to
//! their top-k experts on other ranks, the experts (a `#[kernel]` of this file) run on
//! what arrived, and the results come back weighted, in both modes and with FP8
//! dispatch; every output checked against `moe::reference`. The tokens and the combined
//! results live in device buffers of each rank's stream (`dispatch_from`,
//! `combine_into`), as a model's activations would.
//!
//!     cargo run --release --example moe                         # every GPU (2 or more) in one process
//!     cargo run --example moe                                   # no GPU: 4 simulated ranks
//!     CUDAJIT_BACKEND=sim SIM_RANKS=8 cargo run --example moe   # 8 simulated ranks
//!
//! On GPUs the shapes are NCCL EP's (hidden 7168, top-8 of 256 experts, 128 tokens per
//! rank in low-latency mode, 4096 in high-throughput mode); on simulated ranks smaller.

#[path = "common/ranks.rs"]
mod ranks;

use std::error::Error;

use cudajit::nccl::device::{self as nccl, Window};
use cudajit::nccl::moe::reference::{self, RankRouting};
use cudajit::nccl::moe::{fp8, DispatchFormat, MoeConfig, MoeGroup, MoeHandle, MoeRanks};
use cudajit::nccl::DevCommRequirements;
use cudajit::prelude::*;
use cudajit::{bf16, Buffer};
use ranks::{simulate, Ranks};

type Result<T> = std::result::Result<T, Box<dyn Error>>;

impl Ranks {
    fn moe(&self) -> MoeRanks<'_> {
        match self {
            Ranks::Gpu { comm, dev_comm } => MoeRanks::Gpu { comm, dev_comm },
            Ranks::Sim(world) => MoeRanks::Sim(world),
        }
    }
}

/// The experts of a low-latency group: expert `e` scales the rows its block received by
/// `1 + e / 8`. One thread per element of the rank's receive buffer; rows past a block's
/// count are left alone.
#[kernel]
#[allow(clippy::too_many_arguments)]
fn scale_experts(
    received: Window,
    counts: Window,
    output: Window,
    first_expert: u64,
    ranks: u64,
    max_tokens: u64,
    elements: u64,
    hidden: u64,
) {
    let x = unsafe { slice_at::<bf16>(nccl::local_address(received, 0), elements as usize) };
    let y = unsafe { slice_at_mut::<bf16>(nccl::local_address(output, 0), elements as usize) };
    let blocks = (elements / hidden / max_tokens) as usize;
    let count = unsafe { slice_at::<i32>(nccl::local_address(counts, 0), blocks) };
    let mut i = global_index();
    while i < elements as usize {
        let row = i / hidden as usize;
        let block = row / max_tokens as usize;
        if (row % max_tokens as usize) < count[block] as usize {
            let e = first_expert + block as u64 / ranks;
            y[i] = bf16::from_f32(x[i].to_f32() * (1.0 + e as f32 / 8.0));
        }
        i += grid_stride();
    }
}

/// What `scale_experts` does, on the host.
fn expert(e: usize, x: bf16) -> bf16 {
    bf16::from_f32(x.to_f32() * (1.0 + e as f32 / 8.0))
}

/// Random experts (distinct per token) and weights for `tokens` tokens.
fn routing(seed: u64, tokens: usize, top_k: usize, experts: usize) -> (Vec<i32>, Vec<f32>) {
    let mut state = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let mut idx = Vec::with_capacity(tokens * top_k);
    let mut weights = Vec::with_capacity(tokens * top_k);
    for _ in 0..tokens {
        let mut picked: Vec<i32> = Vec::new();
        while picked.len() < top_k {
            let e = (next() % experts as u64) as i32;
            if !picked.contains(&e) {
                picked.push(e);
                weights.push((1 + next() % 255) as f32 / 256.0);
            }
        }
        idx.extend(picked);
    }
    (idx, weights)
}

/// Every rank's tokens and routing.
struct Inputs {
    tokens: Vec<Vec<bf16>>,
    idx: Vec<Vec<i32>>,
    weights: Vec<Vec<f32>>,
}

impl Inputs {
    fn new(config: &MoeConfig, ranks: usize, tokens: usize, top_k: usize) -> Inputs {
        let mut inputs = Inputs {
            tokens: Vec::new(),
            idx: Vec::new(),
            weights: Vec::new(),
        };
        for r in 0..ranks {
            let values = (0..tokens * config.hidden)
                .map(|k| bf16::from_f32(((r * 7919 + k * 31) % 2003) as f32 / 64.0 - 15.0))
                .collect();
            let (idx, weights) = routing(r as u64 + 1, tokens, top_k, config.experts);
            inputs.tokens.push(values);
            inputs.idx.push(idx);
            inputs.weights.push(weights);
        }
        inputs
    }

    fn routings(&self) -> Vec<RankRouting<'_>> {
        (0..self.tokens.len())
            .map(|r| RankRouting {
                tokens: &self.tokens[r],
                topk_idx: &self.idx[r],
                topk_weights: &self.weights[r],
            })
            .collect()
    }

    /// Sets every rank's routing, and returns its tokens in device memory of its stream
    /// (what a model's previous layer would leave there).
    fn upload(&self, group: &MoeGroup<'_>, handle: &mut MoeHandle) -> Result<Vec<Buffer<bf16>>> {
        let mut tokens = Vec::new();
        for r in 0..self.tokens.len() {
            handle.set_routing(r, &self.idx[r], &self.weights[r])?;
            tokens.push(group.stream(r)?.clone_htod(&self.tokens[r])?);
        }
        Ok(tokens)
    }
}

/// Device buffers of `tokens × hidden` on every rank's stream, for the combined tokens.
fn combined_buffers(group: &MoeGroup<'_>, tokens: usize) -> Result<Vec<Buffer<bf16>>> {
    (0..group.ranks().local_ranks())
        .map(|r| {
            Ok(group
                .stream(r)?
                .alloc_zeros(tokens * group.config().hidden)?)
        })
        .collect()
}

fn synchronize(group: &MoeGroup<'_>) -> Result<()> {
    for r in 0..group.ranks().local_ranks() {
        group.stream(r)?.synchronize()?;
    }
    Ok(())
}

/// Low latency: dispatch, the experts as a kernel on every rank, combine; checked.
fn low_latency(
    ranks: MoeRanks<'_>,
    config: MoeConfig,
    tokens: usize,
    top_k: usize,
    experts_grid: LaunchConfig,
) -> Result<()> {
    let n = ranks.nranks();
    let group = MoeGroup::new(ranks, config)?;
    let mut handle = group.handle(top_k)?;
    let inputs = Inputs::new(&config, n, tokens, top_k);
    let token_buffers = inputs.upload(&group, &mut handle)?;
    for (r, rank_tokens) in token_buffers.iter().enumerate() {
        group.dispatch_from(r, &group.stream(r)?, &handle, rank_tokens)?;
    }
    let per_rank = group.experts_per_rank();
    let elements = group.expert_output().len();
    for r in 0..n {
        let stream = group.stream(r)?;
        scale_experts::launch(
            &stream,
            experts_grid,
            group.received()?.window(r)?,
            handle.received_counts().window(r)?,
            group.expert_output().window(r)?,
            (r * per_rank) as u64,
            n as u64,
            config.max_tokens_per_rank as u64,
            elements as u64,
            config.hidden as u64,
        )?;
    }
    let mut combined_out = combined_buffers(&group, tokens)?;
    for (r, out) in combined_out.iter_mut().enumerate() {
        group.combine_into(r, &group.stream(r)?, &handle, out)?;
    }
    synchronize(&group)?;
    let routings = inputs.routings();
    let want = reference::dispatch(&config, n, top_k, &routings);
    let outputs: Vec<Vec<bf16>> = (0..n)
        .map(|r| {
            let mut out = want.received[r].clone();
            for (k, x) in out.iter_mut().enumerate() {
                *x = expert(
                    r * per_rank + k / config.hidden / config.max_tokens_per_rank / n,
                    *x,
                );
            }
            out
        })
        .collect();
    let combined = reference::combine(&config, n, top_k, &routings, &want.slots, &outputs);
    for (r, want_combined) in combined.iter().enumerate() {
        assert_eq!(
            handle.read_expert_counts(r)?,
            want.expert_counts[r],
            "rank {r}"
        );
        let got = group.stream(r)?.clone_dtoh(&combined_out[r])?;
        if got != *want_combined {
            return Err(
                format!("low-latency combine on rank {r} differs from the reference").into(),
            );
        }
    }
    println!(
        "low latency: {tokens} tokens per rank, top-{top_k} of {} experts, hidden {}: correct on {n} ranks",
        config.experts, config.hidden
    );
    handle.close()?;
    Ok(group.close()?)
}

/// High throughput: the layout pass, dispatch, the rank's result per received token (its
/// local experts' weighted sum, computed on the host here), combine; checked.
fn high_throughput(
    ranks: MoeRanks<'_>,
    config: MoeConfig,
    tokens: usize,
    top_k: usize,
) -> Result<()> {
    let n = ranks.nranks();
    let group = MoeGroup::new(ranks, config)?;
    let mut handle = group.handle(top_k)?;
    let inputs = Inputs::new(&config, n, tokens, top_k);
    let token_buffers = inputs.upload(&group, &mut handle)?;
    for r in 0..n {
        group.layout(r, &group.stream(r)?, &mut handle)?;
    }
    for (r, rank_tokens) in token_buffers.iter().enumerate() {
        group.dispatch_from(r, &group.stream(r)?, &handle, rank_tokens)?;
    }
    synchronize(&group)?;
    let per_rank = group.experts_per_rank();
    let hidden = config.hidden;
    let mut outputs = Vec::new();
    for r in 0..n {
        let total = handle.read_received_tokens(r)?;
        let x = group.received()?.to_vec(r, total * hidden)?;
        let idx = handle.received_topk_idx()?.to_vec(r, total * top_k)?;
        let w = handle.received_topk_weights()?.to_vec(r, total * top_k)?;
        let mut y = vec![bf16::ZERO; total * hidden];
        for row in 0..total {
            for h in 0..hidden {
                let mut sum = 0.0f32;
                for j in 0..top_k {
                    if idx[row * top_k + j] >= 0 {
                        let e = r * per_rank + idx[row * top_k + j] as usize;
                        sum += w[row * top_k + j] * expert(e, x[row * hidden + h]).to_f32();
                    }
                }
                y[row * hidden + h] = bf16::from_f32(sum);
            }
        }
        outputs.push(y);
    }
    // The results in device memory, as an expert layer leaves them: the received rows
    // (one zero row for none, so no buffer is empty).
    let mut output_buffers = Vec::new();
    for (r, y) in outputs.iter().enumerate() {
        let mut rows = y.clone();
        rows.resize(y.len().max(hidden), bf16::ZERO);
        output_buffers.push(group.stream(r)?.clone_htod(&rows)?);
    }
    let mut combined_out = combined_buffers(&group, tokens)?;
    for (r, out) in combined_out.iter_mut().enumerate() {
        let stream = group.stream(r)?;
        group.combine_from(r, &stream, &handle, &output_buffers[r])?;
        group.combine_into(r, &stream, &handle, out)?;
    }
    synchronize(&group)?;
    let routings = inputs.routings();
    let layout = reference::high_throughput_layout(&config, n, top_k, &routings);
    let combined =
        reference::high_throughput_combine(&config, n, top_k, &routings, &layout, &outputs);
    for (r, want_combined) in combined.iter().enumerate() {
        let got = group.stream(r)?.clone_dtoh(&combined_out[r])?;
        if got != *want_combined {
            return Err(
                format!("high-throughput combine on rank {r} differs from the reference").into(),
            );
        }
    }
    println!(
        "high throughput: {tokens} tokens per rank, top-{top_k} of {} experts, hidden {hidden}: correct on {n} ranks",
        config.experts
    );
    handle.close()?;
    Ok(group.close()?)
}

/// FP8 dispatch (low latency): every received row within the quantisation bound of the
/// token it came from.
fn fp8_dispatch(
    ranks: MoeRanks<'_>,
    mut config: MoeConfig,
    tokens: usize,
    top_k: usize,
) -> Result<()> {
    config.dispatch_format = DispatchFormat::Fp8E4m3;
    let n = ranks.nranks();
    let group = MoeGroup::new(ranks, config)?;
    let mut handle = group.handle(top_k)?;
    let inputs = Inputs::new(&config, n, tokens, top_k);
    let token_buffers = inputs.upload(&group, &mut handle)?;
    for (r, rank_tokens) in token_buffers.iter().enumerate() {
        group.dispatch_from(r, &group.stream(r)?, &handle, rank_tokens)?;
    }
    synchronize(&group)?;
    let want = reference::dispatch(&config, n, top_k, &inputs.routings());
    let hidden = config.hidden;
    let blocks = fp8::scales_per_token(hidden);
    let (values, scales) = group.received_fp8()?;
    let mut worst = 0.0f32;
    for r in 0..n {
        let bytes = values.to_vec(r, values.len())?;
        let scale = scales.to_vec(r, scales.len())?;
        let counts = handle.read_received_counts(r)?;
        for (block, &count) in counts.iter().enumerate() {
            for row in block * config.max_tokens_per_rank
                ..block * config.max_tokens_per_rank + count as usize
            {
                for h in 0..hidden {
                    let x = want.received[r][row * hidden + h].to_f32();
                    let s = scale[row * blocks + h / fp8::CHANNELS_PER_SCALE];
                    let error = (fp8::e4m3_to_f32(bytes[row * hidden + h]) * s - x).abs();
                    if error > fp8::quantization_bound(x, s) {
                        return Err(format!(
                            "FP8 row {row} of rank {r}: element {h} off by {error}"
                        )
                        .into());
                    }
                    worst = worst.max(error / x.abs().max(s));
                }
            }
        }
    }
    println!("FP8 dispatch: every element within its e4m3 bound (largest relative error {worst:.4}) on {n} ranks");
    handle.close()?;
    Ok(group.close()?)
}

fn main() -> Result<()> {
    cudajit::log::init()?;
    let ranks = Ranks::new(simulate(), &DevCommRequirements::lsa_barriers(132))?;
    let moe = ranks.moe();
    let simulated = matches!(ranks, Ranks::Sim(_));
    let n = moe.nranks();
    let (experts, hidden, ll_tokens, ht_tokens) = if simulated {
        (4 * n, 136, 12, 40)
    } else {
        (256, 7168, 128, 4096)
    };
    let sized = |mut config: MoeConfig| {
        if simulated {
            // The simulator runs every thread: a small grid.
            config.ctas = 4;
            config.threads = 64;
        }
        config
    };
    let experts_grid = if simulated {
        LaunchConfig::new(4, 64)
    } else {
        LaunchConfig::new(528, 256)
    };
    let config = sized(MoeConfig::low_latency(experts, ll_tokens, hidden));
    low_latency(moe, config, ll_tokens, 8, experts_grid)?;
    high_throughput(
        moe,
        sized(MoeConfig::high_throughput(experts, ht_tokens, hidden)),
        ht_tokens,
        8,
    )?;
    fp8_dispatch(
        moe,
        sized(MoeConfig::low_latency(experts, ll_tokens, hidden)),
        ll_tokens,
        8,
    )?;
    if let Ranks::Gpu { comm, dev_comm } = ranks {
        dev_comm.close()?;
        comm.close()?;
    }
    Ok(())
}
