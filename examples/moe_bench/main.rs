//! MoE dispatch and combine on every GPU of this machine (2 or more, one process):
//! cudajit's kernels (`cudajit::nccl::moe`, both modes, bf16 and FP8 dispatch) against
//! the baseline of permute + grouped `ncclSend`/`ncclRecv` + un-permute (baseline.rs), at
//! NCCL EP's shapes. CUDA events on every rank's stream around each operation (the
//! slowest rank's time), the median of `ITERS` (default 30, at least 20) after `WARMUP`
//! (default 5); every contender's combined tokens checked against the host's.
//!
//!     cargo build --release --example moe_bench && target/release/examples/moe_bench
//!     scripts/moe-stage.sh, then on the GPU machine: bash .gpu-moe/moe-run.sh
//!
//! Bandwidth is NCCL EP's: the token bytes a rank moves (every (token, expert) row it
//! sends in low-latency mode and in the baseline, every (token, rank) row in
//! high-throughput mode; FP8 rows count their bytes and scales) over the time. With fewer
//! than 2 GPUs it prints SKIPPED and exits 0. Results: a table, and `moe_bench.csv` in
//! `$OUT` (or the working directory).

mod baseline;
mod experts;
#[path = "../bench/multi_gpu.rs"]
mod multi_gpu;

use cudajit::bf16;
use cudajit::nccl::moe::{fp8, DispatchFormat, MoeConfig, MoeGroup, MoeHandle, MoeMode, MoeRanks};
use cudajit::nccl::{Communicator, DevCommRequirements, LoadedNccl};
use cudajit::prelude::*;
use cudajit::Stream;
use multi_gpu::{default_streams, disable_nvls, env_usize, out_dir, time, Result as BenchResult};

/// One benchmarked shape.
#[derive(Clone, Copy, Debug)]
struct Shape {
    mode: MoeMode,
    experts: usize,
    hidden: usize,
    top_k: usize,
    tokens: usize,
}

/// NCCL EP's published shapes (hidden 7168, top-8 of 256 experts; 128 tokens per rank in
/// low-latency mode, 4096 in high-throughput mode) and hidden 4096 with 64 experts.
const SHAPES: [Shape; 4] = [
    Shape {
        mode: MoeMode::LowLatency,
        experts: 256,
        hidden: 7168,
        top_k: 8,
        tokens: 128,
    },
    Shape {
        mode: MoeMode::LowLatency,
        experts: 64,
        hidden: 4096,
        top_k: 8,
        tokens: 128,
    },
    Shape {
        mode: MoeMode::HighThroughput,
        experts: 256,
        hidden: 7168,
        top_k: 8,
        tokens: 4096,
    },
    Shape {
        mode: MoeMode::HighThroughput,
        experts: 64,
        hidden: 4096,
        top_k: 8,
        tokens: 4096,
    },
];

/// One result row.
struct Row {
    shape: Shape,
    contender: String,
    operation: &'static str,
    median_us: f64,
    bytes: usize,
    correct: bool,
}

/// Random distinct experts and weights for every rank's tokens.
fn routing(shape: &Shape, rank: usize) -> (Vec<i32>, Vec<f32>) {
    let mut state = (rank as u64 + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let (mut idx, mut weights) = (Vec::new(), Vec::new());
    for _ in 0..shape.tokens {
        let mut picked: Vec<i32> = Vec::new();
        while picked.len() < shape.top_k {
            let e = (next() % shape.experts as u64) as i32;
            if !picked.contains(&e) {
                picked.push(e);
                weights.push((1 + next() % 255) as f32 / 256.0);
            }
        }
        idx.extend(picked);
    }
    (idx, weights)
}

fn tokens(shape: &Shape, rank: usize) -> Vec<bf16> {
    (0..shape.tokens * shape.hidden)
        .map(|k| bf16::from_f32(((rank * 7919 + k * 31) % 2003) as f32 / 64.0 - 15.0))
        .collect()
}

/// What combine must give with the identity experts: low latency and the baseline,
/// `sum_j w_j x` (fused multiply-adds in `j` order); high throughput, `x` times the
/// number of ranks the token went to (the sum of the identical rows in `f32`).
fn expected(
    shape: &Shape,
    ranks: usize,
    x: &[bf16],
    idx: &[i32],
    w: &[f32],
    by_rank: bool,
) -> Vec<bf16> {
    let (k, h) = (shape.top_k, shape.hidden);
    let per_rank = shape.experts / ranks;
    let mut out = vec![bf16::ZERO; x.len()];
    for t in 0..shape.tokens {
        let picks = &idx[t * k..(t + 1) * k];
        let mut went: Vec<usize> = picks.iter().map(|&e| e as usize / per_rank).collect();
        went.sort_unstable();
        went.dedup();
        for e in 0..h {
            let v = x[t * h + e].to_f32();
            let acc = if by_rank {
                went.iter().fold(0.0f32, |acc, _| acc + v)
            } else {
                (0..k).fold(0.0f32, |acc, j| w[t * k + j].mul_add(v, acc))
            };
            out[t * h + e] = bf16::from_f32(acc);
        }
    }
    out
}

/// cudajit's dispatch and combine at `shape` in `format`.
#[allow(clippy::too_many_arguments)]
fn cudajit_rows(
    comm: &Communicator,
    dev_comm: &cudajit::nccl::DevComm,
    shape: Shape,
    format: DispatchFormat,
    inputs: &[(Vec<bf16>, Vec<i32>, Vec<f32>)],
    warmup: usize,
    iters: usize,
) -> BenchResult<Vec<Row>> {
    let ranks = MoeRanks::Gpu { comm, dev_comm };
    let n = ranks.nranks();
    let mut config = match shape.mode {
        MoeMode::LowLatency => MoeConfig::low_latency(shape.experts, shape.tokens, shape.hidden),
        _ => MoeConfig::high_throughput(shape.experts, shape.tokens, shape.hidden),
    };
    config.dispatch_format = format;
    let group = MoeGroup::new(ranks, config)?;
    let mut handle: MoeHandle = group.handle(shape.top_k)?;
    for (r, (x, idx, w)) in inputs.iter().enumerate() {
        group.tokens().copy_from_host(r, x)?;
        handle.set_routing(r, idx, w)?;
    }
    let streams: Vec<Stream> = (0..n).map(|r| group.stream(r)).collect::<Result<_, _>>()?;
    let name = match format {
        DispatchFormat::Fp8E4m3 => "cudajit fp8",
        _ => "cudajit",
    };
    let mut rows = Vec::new();
    let per_rank = group.experts_per_rank();
    // Rows each rank sends: (token, distinct expert) pairs, or (token, rank) pairs.
    let sent: Vec<usize> = inputs
        .iter()
        .map(|(_, idx, _)| {
            idx.chunks(shape.top_k)
                .map(|picks| {
                    let mut to: Vec<usize> = picks
                        .iter()
                        .map(|&e| match shape.mode {
                            MoeMode::LowLatency => e as usize,
                            _ => e as usize / per_rank,
                        })
                        .collect();
                    to.sort_unstable();
                    to.dedup();
                    to.len()
                })
                .sum()
        })
        .collect();
    let row_bytes = match format {
        DispatchFormat::Fp8E4m3 => shape.hidden + 4 * fp8::scales_per_token(shape.hidden),
        _ => 2 * shape.hidden,
    };
    if shape.mode == MoeMode::HighThroughput {
        let layout = time(&streams, warmup, iters, || {
            for (r, s) in streams.iter().enumerate() {
                group.layout(r, s, &mut handle)?;
            }
            Ok(())
        })?;
        rows.push(Row {
            shape,
            contender: name.into(),
            operation: "layout",
            median_us: layout,
            bytes: 0,
            correct: true,
        });
    }
    let dispatch = time(&streams, warmup, iters, || {
        for (r, s) in streams.iter().enumerate() {
            group.dispatch(r, s, &handle)?;
        }
        Ok(())
    })?;
    rows.push(Row {
        shape,
        contender: name.into(),
        operation: "dispatch",
        median_us: dispatch,
        bytes: sent[0] * row_bytes,
        correct: true,
    });
    if format == DispatchFormat::Fp8E4m3 {
        return Ok(rows);
    }
    let elements = group.expert_output().len() as u64;
    for (r, s) in streams.iter().enumerate() {
        let received = group.received()?.window(r)?;
        let output = group.expert_output().window(r)?;
        experts::identity_experts::launch(
            s,
            LaunchConfig::new(528, 256),
            received,
            output,
            elements,
        )?;
    }
    let combine = time(&streams, warmup, iters, || {
        for (r, s) in streams.iter().enumerate() {
            group.combine(r, s, &handle)?;
        }
        Ok(())
    })?;
    let mut correct = true;
    for (r, (x, idx, w)) in inputs.iter().enumerate() {
        let want = expected(&shape, n, x, idx, w, shape.mode == MoeMode::HighThroughput);
        correct &= group.combined().to_vec(r, x.len())? == want;
    }
    rows.push(Row {
        shape,
        contender: name.into(),
        operation: "combine",
        median_us: combine,
        bytes: sent[0] * 2 * shape.hidden,
        correct,
    });
    handle.close()?;
    group.close()?;
    Ok(rows)
}

/// The baseline's dispatch and combine at `shape`.
fn baseline_rows(
    comm: &Communicator,
    shape: Shape,
    inputs: &[(Vec<bf16>, Vec<i32>, Vec<f32>)],
    warmup: usize,
    iters: usize,
) -> BenchResult<Vec<Row>> {
    let (cuda, streams) = default_streams(comm)?;
    let idx: Vec<Vec<i32>> = inputs.iter().map(|(_, idx, _)| idx.clone()).collect();
    let plans = baseline::plans(&idx, shape.top_k, shape.experts);
    let mut buffers = inputs
        .iter()
        .zip(&plans)
        .zip(&cuda)
        .map(|(((x, _, w), plan), s)| baseline::Buffers::new(s, plan, x, w, shape.hidden))
        .collect::<BenchResult<Vec<_>>>()?;
    let dispatch = time(&streams, warmup, iters, || {
        baseline::dispatch(comm, &cuda, &plans, &mut buffers, shape.hidden)
    })?;
    let combine = time(&streams, warmup, iters, || {
        baseline::combine(comm, &cuda, &plans, &mut buffers, shape.hidden, shape.top_k)
    })?;
    let mut correct = true;
    for (r, (x, idx, w)) in inputs.iter().enumerate() {
        let got = cuda[r].clone_dtoh(&buffers[r].out)?;
        correct &= got == expected(&shape, inputs.len(), x, idx, w, false);
    }
    let bytes = plans[0].order.len() * 2 * shape.hidden;
    let row = |operation, median_us| Row {
        shape,
        contender: "permute+send/recv".into(),
        operation,
        median_us,
        bytes,
        correct,
    };
    Ok(vec![row("dispatch", dispatch), row("combine", combine)])
}

fn main() -> BenchResult<()> {
    let gpus = cudajit::gpu_count().unwrap_or(0);
    if gpus < 2 {
        println!("SKIPPED: the MoE benchmark needs 2 or more GPUs, this machine has {gpus}");
        return Ok(());
    }
    // Before NCCL is loaded and before any other thread starts.
    disable_nvls();
    let (warmup, iters) = (env_usize("WARMUP", 5), env_usize("ITERS", 30).max(20));
    let nccl = LoadedNccl::global()?;
    let comm = Communicator::init_all(&nccl, &(0..gpus).collect::<Vec<_>>())?;
    let dev_comm = comm.create_dev_comm(&DevCommRequirements::lsa_barriers(132))?;
    println!(
        "{gpus} GPUs, NCCL {}, median of {iters} after {warmup}",
        nccl.version()
    );
    let mut rows = Vec::new();
    for shape in SHAPES {
        let inputs: Vec<_> = (0..gpus)
            .map(|r| {
                let (idx, w) = routing(&shape, r);
                (tokens(&shape, r), idx, w)
            })
            .collect();
        rows.extend(cudajit_rows(
            &comm,
            &dev_comm,
            shape,
            DispatchFormat::Bf16,
            &inputs,
            warmup,
            iters,
        )?);
        rows.extend(cudajit_rows(
            &comm,
            &dev_comm,
            shape,
            DispatchFormat::Fp8E4m3,
            &inputs,
            warmup,
            iters,
        )?);
        rows.extend(baseline_rows(&comm, shape, &inputs, warmup, iters)?);
    }
    let mut csv = String::from(
        "mode,experts,hidden,top_k,tokens,contender,operation,median_us,bytes,gb_per_s,correct\n",
    );
    println!(
        "{:<16} {:>7} {:>6} {:>6} {:<18} {:<9} {:>10} {:>8} check",
        "mode", "experts", "hidden", "tokens", "contender", "operation", "median µs", "GB/s",
    );
    for r in &rows {
        let gbps = r.bytes as f64 / (r.median_us * 1e3);
        let mode = format!("{:?}", r.shape.mode);
        println!(
            "{mode:<16} {:>7} {:>6} {:>6} {:<18} {:<9} {:>10.1} {:>8.1} {}",
            r.shape.experts,
            r.shape.hidden,
            r.shape.tokens,
            r.contender,
            r.operation,
            r.median_us,
            gbps,
            if r.correct { "ok" } else { "WRONG" }
        );
        csv += &format!(
            "{mode},{},{},{},{},{},{},{:.2},{},{:.2},{}\n",
            r.shape.experts,
            r.shape.hidden,
            r.shape.top_k,
            r.shape.tokens,
            r.contender,
            r.operation,
            r.median_us,
            r.bytes,
            gbps,
            r.correct
        );
    }
    std::fs::write(out_dir().join("moe_bench.csv"), csv)?;
    dev_comm.close()?;
    comm.close()?;
    if rows.iter().any(|r| !r.correct) {
        return Err("a contender's combined tokens differ from the host's".into());
    }
    Ok(())
}
