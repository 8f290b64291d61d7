//! Data races on global memory on the CPU simulator (`SimOptions::global_race_detection`,
//! `CUDAJIT_SIM_RACES=global`): threads of a block with no barrier between, blocks with
//! nothing ordering them, each reported with both threads and both lines; and what is not
//! a race: atomics, accesses a `sync_threads()` separates, a `grid_sync()`, a cluster
//! barrier, a fence before an atomic that the reading block's atomic observes (the "last
//! block" reduction), separate launches. No GPU needed.

#[path = "common/child.rs"]
mod child;

use cudajit::prelude::*;
use cudajit::tensor::cluster::{cluster_ctarank, cluster_sync};
use cudajit::{Error, SimError, SimOptions, SimStream};

/// A stream tracking global races, on `workers` host threads.
fn tracking(workers: usize) -> SimStream {
    SimStream::with_options(SimOptions {
        workers,
        global_race_detection: Some(true),
        ..SimOptions::default()
    })
}

/// The line of this file holding `text` (1-based).
fn line_of(text: &str) -> usize {
    include_str!("sim_global_races.rs")
        .lines()
        .position(|line| line.contains(text))
        .expect("the text is in this file")
        + 1
}

#[kernel]
fn count_plainly(counter: &mut [u32]) {
    counter[0] += 1; // the plain count
}

#[kernel]
fn count_atomically(counter: &mut [u32]) {
    atomic_add(&mut counter[0], 1);
}

/// The kernel: 1024 threads incrementing one counter with plain accesses return a
/// count of 1024 on the simulator (which runs one thread at a time), but race on a GPU.
#[test]
fn threads_of_a_block_counting_plainly_race() {
    let stream = tracking(1);
    let mut counter = stream.alloc_zeros::<u32>(1).unwrap();
    let error =
        count_plainly::launch(&stream, LaunchConfig::new(1, 1024), &mut counter).unwrap_err();
    let Error::Simulator(SimError::GlobalMemoryRace { site, detail }) = &error else {
        panic!("expected a data race on global memory, got {error}");
    };
    eprintln!("reported: {error}");
    assert_eq!(site.thread, [1, 0, 0]);
    assert_eq!(site.kernel, "count_plainly");
    let line = line_of("the plain count");
    assert!(
        site.location
            .starts_with(&format!("tests/sim_global_races.rs:{line}:")),
        "{}",
        site.location
    );
    assert!(
        detail.contains(&format!(
            "thread (1, 0, 0) reads `counter`[0] here, but thread (0, 0, 0) wrote it at tests/sim_global_races.rs:{line}:"
        )),
        "{detail}"
    );
    assert!(detail.contains("no sync_threads() between"), "{detail}");

    // Atomics are not races, and give the count.
    let mut counter = stream.alloc_zeros::<u32>(1).unwrap();
    count_atomically::launch(&stream, LaunchConfig::new(4, 256), &mut counter).unwrap();
    assert_eq!(stream.clone_dtoh(&counter).unwrap(), [1024]);

    // Without tracking (the default), the plain count runs.
    let plain = SimStream::with_options(SimOptions {
        global_race_detection: Some(false),
        ..SimOptions::default()
    });
    let mut counter = plain.alloc_zeros::<u32>(1).unwrap();
    count_plainly::launch(&plain, LaunchConfig::new(1, 1024), &mut counter).unwrap();
}

/// Thread 0 of every block writes the same element.
#[kernel]
fn every_block_writes_one_element(out: &mut [u32]) {
    if thread_idx().x == 0 {
        out[0] = block_idx().x; // each block's write
    }
}

#[test]
fn blocks_writing_one_element_race() {
    let stream = tracking(1);
    let mut out = stream.alloc_zeros::<u32>(4).unwrap();
    let error = every_block_writes_one_element::launch(&stream, LaunchConfig::new(3, 64), &mut out)
        .unwrap_err();
    let Error::Simulator(SimError::GlobalMemoryRace { site, detail }) = &error else {
        panic!("expected a data race on global memory, got {error}");
    };
    eprintln!("reported: {error}");
    // One host thread runs the blocks in order: block 1 finds block 0's write.
    assert_eq!((site.block, site.thread), ([1, 0, 0], [0, 0, 0]));
    let line = line_of("each block's write");
    assert!(
        detail.contains(&format!(
            "thread (0, 0, 0) of block (1, 0, 0) writes `out`[0] here, but thread (0, 0, 0) of block (0, 0, 0) wrote it at tests/sim_global_races.rs:{line}:"
        )),
        "{detail}"
    );
    assert!(detail.contains("nothing orders the two blocks"), "{detail}");
}

/// Thread `t` writes element `t`, then reads its neighbour's, with or without a barrier.
#[kernel]
fn neighbours_through_global_memory(values: &mut [f32], out: &mut [f32], barrier: bool) {
    let t = thread_idx().x as usize;
    let n = block_dim().x as usize;
    values[t] = t as f32;
    if barrier {
        sync_threads();
    }
    out[t] = values[(t + 1) % n]; // the neighbour's
}

#[test]
fn a_barrier_orders_the_threads_of_a_block() {
    let stream = tracking(2);
    let mut values = stream.alloc_zeros::<f32>(64).unwrap();
    let mut out = stream.alloc_zeros::<f32>(64).unwrap();
    let config = LaunchConfig::new(1, 64);
    neighbours_through_global_memory::launch(&stream, config, &mut values, &mut out, true).unwrap();
    let expect: Vec<f32> = (0..64).map(|t| ((t + 1) % 64) as f32).collect();
    assert_eq!(stream.clone_dtoh(&out).unwrap(), expect);
    let error =
        neighbours_through_global_memory::launch(&stream, config, &mut values, &mut out, false)
            .unwrap_err();
    let Error::Simulator(SimError::GlobalMemoryRace { site, detail }) = &error else {
        panic!("expected a data race on global memory, got {error}");
    };
    eprintln!("reported: {error}");
    // Thread 0 reads element 1 before thread 1 writes it: thread 1's write is the race.
    assert_eq!(site.thread, [1, 0, 0]);
    assert!(
        detail.contains("thread (1, 0, 0) writes `values`[1] here, but thread (0, 0, 0) read it"),
        "{detail}"
    );
    assert!(
        detail.contains(&format!(
            "tests/sim_global_races.rs:{}:",
            line_of("the neighbour's")
        )),
        "{detail}"
    );
}

/// The "last block" reduction of CUDA's `threadFenceReduction` sample: each block stores
/// its partial sum, fences, and takes a ticket; the block with the last ticket adds the
/// partial sums of all. Without the fence the partial sums are not ordered before the
/// ticket: a race.
#[kernel]
fn last_block_sums(
    values: &[u32],
    partial: &mut [u32],
    tickets: &mut [u32],
    total: &mut [u32],
    fence: bool,
) {
    let b = block_idx().x as usize;
    if thread_idx().x == 0 {
        let per_block = values.len() / grid_dim().x as usize;
        let mut sum = 0u32;
        for k in 0..per_block {
            sum += values[b * per_block + k];
        }
        partial[b] = sum; // this block's partial sum
        if fence {
            fence_device();
        }
        let ticket = atomic_add(&mut tickets[0], 1);
        if ticket == grid_dim().x - 1 {
            let mut all = 0u32;
            for k in 0..grid_dim().x as usize {
                all += partial[k]; // the last block reads them
            }
            total[0] = all;
        }
    }
}

#[test]
fn a_fence_before_an_atomic_orders_blocks() {
    let values: Vec<u32> = (0..64 * 8).collect();
    for workers in [1, 2] {
        let stream = tracking(workers);
        let dvalues = stream.clone_htod(&values).unwrap();
        let mut partial = stream.alloc_zeros::<u32>(8).unwrap();
        let mut total = stream.alloc_zeros::<u32>(1).unwrap();
        let mut sums = |fence: bool| {
            let mut tickets = stream.alloc_zeros::<u32>(1).unwrap();
            let config = LaunchConfig::new(8, 32);
            last_block_sums::launch(
                &stream,
                config,
                &dvalues,
                &mut partial,
                &mut tickets,
                &mut total,
                fence,
            )
            .map(|()| stream.clone_dtoh(&total).unwrap()[0])
        };
        assert_eq!(sums(true).unwrap(), values.iter().sum::<u32>());
        let error = sums(false).unwrap_err();
        let Error::Simulator(SimError::GlobalMemoryRace { site, detail }) = &error else {
            panic!("expected a data race on global memory, got {error}");
        };
        eprintln!("reported: {error}");
        // The last block's read of another block's partial sum, and that block's write.
        let read = format!(
            "tests/sim_global_races.rs:{}:",
            line_of("the last block reads them")
        );
        assert!(site.location.starts_with(&read), "{}", site.location);
        assert!(detail.contains("reads `partial`["), "{detail}");
        let write = format!(
            "wrote it at tests/sim_global_races.rs:{}:",
            line_of("this block's partial sum")
        );
        assert!(detail.contains(&write), "{detail}");
    }
}

/// Block `b` writes element `b`, waits for the whole grid, reads element `b + 1`.
#[kernel]
fn rotate_through_the_grid(values: &mut [u32], out: &mut [u32]) {
    let b = block_idx().x as usize;
    let blocks = grid_dim().x as usize;
    if thread_idx().x == 0 {
        values[b] = b as u32 * 10;
    }
    grid_sync();
    if thread_idx().x == 0 {
        out[b] = values[(b + 1) % blocks];
    }
}

#[test]
fn a_grid_sync_orders_every_block() {
    let stream = tracking(2);
    let mut values = stream.alloc_zeros::<u32>(6).unwrap();
    let mut out = stream.alloc_zeros::<u32>(6).unwrap();
    let config = LaunchConfig::new(6, 32).cooperative();
    rotate_through_the_grid::launch(&stream, config, &mut values, &mut out).unwrap();
    assert_eq!(stream.clone_dtoh(&out).unwrap(), [10, 20, 30, 40, 50, 0]);
}

/// Rank 0 of each cluster of two writes, both wait at the cluster barrier, rank 1 reads.
#[kernel]
fn hand_over_in_a_cluster(values: &mut [u32], out: &mut [u32]) {
    let pair = (block_idx().x / 2) as usize;
    let rank = cluster_ctarank();
    if rank == 0 && thread_idx().x == 0 {
        values[pair] = pair as u32 + 7;
    }
    cluster_sync();
    if rank == 1 && thread_idx().x == 0 {
        out[pair] = values[pair];
    }
}

#[test]
fn a_cluster_barrier_orders_the_blocks_of_its_cluster() {
    let stream = tracking(2);
    let mut values = stream.alloc_zeros::<u32>(2).unwrap();
    let mut out = stream.alloc_zeros::<u32>(2).unwrap();
    let config = LaunchConfig::new(4, 32).with_cluster((2, 1, 1));
    hand_over_in_a_cluster::launch(&stream, config, &mut values, &mut out).unwrap();
    assert_eq!(stream.clone_dtoh(&out).unwrap(), [7, 8]);
}

/// Writes every element from one block, then (another launch) reads them from another.
#[kernel]
fn fill_from_block(values: &mut [u32], block: u32) {
    if block_idx().x == block {
        values[thread_idx().x as usize] += 1;
    }
}

#[test]
fn separate_launches_do_not_race() {
    let stream = tracking(2);
    let mut values = stream.alloc_zeros::<u32>(32).unwrap();
    for block in 0..3 {
        fill_from_block::launch(&stream, LaunchConfig::new(3, 32), &mut values, block).unwrap();
    }
    assert_eq!(stream.clone_dtoh(&values).unwrap(), vec![3; 32]);
}

/// In a child process (`the_variable_turns_global_race_detection_on`): the plain count
/// with the options leaving the checks to `CUDAJIT_SIM_RACES`.
#[test]
#[ignore = "run as a child process by the_variable_turns_global_race_detection_on"]
fn child_counts_plainly() {
    let stream = SimStream::with_options(SimOptions {
        workers: 1,
        ..SimOptions::default()
    });
    let mut counter = stream.alloc_zeros::<u32>(1).unwrap();
    match count_plainly::launch(&stream, LaunchConfig::new(1, 64), &mut counter) {
        Ok(()) => println!("RESULT: ok"),
        Err(error) => println!("RESULT: {error}"),
    }
}

/// `CUDAJIT_SIM_RACES=global` turns the checks on when the options leave it open, and
/// `shared` (or nothing) leaves them off; each in a child process, so that no test changes
/// this one's environment (tests/environment.rs checks a value it does not take).
#[test]
fn the_variable_turns_global_race_detection_on() {
    let result = |value: Option<&str>| {
        let vars: Vec<(&str, &str)> = value
            .map(|v| ("CUDAJIT_SIM_RACES", v))
            .into_iter()
            .collect();
        let text = child::run("child_counts_plainly", &vars, &["CUDAJIT_SIM_RACES"]);
        text.lines()
            .find_map(|line| line.strip_prefix("RESULT: "))
            .unwrap_or_else(|| panic!("no result in\n{text}"))
            .to_owned()
    };
    let found = result(Some("global"));
    assert!(found.contains("data race on global memory"), "{found}");
    assert_eq!(result(Some("shared")), "ok");
    assert_eq!(result(None), "ok");
}
