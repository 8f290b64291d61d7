//! M-to-N resharding on every GPU of this machine (2 or more, one process): cudajit's
//! reshard (`cudajit::nccl::m2n`, through the staging windows and straight from a
//! registered window) against the same transform written with NCCL host collectives and
//! local copies (baseline.rs: all-to-all + concatenation, all-gather (+ concatenation),
//! reduce-scatter), and against `cuMemcpyPeerAsync` of the same bytes (the bandwidth
//! bound), on a `[4096 × 14336]` bf16 weight. CUDA events on every rank's stream around
//! each operation (the slowest rank's time), the median of `ITERS` (default 30, at least
//! 20) after `WARMUP` (default 5); every contender's result checked against the host's.
//!
//!     cargo build --release --features m2n --example m2n_bench && target/release/examples/m2n_bench
//!     scripts/m2n-stage.sh, then on the GPU machine: bash .gpu-m2n/m2n-run.sh
//!
//! Bandwidth: the bytes a rank receives from its peers (the plan's
//! `bytes_received_from_peers`, the most of any rank) over the time. With fewer than 2
//! GPUs it prints SKIPPED and exits 0. Results: a table, and `m2n_bench.csv` in `$OUT`
//! (or the working directory).

mod baseline;
#[path = "../bench/multi_gpu.rs"]
mod multi_gpu;
#[path = "../bench/peer.rs"]
mod peer;

use std::sync::Arc;

use baseline::Baseline;
use cudajit::bf16;
use cudajit::cudarc::driver::CudaStream;
use cudajit::nccl::m2n::{
    plan, DType, DeviceMesh, M2nConfig, M2nRanks, Placement, ReduceOp, ReshardHandle, ReshardPlan,
    TensorSpec,
};
use cudajit::nccl::{Communicator, LoadedNccl};
use cudajit::Stream;
use multi_gpu::{default_streams, disable_nvls, env_usize, out_dir, time, Result as BenchResult};

const ROWS: usize = 4096;
const COLS: usize = 14336;

/// One transform of a `[ROWS × COLS]` tensor over every rank (a 1-D mesh): its name, the
/// source and destination placements, the baseline that does it with NCCL collectives.
struct Case {
    name: &'static str,
    source: Placement,
    destination: Placement,
    baseline: Baseline,
}

fn cases() -> [Case; 4] {
    use Baseline::*;
    use Placement::{Partial, Replicate, Shard};
    let case = |name, source, destination, baseline| Case {
        name,
        source,
        destination,
        baseline,
    };
    [
        case(
            "Shard(1)→Shard(0)",
            Shard(1),
            Shard(0),
            AllToAllColumnsToRows,
        ),
        case("Shard(1)→Replicate", Shard(1), Replicate, AllGatherColumns),
        case("Shard(0)→Replicate", Shard(0), Replicate, AllGatherRows),
        case(
            "Partial(sum)→Shard(0)",
            Partial(ReduceOp::Sum),
            Shard(0),
            ReduceScatterRows,
        ),
    ]
}

/// The value of partial value `p` at (row, col): small integers, so that sums of up to 8
/// are exact in bf16 in any order.
fn value(p: usize, row: usize, col: usize) -> f32 {
    ((row * 31 + col * 7 + p * 13) % 31) as f32 - 15.0
}

/// `rank`'s shard of `spec`, row-major: partial value `p` of the global tensor (`p` the
/// rank's partial index), or the reduced tensor when `reduced` of `partials` values.
fn shard(spec: &TensorSpec, rank: usize, partials: Option<usize>) -> Vec<bf16> {
    let Some(block) = spec.local_block(rank) else {
        return Vec::new();
    };
    let p = spec.partial_index(rank).unwrap_or(0);
    let (r0, c0, cols) = (block.offset[0], block.offset[1], block.len[1]);
    (0..block.volume())
        .map(|k| {
            let (r, c) = (r0 + k / cols, c0 + k % cols);
            let x = match partials {
                Some(n) => (0..n).map(|q| value(q, r, c)).sum(),
                None => value(p, r, c),
            };
            bf16::from_f32(x)
        })
        .collect()
}

/// One result line.
struct Row {
    case: &'static str,
    contender: String,
    median_us: f64,
    bytes: usize,
    correct: bool,
}

/// Every destination rank's shard read back and compared with the reference.
fn check(
    n: usize,
    dst: &TensorSpec,
    partials: usize,
    read: impl Fn(usize, usize) -> BenchResult<Vec<bf16>>,
) -> BenchResult<bool> {
    let mut correct = true;
    for rank in 0..n {
        let expected = shard(dst, rank, Some(partials));
        let got = read(rank, expected.len())?;
        if got != expected {
            let k = (0..expected.len())
                .find(|&k| got[k] != expected[k])
                .unwrap_or(0);
            eprintln!(
                "rank {rank}: element {k} is {} instead of {}",
                got[k], expected[k]
            );
            correct = false;
        }
    }
    Ok(correct)
}

#[allow(clippy::too_many_arguments)]
fn run_case(
    comm: &Communicator,
    dev_comm: &cudajit::nccl::DevComm,
    config: M2nConfig,
    case: &Case,
    cuda: &[Arc<CudaStream>],
    streams: &[Stream],
    (warmup, iters): (usize, usize),
    rows: &mut Vec<Row>,
) -> BenchResult<()> {
    let n = streams.len();
    let mesh = DeviceMesh::line((0..n).collect())?;
    let src = TensorSpec::new(&[ROWS, COLS], DType::Bf16, mesh.clone(), vec![case.source])?;
    let dst = TensorSpec::new(&[ROWS, COLS], DType::Bf16, mesh, vec![case.destination])?;
    let partials = src.partials();
    let plan: ReshardPlan = plan(&src, &dst)?;
    let received: Vec<usize> = (0..n).map(|r| plan.bytes_received_from_peers(r)).collect();
    let bytes = received.iter().copied().max().unwrap_or(0);
    let ranks = M2nRanks::Gpu { comm, dev_comm };
    let handle = ReshardHandle::new(ranks, plan, config)?;
    let largest = (0..n).map(|r| src.local_elements(r)).max().unwrap_or(0);
    let window = ranks.alloc::<bf16>(largest)?;
    for r in 0..n {
        let s = shard(&src, r, None);
        handle.write_source(r, &s)?;
        window.copy_from_host(r, &s)?;
    }
    for staged in [true, false] {
        let us = time(streams, warmup, iters, || {
            for (r, s) in streams.iter().enumerate() {
                if staged {
                    handle.reshard(r, s)?;
                } else {
                    handle.reshard_with_window(r, s, &window)?;
                }
            }
            Ok(())
        })?;
        let correct = check(n, &dst, partials, |r, _| {
            Ok(handle.read_destination::<bf16>(r)?)
        })?;
        rows.push(Row {
            case: case.name,
            contender: if staged {
                "cudajit reshard"
            } else {
                "cudajit reshard_with_window"
            }
            .into(),
            median_us: us,
            bytes,
            correct,
        });
    }
    handle.close()?;
    window.close()?;

    let buffers = baseline::Buffers::new(comm, ROWS * COLS)?;
    for r in 0..n {
        buffers.source.copy_from_host(r, &shard(&src, r, None))?;
    }
    let us = time(streams, warmup, iters, || {
        case.baseline.run(comm, cuda, &buffers, ROWS, COLS)
    })?;
    let correct = check(n, &dst, partials, |r, len| {
        let mut out = vec![bf16::ZERO; len];
        buffers.out.copy_to_host(r, &mut out)?;
        Ok(out)
    })?;
    rows.push(Row {
        case: case.name,
        contender: case.baseline.name().into(),
        median_us: us,
        bytes,
        correct,
    });
    let us = time(streams, warmup, iters, || {
        baseline::memcpy_peer(cuda, &buffers, &received)
    })?;
    rows.push(Row {
        case: case.name,
        contender: "cuMemcpyPeerAsync (bound)".into(),
        median_us: us,
        bytes,
        correct: true,
    });
    buffers.source.close()?;
    buffers.received.close()?;
    buffers.out.close()?;
    Ok(())
}

fn main() -> BenchResult<()> {
    let gpus = cudajit::gpu_count().unwrap_or(0);
    if gpus < 2 {
        println!("SKIPPED: {gpus} GPU(s), the benchmark needs 2 or more");
        return Ok(());
    }
    if !ROWS.is_multiple_of(gpus) || !COLS.is_multiple_of(gpus) {
        return Err(
            format!("{gpus} GPUs: the baselines need even shards of [{ROWS} × {COLS}]").into(),
        );
    }
    // Before NCCL is loaded and before any other thread starts.
    disable_nvls();
    let warmup = env_usize("WARMUP", 5);
    let iters = env_usize("ITERS", 30).max(20);
    let config = M2nConfig::default();
    let nccl = LoadedNccl::global()?;
    let comm = Communicator::init_all(&nccl, &(0..gpus).collect::<Vec<_>>())?;
    let dev_comm = comm.create_dev_comm(&config.requirements())?;
    let (cuda, streams) = default_streams(&comm)?;
    println!(
        "{gpus} GPUs, [{ROWS} × {COLS}] bf16, {iters} iterations after {warmup}; grid {} × {}",
        config.ctas, config.threads
    );
    let mut rows = Vec::new();
    for case in cases() {
        run_case(
            &comm,
            &dev_comm,
            config,
            &case,
            &cuda,
            &streams,
            (warmup, iters),
            &mut rows,
        )?;
    }
    let mut csv = String::from("case,contender,median_us,bytes_from_peers,gb_per_s,correct\n");
    println!(
        "{:<24} {:<32} {:>10} {:>12} {:>8} correct",
        "case", "contender", "µs", "bytes", "GB/s"
    );
    for r in &rows {
        let gbps = r.bytes as f64 / r.median_us / 1e3;
        println!(
            "{:<24} {:<32} {:>10.1} {:>12} {:>8.1} {}",
            r.case, r.contender, r.median_us, r.bytes, gbps, r.correct
        );
        csv.push_str(&format!(
            "{},{},{:.2},{},{:.2},{}\n",
            r.case, r.contender, r.median_us, r.bytes, gbps, r.correct
        ));
    }
    std::fs::write(out_dir().join("m2n_bench.csv"), csv)?;
    if rows.iter().any(|r| !r.correct) {
        return Err("a contender's result differs from the reference".into());
    }
    Ok(())
}
