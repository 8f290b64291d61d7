//! Thread-block clusters: the blocks of a cluster are resident together, as the GPU
//! guarantees for a launch with a cluster dimension, so that they can wait at
//! `barrier.cluster`, reach each other's shared memory and arrive on each other's
//! mbarriers.
//!
//! Host threads take clusters in turn (as `run_group` takes blocks); a cluster's blocks
//! run on its host thread one after another, each until none of its threads can run, in
//! the manner of the cooperative scheduler's phases. While a block runs, it holds the other
//! blocks' shared memory (lent to it, [`lend`]), which its threads reach through
//! `.shared::cluster` addresses (`ptx/cluster.rs`). A block stopped only by waits the
//! cluster can end ([`BlockState::Waiting`]) is run again after another block touched its
//! memory or the cluster barrier completed; the barrier completes once every thread of the
//! cluster has arrived; when no block can run and the barrier cannot complete, the wait is
//! reported, never a hang.

use super::{fmt3, run_units, BlockRunner, BlockState, Grid, GridStats};
use crate::error::SimError;
use crate::global_races::BlockClocks;
use crate::memory::Arrival;
use crate::memory::{ClusterView, SharedMemory};
use crate::thread::Status;

/// A block's place in its cluster and its threads' `barrier.cluster` arrivals.
pub(super) struct ClusterPlace {
    /// The launch has clusters: waits for other blocks are the cluster's to end.
    pub launched: bool,
    pub rank: u32,
    pub size: u32,
    /// The cluster's index in the grid.
    pub index: [u32; 3],
    /// The other blocks' shared memory by rank while this block runs (own slot empty).
    pub peers: Vec<SharedMemory>,
    /// Per thread.
    pub arrivals: Vec<Arrival>,
    /// Whether a thread changed another block's shared memory or barriers.
    pub touched_peer: bool,
}

impl ClusterPlace {
    pub(super) fn new(threads: usize) -> Self {
        ClusterPlace {
            launched: false,
            rank: 0,
            size: 1,
            index: [0; 3],
            peers: Vec::new(),
            arrivals: vec![Arrival::Idle; threads],
            touched_peer: false,
        }
    }

    pub(super) fn start_block(&mut self) {
        self.arrivals.fill(Arrival::Idle);
        self.touched_peer = false;
    }

    /// `%cluster_ctarank`, `%cluster_nctarank`, `%clusterid`, `%nclusterid`,
    /// `%cluster_ctaid` and `%cluster_nctaid` of block `block` (in
    /// `program::ClusterRegister`'s order). Without clusters each block is a cluster of one,
    /// as on the GPU.
    pub(super) fn registers(&self, grid: &Grid<'_, '_>, block: [u32; 3]) -> [u64; 14] {
        let c = [grid.cluster.x, grid.cluster.y, grid.cluster.z];
        let g = [grid.grid.x, grid.grid.y, grid.grid.z];
        let id = |a: usize| u64::from(block[a] / c[a]);
        let count = |a: usize| u64::from(g[a] / c[a]);
        let within = |a: usize| u64::from(block[a] % c[a]);
        let dim = |a: usize| u64::from(c[a]);
        [
            u64::from(self.rank),
            u64::from(self.size),
            id(0),
            id(1),
            id(2),
            count(0),
            count(1),
            count(2),
            within(0),
            within(1),
            within(2),
            dim(0),
            dim(1),
            dim(2),
        ]
    }

    /// What thread `t` reaches of the cluster.
    pub(super) fn view(&mut self, t: usize) -> ClusterView<'_> {
        ClusterView {
            rank: self.rank,
            size: self.size,
            peers: &mut self.peers,
            arrival: &mut self.arrivals[t],
            touched_peer: &mut self.touched_peer,
        }
    }
}

impl BlockRunner<'_, '_, '_> {
    /// Whether a thread waits for something another block of the cluster may do: the
    /// cluster barrier, or an mbarrier (which another block may arrive on or multicast to).
    pub(super) fn waits_for_cluster(&self) -> bool {
        self.threads.iter().any(|state| {
            matches!(
                state.status,
                Status::ClusterWait { .. } | Status::Mbarrier { .. }
            )
        })
    }
}

/// Runs every cluster of a cluster launch on up to `workers` host threads.
pub(crate) fn run_clusters(grid: &Grid<'_, '_>, workers: usize) -> Result<GridStats, SimError> {
    let c = grid.cluster;
    let per_cluster = (c.x * c.y * c.z) as usize;
    let counts = [grid.grid.x / c.x, grid.grid.y / c.y, grid.grid.z / c.z];
    let clusters = counts.iter().map(|&n| n as usize).product::<usize>();
    let runners = || {
        (0..per_cluster)
            .map(|rank| {
                let mut runner = BlockRunner::new(grid);
                runner.cluster.launched = true;
                runner.cluster.rank = rank as u32;
                runner.cluster.size = per_cluster as u32;
                runner.cluster.peers = (0..per_cluster).map(|_| SharedMemory::new(false)).collect();
                runner
            })
            .collect()
    };
    // As in `run_group`: the error reported is the lowest-numbered failing cluster's.
    run_units(clusters, workers, runners, |runners, cluster| {
        let index = [
            cluster as u32 % counts[0],
            (cluster as u32 / counts[0]) % counts[1],
            cluster as u32 / (counts[0] * counts[1]),
        ];
        run_cluster(runners, index)
    })
}

/// Swaps the shared memory of every block but `rank` with `rank`'s peer slots: lends them
/// to `rank` before it runs, and gives them back after.
fn lend(runners: &mut [BlockRunner<'_, '_, '_>], rank: usize) {
    for other in 0..runners.len() {
        if other == rank {
            continue;
        }
        let (low, high) = runners.split_at_mut(rank.max(other));
        let (borrower, owner) = if rank < other {
            (&mut low[rank], &mut high[0])
        } else {
            (&mut high[0], &mut low[other])
        };
        std::mem::swap(&mut borrower.cluster.peers[other], &mut owner.shared);
    }
}

/// Runs the cluster at `index` (its blocks in `runners`, by rank) to completion.
fn run_cluster(runners: &mut [BlockRunner<'_, '_, '_>], index: [u32; 3]) -> Result<(), SimError> {
    let grid = runners[0].grid;
    let c = [grid.cluster.x, grid.cluster.y, grid.cluster.z];
    let (gx, gy) = (grid.grid.x as usize, grid.grid.y as usize);
    for (rank, runner) in runners.iter_mut().enumerate() {
        let rank = rank as u32;
        let within = [rank % c[0], (rank / c[0]) % c[1], rank / (c[0] * c[1])];
        let block: Vec<usize> = (0..3)
            .map(|a| (index[a] * c[a] + within[a]) as usize)
            .collect();
        runner.cluster.index = index;
        runner.start_block(block[0] + block[1] * gx + block[2] * gx * gy);
    }
    let mut finished = vec![false; runners.len()];
    loop {
        let mut touched = false;
        for rank in 0..runners.len() {
            if finished[rank] {
                continue;
            }
            lend(runners, rank);
            let state = runners[rank].advance();
            lend(runners, rank);
            let runner = &mut runners[rank];
            touched |= std::mem::take(&mut runner.cluster.touched_peer);
            match state? {
                BlockState::Finished => finished[rank] = true,
                BlockState::Waiting => {}
                BlockState::AtGrid { thread, site } => {
                    return Err(runner.barrier_error(
                        thread,
                        site,
                        "grid_sync() in a cluster launch: a launch is cooperative or in clusters, not both".into(),
                    ));
                }
                BlockState::AtGroup { thread, site, .. } => {
                    return Err(runner.barrier_error(
                        thread,
                        site,
                        "a barrier across launches in a cluster launch, which the simulator does not run".into(),
                    ));
                }
            }
        }
        if finished.iter().all(|&done| done) {
            return Ok(());
        }
        // A block changed another's memory or barriers: the others may run on.
        if touched {
            continue;
        }
        if complete_cluster_barrier(runners) {
            continue;
        }
        return Err(deadlock(runners, &finished));
    }
}

/// Completes the cluster barrier's phase if every thread of the cluster has arrived and
/// some thread waits at it. Returns whether it did.
fn complete_cluster_barrier(runners: &mut [BlockRunner<'_, '_, '_>]) -> bool {
    let all_arrived = runners
        .iter()
        .all(|r| r.cluster.arrivals.iter().all(|&a| a == Arrival::Arrived));
    let someone_waits = runners.iter().any(|r| {
        r.threads
            .iter()
            .any(|s| matches!(s.status, Status::ClusterWait { .. }))
    });
    if !all_arrived || !someone_waits {
        return false;
    }
    for runner in runners.iter_mut() {
        for (state, arrival) in runner.threads.iter_mut().zip(&mut runner.cluster.arrivals) {
            if matches!(state.status, Status::ClusterWait { .. }) {
                state.status = Status::Ready;
                *arrival = Arrival::Idle;
            } else {
                *arrival = Arrival::Completed;
            }
        }
        // The barrier orders the cluster's accesses, the block's own among them.
        runner.shared.threads_synchronised();
        runner.barriers += 1;
    }
    let mut clocks: Vec<&mut BlockClocks> = runners.iter_mut().map(|r| &mut r.clocks).collect();
    BlockClocks::synchronise(&mut clocks);
    true
}

/// The error of a cluster no block of which can run on: a wait on an mbarrier that can
/// never complete (the likelier cause: a copy or arrival that never comes), else the cluster
/// barrier's.
fn deadlock(runners: &[BlockRunner<'_, '_, '_>], finished: &[bool]) -> SimError {
    let on_mbarrier = (0..runners.len()).find(|&rank| {
        !finished[rank]
            && runners[rank]
                .threads
                .iter()
                .any(|s| matches!(s.status, Status::Mbarrier { .. }))
    });
    if let Some(blocked) = on_mbarrier {
        let runner = &runners[blocked];
        if let Some(SimError::Ptx { site, detail }) = runner.stuck() {
            return SimError::Ptx {
                site,
                detail: format!(
                    "{detail}; nor can any thread of the cluster's other blocks ({})",
                    others(runners, blocked)
                ),
            };
        }
    }
    let waiter = runners.iter().enumerate().find_map(|(rank, r)| {
        r.threads
            .iter()
            .enumerate()
            .find_map(|(t, s)| match s.status {
                Status::ClusterWait { site } => Some((rank, t, site)),
                _ => None,
            })
    });
    let Some((rank, t, site)) = waiter else {
        let runner = &runners[0];
        return SimError::Launch {
            kernel: runner.grid.program.kernel.clone(),
            detail: "a cluster's blocks wait for each other and none can run on".into(),
        };
    };
    // The first thread of the cluster that has not arrived, and where it is.
    let missing = runners.iter().enumerate().find_map(|(other, r)| {
        r.cluster
            .arrivals
            .iter()
            .position(|&a| a != Arrival::Arrived)
            .map(|u| (other, u))
    });
    let runner = &runners[rank];
    let detail = match missing {
        Some((other, u)) => {
            let them = &runners[other];
            let whereabouts = match them.threads[u].status {
                Status::Exited => "exited without arriving".to_owned(),
                _ => format!("has not arrived: it {}", them.whereabouts(u)),
            };
            format!(
                "thread {} of {} waits at this barrier.cluster.wait, but thread {} of {} (rank {other}) {whereabouts}; every thread of every block of the cluster must arrive (`cluster_sync()`) before any wait completes (on a GPU the cluster would hang)",
                fmt3(runner.thread_index(t)),
                runner.describe_block(),
                fmt3(them.thread_index(u)),
                them.describe_block(),
            )
        }
        None => "the cluster barrier cannot complete".to_owned(),
    };
    runner.barrier_error(t, site, detail)
}

/// Where the threads of the blocks other than `rank` stand, for a deadlock's message.
fn others(runners: &[BlockRunner<'_, '_, '_>], rank: usize) -> String {
    runners
        .iter()
        .enumerate()
        .filter(|(other, _)| *other != rank)
        .map(|(other, r)| {
            if r.threads.iter().all(|s| matches!(s.status, Status::Exited)) {
                format!("{} (rank {other}) has finished", r.describe_block())
            } else {
                format!(
                    "in {} (rank {other}): {}",
                    r.describe_block(),
                    r.others_whereabouts(usize::MAX)
                )
            }
        })
        .collect::<Vec<_>>()
        .join("; ")
}
