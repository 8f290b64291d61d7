//! M-to-N resharding (`cudajit::nccl::m2n`) on GPUs: every GPU of this machine in one
//! process (`ncclCommInitAll`), the placement pairs of tests/m2n_sim.rs over meshes sized
//! for the machine's GPUs, every form (staged, a caller's window, distributed tensors),
//! every destination element compared with the host reference of tests/m2n_cases/.
//!
//! NCCL 2.28's device API needs at least two local ranks: with fewer than two GPUs (or
//! none) every test skips with the reason. On the GPU machine, with the system NCCL:
//! `CUDAJIT_NCCL_LIBRARY=/usr/lib/x86_64-linux-gnu/libnccl.so.2 target/debug/deps/m2n_gpu-*`.

mod common;
mod m2n_cases;

use cudajit::bf16;
use cudajit::f16;
use cudajit::nccl::m2n::{M2nConfig, M2nRanks, Placement, ReduceOp};

use common::gpus;
use m2n_cases::{case, layout, run};
use Placement::{Partial, Replicate, Shard};

/// Runs `body` with every GPU of the machine as the ranks (their number given), with a
/// device communicator for the cases' grid (3 CTAs); skips where there are not 2 GPUs.
fn with_gpu_ranks(body: impl FnOnce(M2nRanks<'_>, usize)) {
    let _gpus = gpus::lock();
    let Some(comm) = gpus::gpus_or_skip() else {
        return;
    };
    let config = M2nConfig {
        ctas: 3,
        threads: 64,
    };
    let dev_comm = comm
        .create_dev_comm(&config.requirements())
        .expect("a device communicator");
    let n = comm.n_ranks() as usize;
    body(
        M2nRanks::Gpu {
            comm: &comm,
            dev_comm: &dev_comm,
        },
        n,
    );
    dev_comm.close().unwrap();
    comm.close().unwrap();
}

#[test]
fn shard_and_replicate_pairs_on_every_gpu() {
    with_gpu_ranks(|ranks, n| {
        let rows = layout(&[n], 0..n, &[Shard(0)]);
        let cols = layout(&[n], 0..n, &[Shard(1)]);
        let replicate = layout(&[n], 0..n, &[Replicate]);
        let reversed = layout(&[n], (0..n).rev(), &[Shard(0)]);
        run::<f32>(ranks, &case(n, &[11, 7], rows.clone(), cols.clone()));
        run::<bf16>(ranks, &case(n, &[64, 96], cols.clone(), rows.clone()));
        run::<f16>(ranks, &case(n, &[9, 40], cols, replicate.clone()));
        run::<bf16>(ranks, &case(n, &[33, 16], replicate, reversed));
        // M ≠ N: one rank to all, and all to the last one.
        let first = layout(&[1], [0], &[Replicate]);
        let last = layout(&[1], [n - 1], &[Replicate]);
        run::<f32>(ranks, &case(n, &[5, 13], first, rows.clone()));
        run::<u8>(ranks, &case(n, &[7, 19], rows, last));
    });
}

#[test]
fn partial_sources_on_every_gpu() {
    with_gpu_ranks(|ranks, n| {
        let sum = layout(&[n], 0..n, &[Partial(ReduceOp::Sum)]);
        let max = layout(&[n], 0..n, &[Partial(ReduceOp::Max)]);
        let replicate = layout(&[n], (0..n).rev(), &[Replicate]);
        let rows = layout(&[n], 0..n, &[Shard(0)]);
        run::<bf16>(ranks, &case(n, &[16, 24], sum.clone(), replicate.clone()));
        run::<f32>(ranks, &case(n, &[10, 3], sum, rows.clone()));
        run::<f16>(ranks, &case(n, &[10, 8], max, rows));
    });
}

#[test]
fn two_dimensional_meshes_on_every_even_number_of_gpus() {
    with_gpu_ranks(|ranks, n| {
        if !n.is_multiple_of(2) {
            eprintln!("skipped: {n} GPUs (a 2-D mesh of n/2 × 2 needs an even number)");
            return;
        }
        let a = layout(&[n / 2, 2], 0..n, &[Shard(0), Shard(1)]);
        let b = layout(&[2, n / 2], (0..n).rev(), &[Shard(1), Replicate]);
        run::<bf16>(ranks, &case(n, &[24, 40], a, b));
        // The transform at a size the GPUs move in many runs.
        let cols = layout(&[n], 0..n, &[Shard(1)]);
        let rows = layout(&[n / 2, 2], (0..n).rev(), &[Shard(0), Replicate]);
        run::<bf16>(ranks, &case(n, &[512, 1792], cols, rows));
    });
}
