//! NCCL's device API on the CPU simulator (`cudajit::nccl::sim`): the LSA examples'
//! kernels with 2, 4 and 8 simulated ranks in this process, checked against host
//! references, and what the simulation reports (a rank skipping a barrier, an access
//! outside a window). No GPU and no NCCL library needed.

mod common;

#[path = "../examples/lsa/kernels.rs"]
mod kernels;

use cudajit::nccl::device::{self as nccl, DevComm, MemoryOrder, Window};
use cudajit::nccl::sim::{SimSymmetricBuffer, SimWorld};
use cudajit::prelude::*;
use cudajit::simulator::SimError;
use cudajit::{bf16, f16, BufferElement, Error};

use common::sim::world;
use kernels::{
    all_reduce_one_shot, all_reduce_one_shot_16, all_reduce_one_shot_64, all_reduce_one_shot_bf16,
    all_reduce_two_shot, all_reduce_two_shot_bf16, peer_read,
};

const CTAS: u32 = 3;
const THREADS: u32 = 64;

/// Input at element 0, output at the next 4096-byte boundary, as the examples lay it out.
fn layout<T>(count: usize) -> (usize, usize) {
    let size = std::mem::size_of::<T>();
    let out_offset = (count * size).div_ceil(4096) * 4096;
    (out_offset, out_offset / size + count)
}

fn fill<T: BufferElement>(
    world: &SimWorld,
    buffer: &SimSymmetricBuffer<T>,
    count: usize,
    value: impl Fn(usize, usize) -> T,
) {
    for rank in 0..world.nranks() {
        let data: Vec<T> = (0..count).map(|k| value(rank, k)).collect();
        buffer.copy_from_host(rank, &data).unwrap();
    }
}

/// A launch of one of the `peer_read` kernels: (stream, config, comm, window, count,
/// out_offset).
type PeerRead = fn(&cudajit::SimStream, LaunchConfig, DevComm, Window, usize, usize);

fn peer_read_case(nranks: usize, count: usize) {
    let launch: PeerRead = |stream, config, comm, window, count, out_offset| {
        peer_read::launch(stream, config, comm, window, count, out_offset).unwrap();
    };
    peer_read_with(nranks, count, LaunchConfig::new(CTAS, THREADS), launch);
}

/// Runs `launch` on every rank over `count` elements and checks every rank read its next
/// peer's input.
fn peer_read_with(nranks: usize, count: usize, config: LaunchConfig, launch: PeerRead) {
    let world = world(nranks);
    let (out_offset, elems) = layout::<f32>(count);
    let buffer = world.alloc_symmetric::<f32>(elems).unwrap();
    let value = |rank: usize, i: usize| (rank * 1000) as f32 + (i % 977) as f32;
    fill(&world, &buffer, count, value);
    for rank in 0..nranks {
        launch(
            world.stream(rank),
            config,
            world.dev_comm(rank),
            buffer.window(rank),
            count,
            out_offset,
        );
    }
    world.synchronize().unwrap();
    let report = world.last_report().unwrap();
    assert_eq!(report.blocks, u64::from(config.grid.x) * nranks as u64);
    for rank in 0..nranks {
        let all = buffer.to_vec(rank).unwrap();
        let peer = (rank + 1) % nranks;
        let got = &all[out_offset / 4..];
        for (k, g) in got.iter().enumerate() {
            assert_eq!(
                *g,
                value(peer, k),
                "{nranks} ranks, rank {rank}, element {k}"
            );
        }
        // The input is untouched.
        assert_eq!(all[count - 1], value(rank, count - 1));
    }
}

fn all_reduce_case<T>(
    nranks: usize,
    count: usize,
    two_shot: bool,
    value: impl Fn(usize, usize) -> T,
    sum: impl Fn(T, T) -> T,
) where
    T: BufferElement + DeviceScalar + core::ops::Add<Output = T> + PartialEq + std::fmt::Debug,
{
    let world = world(nranks);
    let (out_offset, elems) = layout::<T>(count);
    let buffer = world.alloc_symmetric::<T>(elems).unwrap();
    fill(&world, &buffer, count, &value);
    for rank in 0..nranks {
        let (stream, comm, window) = (
            world.stream(rank),
            world.dev_comm(rank),
            buffer.window(rank),
        );
        let config = LaunchConfig::new(CTAS, THREADS);
        if two_shot {
            all_reduce_two_shot::launch::<T>(stream, config, comm, window, count, out_offset)
        } else {
            all_reduce_one_shot::launch::<T>(stream, config, comm, window, count, out_offset)
        }
        .unwrap();
    }
    world.synchronize().unwrap();
    for rank in 0..nranks {
        let all = buffer.to_vec(rank).unwrap();
        let got = &all[out_offset / std::mem::size_of::<T>()..];
        for (k, g) in got.iter().enumerate() {
            let want = (1..nranks).fold(value(0, k), |s, r| sum(s, value(r, k)));
            assert_eq!(
                *g, want,
                "{nranks} ranks, two-shot {two_shot}, rank {rank}, element {k} of {count}"
            );
        }
    }
}

fn f32_value(rank: usize, i: usize) -> f32 {
    ((rank * 7 + i) % 1024) as f32
}

fn i32_value(rank: usize, i: usize) -> i32 {
    (i as i32)
        .wrapping_mul(31)
        .wrapping_add(rank as i32 * 1_000_003)
}

// Counts: vectors and a tail of 1 to 3 (odd), more vectors than the grid's threads on one
// rank's share, and fewer vectors than ranks (two-shot shares of zero).
const COUNTS: [usize; 3] = [1027, 6, 4 * 3 * 64 * 2 + 3];

#[test]
fn peer_read_2_4_8_ranks() {
    for nranks in [2, 4, 8] {
        for count in COUNTS {
            peer_read_case(nranks, count);
        }
    }
}

/// The sessions of the other cooperative groups (a warp, a span of 4 warps, half warps, a
/// thread): the simulator's barrier is the whole block's on every rank, which these
/// kernels (every thread at the same barrier calls) pass as on GPUs.
#[test]
fn peer_read_with_warp_warp_span_lanes_and_thread_barriers() {
    let kernels: [(&str, PeerRead); 4] = [
        ("warps", |stream, config, comm, window, count, out| {
            kernels::peer_read_warps::launch(stream, config, comm, window, count, out).unwrap();
        }),
        ("warp spans", |stream, config, comm, window, count, out| {
            kernels::peer_read_warp_spans::launch(stream, config, comm, window, count, out)
                .unwrap();
        }),
        ("half warps", |stream, config, comm, window, count, out| {
            kernels::peer_read_half_warps::launch(stream, config, comm, window, count, out)
                .unwrap();
        }),
        ("threads", |stream, config, comm, window, count, out| {
            kernels::peer_read_threads::launch(stream, config, comm, window, count, out).unwrap();
        }),
    ];
    // Two spans of 4 warps per block (span ids 0 and 1).
    let config = LaunchConfig::new(CTAS, 256);
    for (name, launch) in kernels {
        for nranks in [2, 4] {
            for count in COUNTS {
                eprintln!("{name}: {nranks} ranks, {count} elements");
                peer_read_with(nranks, count, config, launch);
            }
        }
    }
}

/// A lanes session whose mask leaves out the calling lane.
#[kernel]
fn lanes_without_me(comm: DevComm) {
    let mut barrier = [0u64; 8];
    nccl::lsa_barrier_init_lanes(&mut barrier, &comm, 0xffff_fffe, block_idx().x);
    nccl::lsa_barrier_sync_lanes(&mut barrier, MemoryOrder::Acquire);
    nccl::lsa_barrier_destroy_lanes(&mut barrier);
}

/// A warp span with id 15 (named barrier 16 does not exist).
#[kernel]
fn warp_span_id_15(comm: DevComm) {
    let mut barrier = [0u64; 8];
    nccl::lsa_barrier_init_warp_span(&mut barrier, &comm, 0, 1, 15, block_idx().x);
    nccl::lsa_barrier_sync_warp_span(&mut barrier, MemoryOrder::Acquire);
    nccl::lsa_barrier_destroy_warp_span(&mut barrier);
}

/// A warp span of warps 0 and 1 called by every warp of the block.
#[kernel]
fn warp_span_outside(comm: DevComm) {
    let mut barrier = [0u64; 8];
    nccl::lsa_barrier_init_warp_span(&mut barrier, &comm, 0, 2, 0, block_idx().x);
    nccl::lsa_barrier_sync_warp_span(&mut barrier, MemoryOrder::Acquire);
    nccl::lsa_barrier_destroy_warp_span(&mut barrier);
}

/// A warp's session synchronised with the thread functions.
#[kernel]
fn warp_session_thread_sync(comm: DevComm) {
    let mut barrier = [0u64; 8];
    nccl::lsa_barrier_init_warp(&mut barrier, &comm, global_index() as u32 / 32);
    nccl::lsa_barrier_sync_thread(&mut barrier, MemoryOrder::Acquire);
    nccl::lsa_barrier_destroy_warp(&mut barrier);
}

/// The error of launching `launch` on both ranks of a 2-rank world.
fn misuse(
    block: u32,
    launch: fn(&cudajit::SimStream, LaunchConfig, DevComm) -> Result<(), Error>,
) -> String {
    let world = world(2);
    let mut result = Ok(());
    for rank in 0..2 {
        result = launch(
            world.stream(rank),
            LaunchConfig::new(1, block),
            world.dev_comm(rank),
        );
    }
    result.unwrap_err().to_string()
}

#[test]
fn misused_sessions_of_the_other_groups_are_reported() {
    let message = misuse(32, lanes_without_me::launch);
    assert!(
        message.contains("lane 0 starts a lanes session with lane mask 0xfffffffe"),
        "{message}"
    );
    let message = misuse(32, warp_span_id_15::launch);
    assert!(message.contains("warp span id 15"), "{message}");
    let message = misuse(96, warp_span_outside::launch);
    assert!(
        message.contains("(warp 2) starts a session of the warp span 0..2"),
        "{message}"
    );
    let message = misuse(32, warp_session_thread_sync::launch);
    assert!(
        message.contains("lsa_barrier_sync_thread on a session started by lsa_barrier_init_warp"),
        "{message}"
    );
}

#[test]
fn all_reduce_one_shot_f32_i32() {
    for nranks in [2, 4, 8] {
        for count in COUNTS {
            all_reduce_case(nranks, count, false, f32_value, |a, b| a + b);
            all_reduce_case(nranks, count, false, i32_value, i32::wrapping_add);
        }
    }
}

#[test]
fn all_reduce_two_shot_f32_i32() {
    for nranks in [2, 4, 8] {
        for count in COUNTS {
            all_reduce_case(nranks, count, true, f32_value, |a, b| a + b);
            all_reduce_case(nranks, count, true, i32_value, i32::wrapping_add);
        }
    }
}

/// Like `peer_read`'s entry barrier, but rank `skip` leaves before it.
#[kernel]
fn skips_barrier(comm: DevComm, window: Window, skip: i32) {
    let mut barrier = [0u64; 8];
    nccl::lsa_barrier_init(&mut barrier, &comm, block_idx().x);
    if nccl::rank(&comm) == skip {
        nccl::lsa_barrier_destroy(&mut barrier);
        return;
    }
    nccl::lsa_barrier_sync(&mut barrier, MemoryOrder::Acquire);
    let out = unsafe { slice_at_mut::<i32>(nccl::local_address(window, 0), 1) };
    if global_index() == 0 {
        out[0] = nccl::rank(&comm) + 1;
    }
    nccl::lsa_barrier_destroy(&mut barrier);
}

#[test]
fn a_rank_skipping_the_barrier_is_reported() {
    let world = world(4);
    let buffer = world.alloc_symmetric::<i32>(4).unwrap();
    let mut result = Ok(());
    for rank in 0..4 {
        result = skips_barrier::launch(
            world.stream(rank),
            LaunchConfig::new(2, 32),
            world.dev_comm(rank),
            buffer.window(rank),
            2,
        );
        if rank < 3 {
            assert!(result.is_ok(), "launches wait for the last rank's");
        }
    }
    let Err(Error::Simulator(error)) = result else {
        panic!("expected a simulator error, got {result:?}");
    };
    let message = error.to_string();
    assert!(
        matches!(error, SimError::BarrierDivergence { .. }),
        "{message}"
    );
    let site = error.site().unwrap();
    assert_eq!(site.kernel, "skips_barrier");
    assert_eq!(site.launch.as_deref(), Some("rank 0"));
    assert_eq!(site.block, [0, 0, 0]);
    assert!(message.contains("block (0, 0, 0) of rank 2"), "{message}");
    assert!(message.contains("lsa_barrier_sync"), "{message}");
    // Nothing waits afterwards, and the world runs again.
    world.synchronize().unwrap();
    for rank in 0..4 {
        skips_barrier::launch(
            world.stream(rank),
            LaunchConfig::new(2, 32),
            world.dev_comm(rank),
            buffer.window(rank),
            -1,
        )
        .unwrap();
    }
    for rank in 0..4 {
        assert_eq!(buffer.to_vec(rank).unwrap()[0], rank as i32 + 1);
    }
}

#[test]
fn a_missing_launch_is_reported_by_synchronize() {
    let world = world(2);
    let buffer = world.alloc_symmetric::<i32>(4).unwrap();
    skips_barrier::launch(
        world.stream(0),
        LaunchConfig::new(1, 32),
        world.dev_comm(0),
        buffer.window(0),
        -1,
    )
    .unwrap();
    let error = world.synchronize().unwrap_err().to_string();
    assert!(error.contains("waits for rank 1"), "{error}");
    assert!(world.stream(0).synchronize().is_err());
}

#[test]
fn mismatched_grids_and_windows_are_reported() {
    // Rank 1 launches a larger grid: its extra block's barrier never completes.
    let world = world(2);
    let buffer = world.alloc_symmetric::<i32>(4).unwrap();
    let mut result = Ok(());
    for rank in 0..2 {
        result = skips_barrier::launch(
            world.stream(rank),
            LaunchConfig::new(1 + rank as u32, 32),
            world.dev_comm(rank),
            buffer.window(rank),
            -1,
        );
    }
    let error = result.unwrap_err().to_string();
    assert!(
        error.contains("launches run together need one grid"),
        "{error}"
    );

    // Reading past the end of a peer's window.
    let count = 1024;
    let small = world.alloc_symmetric::<f32>(count).unwrap();
    let mut result = Ok(());
    for rank in 0..2 {
        result = peer_read::launch(
            world.stream(rank),
            LaunchConfig::new(1, 32),
            world.dev_comm(rank),
            small.window(rank),
            count,
            4096,
        );
    }
    let error = result.unwrap_err();
    let message = error.to_string();
    assert!(message.contains("invalid memory access"), "{message}");
    assert!(message.contains("part of window"), "{message}");
    // The rank's communicator must be its own.
    let mut result = Ok(());
    for rank in 0..2 {
        result = peer_read::launch(
            world.stream(rank),
            LaunchConfig::new(1, 32),
            world.dev_comm(0),
            small.window(rank),
            4,
            0,
        );
    }
    let message = result.unwrap_err().to_string();
    assert!(
        message.contains("passes the DevComm of rank 0"),
        "{message}"
    );
}

/// Every rank stores its world rank into slot `rank` of every peer's window (through
/// `peer_address` with world ranks), between a split barrier (`arrive`, then `wait`) and a
/// sync; after the sync, block 0 copies what the peers stored to slots 16.. (which only a
/// working barrier makes complete: block 0 of rank 0 runs first) and records the team.
#[kernel]
fn all_gather_ranks(comm: DevComm, window: Window, checks: usize) {
    let mut barrier = [0u64; 8];
    nccl::lsa_barrier_init(&mut barrier, &comm, block_idx().x);
    nccl::lsa_barrier_arrive(&mut barrier, MemoryOrder::Release);
    nccl::lsa_barrier_wait(&mut barrier, MemoryOrder::Acquire);
    let me = nccl::rank(&comm);
    let n = nccl::nranks(&comm);
    if block_idx().x == 0 && thread_idx().x == 0 {
        let mut lsa = 0;
        while lsa < nccl::lsa_size(&comm) {
            let peer = nccl::lsa_rank_to_world(&comm, lsa);
            let slot = unsafe {
                slice_at_mut::<i32>(nccl::peer_address(window, (me as usize) * 4, peer), 1)
            };
            slot[0] = me * 10 + 1;
            lsa += 1;
        }
    }
    nccl::lsa_barrier_sync(&mut barrier, MemoryOrder::AcqRel);
    let mine = unsafe { slice_at_mut::<i32>(nccl::local_address(window, 0), checks) };
    if block_idx().x == 0 && thread_idx().x == 0 {
        let mut r = 0;
        while r < n as usize {
            mine[16 + r] = mine[r];
            r += 1;
        }
        mine[31] = nccl::lsa_rank(&comm) * 100 + n;
    }
    nccl::lsa_barrier_destroy(&mut barrier);
}

#[test]
fn split_barriers_peer_addresses_and_teams() {
    for nranks in [2, 4, 8] {
        let world = world(nranks);
        let buffer = world.alloc_symmetric::<i32>(32).unwrap();
        for rank in 0..nranks {
            all_gather_ranks::launch(
                world.stream(rank),
                LaunchConfig::new(2, 64),
                world.dev_comm(rank),
                buffer.window(rank),
                32,
            )
            .unwrap();
        }
        for rank in 0..nranks {
            let got = buffer.to_vec(rank).unwrap();
            let want: Vec<i32> = (0..nranks as i32).map(|r| r * 10 + 1).collect();
            assert_eq!(got[..nranks], want[..], "{nranks} ranks, rank {rank}");
            assert_eq!(
                got[16..16 + nranks],
                want[..],
                "{nranks} ranks, rank {rank}"
            );
            assert_eq!(got[31], rank as i32 * 100 + nranks as i32);
        }
    }
}

/// `lsa_barrier_wait` without `arrive`: a misuse the simulation reports.
#[kernel]
fn wait_without_arrive(comm: DevComm) {
    let mut barrier = [0u64; 8];
    nccl::lsa_barrier_init(&mut barrier, &comm, block_idx().x);
    nccl::lsa_barrier_wait(&mut barrier, MemoryOrder::Acquire);
    nccl::lsa_barrier_destroy(&mut barrier);
}

#[test]
fn barrier_session_misuse_is_reported() {
    let world = world(2);
    let mut result = Ok(());
    for rank in 0..2 {
        result = wait_without_arrive::launch(
            world.stream(rank),
            LaunchConfig::new(1, 32),
            world.dev_comm(rank),
        );
    }
    let message = result.unwrap_err().to_string();
    assert!(
        message.contains("lsa_barrier_wait without lsa_barrier_arrive"),
        "{message}"
    );
    assert!(message.contains("rank 0, block (0, 0, 0)"), "{message}");
}

#[test]
fn extern_calls_without_a_world_are_reported() {
    // A DevComm of a world on a plain simulator stream: no host for NCCL's functions.
    let world = world(2);
    let stream = cudajit::SimStream::new();
    let error = wait_without_arrive::launch(&stream, LaunchConfig::new(1, 32), world.dev_comm(0))
        .unwrap_err()
        .to_string();
    assert!(error.contains("has no host implementation"), "{error}");
    assert!(error.contains("lsa_barrier_init"), "{error}");
}

/// Runs `launch` on every rank of a 4-rank world over `count` elements of
/// `value(rank, k)` and checks every rank's sum in rank order.
fn reduce_case<T: BufferElement + DeviceScalar + PartialEq + std::fmt::Debug>(
    count: usize,
    value: impl Fn(usize, usize) -> T,
    sum: impl Fn(T, T) -> T,
    launch: impl Fn(&SimWorld, &SimSymmetricBuffer<T>, usize, usize) -> Result<(), Error>,
) {
    let want = |k: usize, nranks: usize| (1..nranks).fold(value(0, k), |s, r| sum(s, value(r, k)));
    reduce_case_against(count, &value, want, launch);
}

/// [`reduce_case`] with element `k`'s expected sum over `nranks` ranks given by `want`.
fn reduce_case_against<T: BufferElement + DeviceScalar + PartialEq + std::fmt::Debug>(
    count: usize,
    value: impl Fn(usize, usize) -> T,
    want: impl Fn(usize, usize) -> T,
    launch: impl Fn(&SimWorld, &SimSymmetricBuffer<T>, usize, usize) -> Result<(), Error>,
) {
    let nranks = 4;
    let world = world(nranks);
    let (out_offset, elems) = layout::<T>(count);
    let buffer = world.alloc_symmetric::<T>(elems).unwrap();
    fill(&world, &buffer, count, &value);
    for rank in 0..nranks {
        launch(&world, &buffer, rank, out_offset).unwrap();
    }
    world.synchronize().unwrap();
    let size = std::mem::size_of::<T>();
    for rank in 0..nranks {
        let got = buffer.to_vec(rank).unwrap();
        for k in 0..count {
            assert_eq!(
                got[out_offset / size + k],
                want(k, nranks),
                "rank {rank}, element {k}"
            );
        }
    }
}

#[test]
fn reduce_copy_helpers_for_64_and_16_bit_types() {
    let config = LaunchConfig::new(CTAS, THREADS);
    let count = 1000 + 3;
    let v = |r: usize, k: usize| (r * 131 + k % 977) as i64 - 500;
    reduce_case(
        count,
        v,
        |a, b| a + b,
        |w, b, r, o| {
            all_reduce_one_shot_64::launch::<i64>(
                w.stream(r),
                config,
                w.dev_comm(r),
                b.window(r),
                count,
                o,
            )
        },
    );
    let v = |r: usize, k: usize| (r as u64) << 40 | k as u64;
    reduce_case(count, v, u64::wrapping_add, |w, b, r, o| {
        all_reduce_one_shot_64::launch::<u64>(
            w.stream(r),
            config,
            w.dev_comm(r),
            b.window(r),
            count,
            o,
        )
    });
    let v = |r: usize, k: usize| (r as f64) * 0.5 + (k % 97) as f64;
    reduce_case(
        count,
        v,
        |a, b| a + b,
        |w, b, r, o| {
            all_reduce_one_shot_64::launch::<f64>(
                w.stream(r),
                config,
                w.dev_comm(r),
                b.window(r),
                count,
                o,
            )
        },
    );
    let v = |r: usize, k: usize| f16::from_f32(((r * 3 + k) % 32) as f32);
    reduce_case(
        count,
        v,
        |a, b| f16::from_f32(a.to_f32() + b.to_f32()),
        |w, b, r, o| {
            all_reduce_one_shot_16::launch::<f16>(
                w.stream(r),
                config,
                w.dev_comm(r),
                b.window(r),
                count,
                o,
            )
        },
    );
    let v = |r: usize, k: usize| (r * 1000 + k) as u32;
    reduce_case(count, v, u32::wrapping_add, |w, b, r, o| {
        all_reduce_one_shot::launch::<u32>(
            w.stream(r),
            config,
            w.dev_comm(r),
            b.window(r),
            count,
            o,
        )
    });
}

/// `bf16` sums in `f32`, rounded once per element as CUDA C++ reduces it (sums that
/// rounding after each addition would change), and the elements past the last whole
/// vector of 8 (1003 = 125 * 8 + 3) take the same path one by one.
#[test]
fn bf16_all_reduce_sums_in_f32_and_rounds_once() {
    let config = LaunchConfig::new(CTAS, THREADS);
    let count = 1000 + 3;
    let value = |r: usize, k: usize| match r {
        0 => bf16::from_f32(1.0 + (k % 16) as f32 / 8.0),
        _ => bf16::from_f32(((k + r) % 3) as f32 / 256.0),
    };
    let want = |k: usize, nranks: usize| {
        bf16::from_f32((0..nranks).map(|r| value(r, k).to_f32()).sum::<f32>())
    };
    // The premise: element 2 is 1.25 + 0 + 1/256 + 2/256, which rounds to 1.25 + 4/256
    // once (a tie, to even) but to 1.25 + 2/256 after each addition.
    let per_step = (1..4).fold(value(0, 2), |s, r| {
        bf16::from_f32(s.to_f32() + value(r, 2).to_f32())
    });
    assert_eq!(
        (want(2, 4).to_f32(), per_step.to_f32()),
        (1.265625, 1.2578125)
    );
    for two_shot in [false, true] {
        reduce_case_against(count, value, want, |w, b, r, o| {
            let (stream, comm, window) = (w.stream(r), w.dev_comm(r), b.window(r));
            match two_shot {
                false => all_reduce_one_shot_bf16::launch(stream, config, comm, window, count, o),
                true => all_reduce_two_shot_bf16::launch(stream, config, comm, window, count, o),
            }
        });
    }
}

#[test]
fn two_shot_push_reduces_through_scratch_slots() {
    for nranks in [2, 4, 8] {
        for count in [1, 37, 1024, 4096 + 3] {
            let world = world(nranks);
            let (out_offset, _) = layout::<f32>(count);
            // Scratch past the output (16-byte aligned): one slot per other rank.
            let scratch_offset = out_offset + (count * 4).div_ceil(16) * 16;
            let share = (count / 4).div_ceil(nranks);
            let elems = scratch_offset / 4 + (nranks - 1) * share * 4;
            let buffer = world.alloc_symmetric::<f32>(elems).unwrap();
            let value = |r: usize, k: usize| ((r * 7 + k) % 1024) as f32;
            fill(&world, &buffer, count, value);
            for rank in 0..nranks {
                kernels::all_reduce_two_shot_push::launch::<f32>(
                    world.stream(rank),
                    LaunchConfig::new(CTAS, THREADS),
                    world.dev_comm(rank),
                    buffer.window(rank),
                    count,
                    out_offset,
                    scratch_offset,
                )
                .unwrap();
            }
            world.synchronize().unwrap();
            for rank in 0..nranks {
                let all = buffer.to_vec(rank).unwrap();
                for k in 0..count {
                    let want = (1..nranks).fold(value(0, k), |s, r| s + value(r, k));
                    assert_eq!(
                        all[out_offset / 4 + k],
                        want,
                        "{nranks} ranks, rank {rank}, {k} of {count}"
                    );
                }
            }
        }
    }
}

/// Teams (`nccl::Team`): the world, LSA and rail teams, factors, rank conversions and a
/// team peer's address, recorded by one thread per rank.
#[kernel]
fn team_facts(comm: nccl::DevComm, window: Window, results: Window) {
    if global_index() == 0 {
        let out = unsafe { slice_at_mut::<i32>(nccl::local_address(results, 0), 20) };
        let world = nccl::team_world(&comm);
        let lsa = nccl::team_lsa(&comm);
        let rail = nccl::team_rail(&comm);
        let inner = nccl::team_inner_factor(world, 2);
        // A struct literal by path: the world team again.
        let same = nccl::Team {
            nranks: world.nranks,
            rank: world.rank,
            stride: world.stride,
        };
        let outer = nccl::team_outer_factor(world, 2);
        record_team(out, 0, same);
        record_team(out, 3, lsa);
        record_team(out, 6, rail);
        record_team(out, 9, inner);
        record_team(out, 12, outer);
        let next_outer = (outer.rank + 1) % outer.nranks;
        out[15] = nccl::team_rank_to_world(&comm, outer, next_outer);
        out[16] = nccl::team_rank_to_lsa(&comm, inner, 1 - inner.rank);
        let next = (world.rank + 1) % world.nranks;
        out[17] = nccl::team_rank_is_member(inner, world, next) as i32;
        out[18] = nccl::team_rank_to_team(outer, world, world.rank);
        let peer = (lsa.rank + 1) % lsa.nranks;
        let src =
            unsafe { slice_at::<i32>(nccl::team_peer_address(&comm, window, 0, lsa, peer), 1) };
        out[19] = src[0];
    }
}

#[device]
fn record_team(out: &mut [i32], at: usize, team: nccl::Team) {
    out[at] = team.nranks;
    out[at + 1] = team.rank;
    out[at + 2] = team.stride;
}

#[test]
fn teams_match_nccl_arithmetic() {
    for nranks in [2usize, 4, 8] {
        let world = world(nranks);
        let buffer = world.alloc_symmetric::<i32>(1).unwrap();
        fill(&world, &buffer, 1, |rank, _| rank as i32 * 7);
        let results = world.alloc_symmetric::<i32>(20).unwrap();
        for rank in 0..nranks {
            team_facts::launch(
                world.stream(rank),
                LaunchConfig::new(1, 32),
                world.dev_comm(rank),
                buffer.window(rank),
                results.window(rank),
            )
            .unwrap();
        }
        for rank in 0..nranks {
            let got = results.to_vec(rank).unwrap();
            let (n, r) = (nranks as i32, rank as i32);
            let next = (r + 1) % n;
            let want = vec![
                n,
                r,
                1, // world
                n,
                r,
                1, // LSA: every simulated rank is one GPU's load/store peer
                1,
                0,
                n, // rail: one LSA team
                2,
                r % 2,
                1, // inner factor of 2
                n / 2,
                r / 2,
                2, // outer factor of 2
                r + ((r / 2 + 1) % (n / 2) - r / 2) * 2,
                r + (1 - r % 2) - r % 2,
                i32::from(next / 2 == r / 2),
                r / 2,
                next * 7,
            ];
            assert_eq!(got, want, "{nranks} ranks, rank {rank}");
        }
    }
}

/// Sessions that end where their scope ends (`nccl::lsa_barrier_session`): one per round
/// of a loop left by `continue` and `break`, and one left by an early `return`. Each rank
/// writes `rank * 100 + round` into the next rank's slot `round` on odd rounds.
#[kernel]
fn scoped_sessions(comm: DevComm, window: Window, rounds: u32) {
    let me = nccl::rank(&comm);
    let n = nccl::nranks(&comm);
    let mut round = 0u32;
    loop {
        let mut barrier = nccl::lsa_barrier_session(&comm, block_idx().x);
        nccl::lsa_session_sync(&mut barrier, nccl::MemoryOrder::AcqRel);
        round += 1;
        if round % 2 == 0 {
            continue;
        }
        if block_idx().x == 0 && thread_idx().x == 0 {
            let peer = (me + 1) % n;
            let address = nccl::peer_address(window, round as usize * 4, peer);
            let slot = unsafe { slice_at_mut::<i32>(address, 1) };
            slot[0] = me * 100 + round as i32;
        }
        nccl::lsa_session_sync(&mut barrier, MemoryOrder::AcqRel);
        if round >= rounds {
            break;
        }
    }
    let mut last = nccl::lsa_barrier_session(&comm, block_idx().x);
    nccl::lsa_session_sync(&mut last, MemoryOrder::AcqRel);
    if me >= 0 {
        return;
    }
    let mine = unsafe { slice_at_mut::<i32>(nccl::local_address(window, 0), 1) };
    mine[0] = -1;
}

#[test]
fn scoped_sessions_end_at_every_exit() {
    for nranks in [2usize, 4] {
        let world = world(nranks);
        let buffer = world.alloc_symmetric::<i32>(8).unwrap();
        for rank in 0..nranks {
            scoped_sessions::launch(
                world.stream(rank),
                LaunchConfig::new(2, 64),
                world.dev_comm(rank),
                buffer.window(rank),
                5,
            )
            .unwrap();
        }
        for rank in 0..nranks {
            let got = buffer.to_vec(rank).unwrap();
            let from = ((rank + nranks - 1) % nranks) as i32;
            let want = [
                0,
                from * 100 + 1,
                0,
                from * 100 + 3,
                0,
                from * 100 + 5,
                0,
                0,
            ];
            assert_eq!(got, want, "{nranks} ranks, rank {rank}");
        }
    }
    // Every exit ends the session it leaves, once: `continue`, `break`, the end of the
    // loop body, the early `return` and the end of the kernel (the session returned by
    // `lsa_barrier_session` is moved out, not ended there).
    let ir = scoped_sessions::KERNEL.nvvm_ir().unwrap();
    let ends = ir
        .matches("call void @cudajit_nccl_lsa_barrier_destroy(")
        .count();
    assert_eq!(ends, 5, "{ir}");
}

/// A session copied: refused (its end would run twice).
#[kernel]
fn copied_session(comm: DevComm, out: &mut [u32]) {
    let barrier = nccl::lsa_barrier_session(&comm, block_idx().x);
    let _copy = barrier;
    out[0] = 1;
}

#[test]
fn copying_a_session_is_refused() {
    let error = copied_session::KERNEL.nvvm_ir().unwrap_err().to_string();
    assert!(error.contains("cannot be copied"), "{error}");
}

/// Both forms of a CTA barrier session in one kernel: they bind the same symbols, which the
/// kernel's module declares once (pointers pass as C's `void*`).
#[kernel]
fn both_session_forms(comm: DevComm) {
    let mut scoped = nccl::lsa_barrier_session(&comm, block_idx().x);
    nccl::lsa_session_sync(&mut scoped, MemoryOrder::AcqRel);
    let mut raw = [0u64; 8];
    nccl::lsa_barrier_init(&mut raw, &comm, block_idx().x);
    nccl::lsa_barrier_sync(&mut raw, MemoryOrder::AcqRel);
    nccl::lsa_barrier_destroy(&mut raw);
}

#[test]
fn both_session_forms_share_their_declarations() {
    let ir = both_session_forms::KERNEL.nvvm_ir().unwrap();
    for symbol in ["init", "sync", "destroy"] {
        let declaration = format!("declare void @cudajit_nccl_lsa_barrier_{symbol}(");
        assert_eq!(ir.matches(&declaration).count(), 1, "{declaration}:\n{ir}");
    }
    let world = world(2);
    for rank in 0..2 {
        both_session_forms::launch(
            world.stream(rank),
            LaunchConfig::new(2, 32),
            world.dev_comm(rank),
        )
        .unwrap();
    }
    world.synchronize().unwrap();
}

/// A session started and never ended.
#[kernel]
fn forgotten_destroy(comm: DevComm) {
    let mut barrier = [0u64; 8];
    nccl::lsa_barrier_init(&mut barrier, &comm, block_idx().x);
    nccl::lsa_barrier_sync(&mut barrier, MemoryOrder::AcqRel);
}

#[test]
fn a_session_never_ended_is_reported() {
    let world = world(2);
    let mut last = Ok(());
    for rank in 0..2 {
        last = forgotten_destroy::launch(
            world.stream(rank),
            LaunchConfig::new(1, 32),
            world.dev_comm(rank),
        );
    }
    let error = last.unwrap_err().to_string();
    assert!(error.contains("never ended"), "{error}");
    assert!(error.contains("64 LSA barrier session(s)"), "{error}");
}
