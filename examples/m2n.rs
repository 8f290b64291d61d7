//! M-to-N resharding with `cudajit::nccl::m2n`: a weight sharded by columns (`Shard(1)`)
//! over every rank, as a training job's tensor parallelism holds it, moved to rows
//! (`Shard(0)`) over half as many shards with a replica each (a 2-D mesh of `n/2 × 2`,
//! `[Shard(0), Replicate]`, its ranks in the other order), as an inference engine of
//! another parallelism wants it. Both execution forms: through the staging windows
//! (`reshard`) and straight from a window registered around the source shards
//! (`reshard_with_window`); every destination shard checked element by element against
//! the host's slice of the global tensor.
//!
//!     cargo run --release --features m2n --example m2n                         # every GPU (2 or more, an even number)
//!     cargo run --features m2n --example m2n                                   # no GPU: 4 simulated ranks
//!     CUDAJIT_BACKEND=sim SIM_RANKS=8 cargo run --features m2n --example m2n   # 8 simulated ranks
//!
//! On GPUs the weight is the issue's `[4096 × 14336]` bf16 (an MLP projection of a
//! 7–8B model); on simulated ranks `[256 × 448]`.

#[path = "common/ranks.rs"]
mod ranks;

use std::error::Error;

use cudajit::bf16;
use cudajit::nccl::m2n::{
    plan, DType, DeviceMesh, M2nConfig, M2nRanks, Placement, ReshardHandle, TensorSpec,
};
use cudajit::Stream;
use ranks::{simulate, Ranks};

type Result<T> = std::result::Result<T, Box<dyn Error>>;

impl Ranks {
    fn m2n(&self) -> M2nRanks<'_> {
        match self {
            Ranks::Gpu { comm, dev_comm } => M2nRanks::Gpu { comm, dev_comm },
            Ranks::Sim(world) => M2nRanks::Sim(world),
        }
    }

    fn synchronize(&self, streams: &[Stream]) -> Result<()> {
        match self {
            Ranks::Gpu { .. } => streams.iter().try_for_each(|s| s.synchronize())?,
            Ranks::Sim(world) => world.synchronize()?,
        }
        Ok(())
    }
}

/// The weight's element at (row, column): distinct for every column of a row and exact
/// in bf16.
fn weight(row: usize, col: usize) -> bf16 {
    bf16::from_f32(((row * 31 + col * 7) % 251) as f32 - 125.0)
}

/// The block of `spec` that `rank` holds, row-major, from the global weight.
fn shard_of(spec: &TensorSpec, rank: usize) -> Vec<bf16> {
    let Some(block) = spec.local_block(rank) else {
        return Vec::new();
    };
    let (r0, c0) = (block.offset[0], block.offset[1]);
    let (rows, cols) = (block.len[0], block.len[1]);
    (0..rows)
        .flat_map(|r| (0..cols).map(move |c| weight(r0 + r, c0 + c)))
        .collect()
}

fn main() -> Result<()> {
    let sim = simulate();
    let (config, shape) = if sim {
        let config = M2nConfig {
            ctas: 4,
            threads: 128,
        };
        (config, [256usize, 448])
    } else {
        (M2nConfig::default(), [4096, 14336])
    };
    let ranks = Ranks::new(sim, &config.requirements())?;
    let m2n = ranks.m2n();
    let n = m2n.nranks();
    if !n.is_multiple_of(2) {
        return Err(
            format!("{n} ranks: this example needs an even number (a mesh of n/2 × 2)").into(),
        );
    }

    // Columns over ranks 0..n → rows over n/2 shards of 2 replicas, ranks n-1..0.
    let src = TensorSpec::new(
        &shape,
        DType::Bf16,
        DeviceMesh::line((0..n).collect())?,
        vec![Placement::Shard(1)],
    )?;
    let dst = TensorSpec::new(
        &shape,
        DType::Bf16,
        DeviceMesh::new(&[n / 2, 2], (0..n).rev().collect())?,
        vec![Placement::Shard(0), Placement::Replicate],
    )?;
    let plan = plan(&src, &dst)?;
    println!(
        "[{} × {}] bf16: Shard(1) over {n} ranks → [Shard(0), Replicate] over a {} × 2 mesh: {} pieces, rank 0 sends {} bytes and receives {} from peers",
        shape[0],
        shape[1],
        n / 2,
        plan.pieces().len(),
        plan.bytes_sent_by(0),
        plan.bytes_received_from_peers(0),
    );
    let handle = ReshardHandle::new(m2n, plan, config)?;
    let streams: Vec<Stream> = (0..n)
        .map(|r| handle.stream(r))
        .collect::<std::result::Result<_, _>>()?;

    // The window form's source: a window the program registers around its shards.
    let largest = (0..n).map(|r| src.local_elements(r)).max().unwrap_or(0);
    let window = m2n.alloc::<bf16>(largest.max(1))?;
    for rank in 0..n {
        let shard = shard_of(&src, rank);
        handle.write_source(rank, &shard)?;
        window.copy_from_host(rank, &shard)?;
    }

    for staged in [true, false] {
        let form = if staged {
            "reshard"
        } else {
            "reshard_with_window"
        };
        let starts = streams
            .iter()
            .map(Stream::record_event)
            .collect::<std::result::Result<Vec<_>, _>>()?;
        for (rank, stream) in streams.iter().enumerate() {
            if staged {
                handle.reshard(rank, stream)?;
            } else {
                handle.reshard_with_window(rank, stream, &window)?;
            }
        }
        let ends = streams
            .iter()
            .map(Stream::record_event)
            .collect::<std::result::Result<Vec<_>, _>>()?;
        ranks.synchronize(&streams)?;
        let mut slowest = 0f32;
        for (s, e) in starts.iter().zip(&ends) {
            slowest = slowest.max(s.elapsed_ms(e)?);
        }
        let mut checked = 0;
        for rank in 0..n {
            let got = handle.read_destination::<bf16>(rank)?;
            let expected = shard_of(&dst, rank);
            if let Some(k) = (0..expected.len()).find(|&k| got[k] != expected[k]) {
                return Err(format!(
                    "{form}: rank {rank}, element {k}: {} instead of {}",
                    got[k], expected[k]
                )
                .into());
            }
            checked += expected.len();
        }
        println!("{form}: {checked} elements over {n} ranks match the reference ({slowest:.3} ms, slowest rank)");
    }
    Ok(())
}
