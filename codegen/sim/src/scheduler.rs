//! Blocks, warps and barriers.
//!
//! Blocks are independent, as on a GPU: host threads take them in turn from a shared
//! counter, each running one block at a time with its own registers, local and shared
//! memory. Within a block, threads form warps of 32 consecutive linear indices
//! (`x + y * dim.x + z * dim.x * dim.y`, as CUDA numbers them). A warp runs each of its
//! ready threads until it stops; threads stopped in warp operations are then grouped as
//! PTX's `.sync` instructions define it (the same operation with the same member mask), and
//! a group completes once every non-exited thread of its mask is in it. When every warp is
//! stopped at barriers, the barrier completes if every thread of the block waits at the
//! same `sync_threads()` (named barriers, `bar.sync`, complete by themselves:
//! [`named_barriers`]); anything else (a thread that exited, or waits at another barrier
//! or in a warp operation that cannot complete) is reported instead of hanging.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Mutex;

use cudajit_core::device::Dim3;

use super::error::SimError;
use super::externs::ExternBinding;
use super::global_races::{BlockClocks, GlobalRaces};
use super::isa::BUILTINS;
use super::memory::{GlobalRaceView, GlobalRegion, MemoryView, SharedMemory};
use super::program::Program;
use super::thread::{self, Site, Status, ThreadContext, ThreadState};

mod barrier;
mod clusters;
mod collective;
mod global_race_report;
mod named_barriers;
mod reports;
mod warp_ops;
mod warpgroups;
use collective::Collective;
use named_barriers::NamedBarriers;
use reports::{describe, fmt3};

pub(crate) use clusters::run_clusters;

/// Threads per warp.
pub(crate) const WARP_SIZE: usize = 32;

/// Everything about one launch that every block shares.
pub(crate) struct Grid<'a, 'm> {
    pub program: &'a Program,
    pub grid: Dim3,
    pub block: Dim3,
    pub dynamic_shared_bytes: u32,
    pub globals: &'a [GlobalRegion<'m>],
    /// A name for each global region, for messages.
    pub region_names: &'a [String],
    /// The entry function's registers with the launch's arguments in place.
    pub image: &'a [u64],
    pub output: &'a super::PrintTarget,
    pub track_races: bool,
    /// The launch's global-memory race records, when they are tracked.
    pub global_races: Option<&'a GlobalRaces>,
    /// The host of the program's extern functions, and the global regions it provides.
    pub externs: Option<&'a ExternBinding<'a>>,
    pub externals: &'a [GlobalRegion<'m>],
    /// Which launch of a group this is, for messages (`None` alone).
    pub label: Option<&'a str>,
    /// How long a thread may run without stopping (`None`: forever).
    pub watchdog: Option<std::time::Duration>,
    /// Blocks per cluster along each axis ((1, 1, 1) without clusters).
    pub cluster: Dim3,
}

/// Where a block stands once every thread has stopped.
#[derive(Clone, Copy, Debug)]
enum BlockState {
    /// Every thread exited.
    Finished,
    /// Every thread waits at a group barrier (`thread` is the first, at `site`, in extern
    /// function `function`).
    AtGroup {
        thread: usize,
        site: Site,
        function: u32,
    },
    /// Every thread waits at a `grid_sync()` (`thread` is the first, at `site`).
    AtGrid { thread: usize, site: Site },
    /// In a cluster launch: no thread can run, some wait for the cluster (at
    /// `barrier.cluster.wait`, or on an mbarrier another block may complete).
    Waiting,
}

/// Counts of a finished grid.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct GridStats {
    pub barriers: u64,
}

/// Runs units `0..units` (blocks, or clusters) on up to `workers` host threads, each thread
/// with its own runners from `runners()`; `run(runners, unit)` runs one unit. Units after
/// the first failing one are skipped and units before it still run, so the error reported
/// is that of the lowest-numbered failing unit, whatever the timing; without one, the
/// barriers the runners counted.
fn run_units<'g, 'a: 'g, 'm: 'a, R, F>(
    units: usize,
    workers: usize,
    runners: R,
    run: F,
) -> Result<GridStats, SimError>
where
    R: Fn() -> Vec<BlockRunner<'g, 'a, 'm>> + Sync,
    F: Fn(&mut [BlockRunner<'g, 'a, 'm>], usize) -> Result<(), SimError> + Sync,
{
    let next = AtomicUsize::new(0);
    let first_failure = AtomicUsize::new(usize::MAX);
    let failures = Mutex::new(Vec::new());
    let barriers = AtomicU64::new(0);
    let work = || {
        let mut runners = runners();
        loop {
            let unit = next.fetch_add(1, Ordering::Relaxed);
            if unit >= units || unit > first_failure.load(Ordering::Relaxed) {
                break;
            }
            if let Err(error) = run(&mut runners, unit) {
                first_failure.fetch_min(unit, Ordering::Relaxed);
                failures
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .push((unit, error));
            }
        }
        let done: u64 = runners.iter().map(|r| r.barriers).sum();
        barriers.fetch_add(done, Ordering::Relaxed);
    };
    let workers = workers.clamp(1, units.max(1));
    if workers == 1 {
        work();
    } else {
        std::thread::scope(|scope| {
            for _ in 0..workers {
                scope.spawn(work);
            }
        });
    }
    let mut failures = failures.into_inner().unwrap_or_else(|p| p.into_inner());
    failures.sort_by_key(|(unit, _)| *unit);
    match failures.into_iter().next() {
        Some((_, error)) => Err(error),
        None => Ok(GridStats {
            barriers: barriers.into_inner(),
        }),
    }
}

/// Runs every block of the grids of `group` (all of one shape) on up to `workers` host
/// threads: block `b` of every grid on the same host thread, meeting at group barriers.
pub(crate) fn run_group(group: &[Grid<'_, '_>], workers: usize) -> Result<GridStats, SimError> {
    let grid = &group[0];
    let blocks = grid.grid.x as usize * grid.grid.y as usize * grid.grid.z as usize;
    run_units(
        blocks,
        workers,
        || group.iter().map(BlockRunner::new).collect(),
        |runners, block| run_together(runners, block),
    )
}

/// Runs a cooperative launch: every block of the grid is resident at once, as the driver
/// guarantees for `cuLaunchCooperativeKernel`, so that `grid_sync()` can wait for all of
/// them. Each phase runs every block (spread over up to `workers` host threads) until all
/// its threads exited or wait at a `grid_sync()`; the barrier completes when every block
/// waits at one, and the host threads' join orders every block's writes before any block
/// reads after it. A block that finishes while others wait is reported, never a hang.
pub(crate) fn run_cooperative(grid: &Grid<'_, '_>, workers: usize) -> Result<GridStats, SimError> {
    let blocks = grid.grid.x as usize * grid.grid.y as usize * grid.grid.z as usize;
    let mut runners: Vec<BlockRunner> = (0..blocks)
        .map(|block| {
            let mut runner = BlockRunner::new(grid);
            runner.start_block(block);
            runner
        })
        .collect();
    let mut finished = vec![false; blocks];
    let workers = workers.clamp(1, blocks.max(1));
    let per_worker = blocks.div_ceil(workers);
    loop {
        let advance = |part: &mut [BlockRunner<'_, '_, '_>], done: &[bool]| {
            part.iter_mut()
                .zip(done)
                .map(|(runner, &done)| {
                    if done {
                        Ok(BlockState::Finished)
                    } else {
                        runner.advance()
                    }
                })
                .collect::<Vec<_>>()
        };
        let states: Vec<Result<BlockState, SimError>> = if workers == 1 {
            advance(&mut runners, &finished)
        } else {
            std::thread::scope(|scope| {
                let phases: Vec<_> = runners
                    .chunks_mut(per_worker)
                    .zip(finished.chunks(per_worker))
                    .map(|(part, done)| scope.spawn(move || advance(part, done)))
                    .collect();
                phases
                    .into_iter()
                    .flat_map(|phase| {
                        phase
                            .join()
                            .unwrap_or_else(|p| std::panic::resume_unwind(p))
                    })
                    .collect()
            })
        };
        let mut waiting = None;
        for (block, state) in states.into_iter().enumerate() {
            match state? {
                BlockState::Finished => finished[block] = true,
                BlockState::Waiting => unreachable!("only the blocks of cluster launches wait"),
                BlockState::AtGrid { thread, site } => {
                    waiting.get_or_insert((block, thread, site));
                }
                BlockState::AtGroup {
                    thread,
                    site,
                    function,
                } => {
                    let runner = &runners[block];
                    let detail = format!(
                        "`{}` waits at a barrier across launches, which the simulator does not run in a cooperative launch",
                        runner.extern_name(function)
                    );
                    return Err(runner.barrier_error(thread, site, detail));
                }
            }
        }
        let Some((block, thread, site)) = waiting else {
            let barriers = runners.iter().map(|r| r.barriers).sum();
            return Ok(GridStats { barriers });
        };
        if let Some(gone) = finished.iter().position(|&done| done) {
            let detail = format!(
                "{} waits at this grid_sync(), but {} finished without reaching it; every thread of the grid must reach each grid_sync() (on a GPU the grid would hang)",
                runners[block].describe_block(),
                runners[gone].describe_block()
            );
            return Err(runners[block].barrier_error(thread, site, detail));
        }
        if let Some(races) = grid.global_races {
            races.next_phase();
        }
        for runner in &mut runners {
            runner.release_grid();
        }
    }
}

/// Runs block `block` of every grid of a group together: each until all its threads exited
/// or wait at a group barrier, then the barrier completes when every block waits at one.
fn run_together(runners: &mut [BlockRunner<'_, '_, '_>], block: usize) -> Result<(), SimError> {
    for runner in runners.iter_mut() {
        runner.start_block(block);
    }
    loop {
        let mut waiting = None;
        let mut finished = None;
        for (m, runner) in runners.iter_mut().enumerate() {
            match runner.advance()? {
                BlockState::Finished => {
                    finished.get_or_insert(m);
                }
                BlockState::Waiting => unreachable!("only the blocks of cluster launches wait"),
                BlockState::AtGroup {
                    thread,
                    site,
                    function,
                } => {
                    waiting.get_or_insert((m, thread, site, function));
                }
                BlockState::AtGrid { thread, site } => {
                    return Err(runner.barrier_error(
                        thread,
                        site,
                        "grid_sync() in a launch that is not cooperative: launch with `LaunchConfig::cooperative()`, which puts every block on the GPU at once".into(),
                    ));
                }
            }
        }
        let Some((m, thread, site, function)) = waiting else {
            return Ok(());
        };
        if let Some(gone) = finished {
            let runner = &runners[m];
            let other = &runners[gone];
            let name = runner.extern_name(function);
            let detail = format!(
                "{} waits at this `{name}`, a barrier across the group's launches, but {} of kernel `{}` finished without reaching it (a launch skipped the barrier, or the launches' grids or code differ); on GPUs the ranks would hang",
                runner.describe_launch(),
                other.describe_block(),
                other.grid.program.kernel
            );
            return Err(runner.barrier_error(thread, site, detail));
        }
        for runner in runners.iter_mut() {
            runner.release_group();
        }
    }
}

/// One host thread's state for running blocks.
struct BlockRunner<'g, 'a, 'm> {
    grid: &'g Grid<'a, 'm>,
    threads: Vec<ThreadState>,
    builtins: Vec<[u64; BUILTINS]>,
    /// Registers of every thread of the block, `stack_registers` each.
    regs: Vec<u64>,
    stack_registers: usize,
    /// Local memory of every thread, `stack_local_bytes` each.
    local: Vec<u8>,
    stack_local_bytes: usize,
    shared: SharedMemory,
    block_index: [u32; 3],
    /// The block's `bar.sync` / `bar.arrive` barriers.
    named: NamedBarriers,
    barriers: u64,
    /// The block's place in its cluster, and what its threads reach of it.
    cluster: clusters::ClusterPlace,
    /// The block's clocks for the global-memory race checks.
    clocks: BlockClocks,
    /// Whether the kernel runs PTX instructions with waits of their own (mbarriers, named
    /// barriers, warpgroups, TMA), which each round of the block looks for.
    ptx_waits: bool,
}

impl<'g, 'a, 'm> BlockRunner<'g, 'a, 'm> {
    fn new(grid: &'g Grid<'a, 'm>) -> Self {
        let threads = grid.block.x as usize * grid.block.y as usize * grid.block.z as usize;
        let entry = &grid.program.functions[grid.program.entry as usize];
        let stack_registers = entry.stack_registers as usize;
        let stack_local_bytes = entry.stack_local_bytes as usize;
        BlockRunner {
            grid,
            threads: vec![
                ThreadState {
                    frames: Vec::with_capacity(4),
                    status: Status::Exited,
                };
                threads
            ],
            builtins: vec![[0; BUILTINS]; threads],
            regs: vec![0; threads * stack_registers],
            stack_registers,
            local: vec![0; threads * stack_local_bytes],
            stack_local_bytes,
            shared: {
                let mut shared = SharedMemory::new(grid.track_races);
                shared.proxy.enabled =
                    crate::program::uses::reads_through_async_proxy(&grid.program.functions);
                shared.swizzles.enabled = crate::program::uses::runs_wgmma(&grid.program.functions);
                shared
            },
            block_index: [0; 3],
            named: NamedBarriers::default(),
            barriers: 0,
            cluster: clusters::ClusterPlace::new(threads),
            clocks: BlockClocks::default(),
            ptx_waits: crate::program::uses::has_ptx_ops(&grid.program.functions),
        }
    }

    /// `block_idx()` of the block of linear index `linear`.
    fn block_coordinates(&self, linear: usize) -> [u32; 3] {
        let (gx, gy) = (self.grid.grid.x as usize, self.grid.grid.y as usize);
        [
            (linear % gx) as u32,
            ((linear / gx) % gy) as u32,
            (linear / (gx * gy)) as u32,
        ]
    }

    fn thread_index(&self, linear: usize) -> [u32; 3] {
        let (x, y) = (self.grid.block.x as usize, self.grid.block.y as usize);
        [
            (linear % x) as u32,
            ((linear / x) % y) as u32,
            (linear / (x * y)) as u32,
        ]
    }

    fn start_block(&mut self, linear: usize) {
        let grid = self.grid;
        self.block_index = self.block_coordinates(linear);
        self.named.reset();
        self.cluster.start_block();
        self.clocks.start(linear as u32);
        self.shared.start_block(
            grid.program.static_shared_bytes as usize + grid.dynamic_shared_bytes as usize,
            self.threads.len(),
        );
        // What every thread of the block shares, computed once: the block's index, the
        // dimensions and the cluster registers (a debug build of the simulator, where
        // nothing is inlined, spends as long setting up a small kernel's threads as
        // running them).
        let mut shared_builtins = [0u64; BUILTINS];
        let b = self.block_index;
        let (block, dims) = (grid.block, grid.grid);
        shared_builtins[3..12].copy_from_slice(&[
            b[0] as u64,
            b[1] as u64,
            b[2] as u64,
            block.x as u64,
            block.y as u64,
            block.z as u64,
            dims.x as u64,
            dims.y as u64,
            dims.z as u64,
        ]);
        shared_builtins[13..].copy_from_slice(&self.cluster.registers(grid, self.block_index));
        let context = ThreadContext {
            program: grid.program,
            builtins: &shared_builtins,
            dynamic_shared_bytes: grid.dynamic_shared_bytes as u64,
            output: grid.output,
            externs: grid.externs,
            watchdog: grid.watchdog,
        };
        let (r, l) = (self.stack_registers, self.stack_local_bytes);
        // Thread coordinates counted up rather than divided out per thread.
        let (mut tx, mut ty, mut tz) = (0u64, 0u64, 0u64);
        for t in 0..self.threads.len() {
            let builtins = &mut self.builtins[t];
            *builtins = shared_builtins;
            builtins[0] = tx;
            builtins[1] = ty;
            builtins[2] = tz;
            builtins[12] = (t % WARP_SIZE) as u64;
            thread::start(
                &context,
                builtins,
                &mut self.threads[t],
                &mut self.regs[t * r..(t + 1) * r],
                &mut self.local[t * l..(t + 1) * l],
                grid.image,
            );
            tx += 1;
            if tx == block.x as u64 {
                tx = 0;
                ty += 1;
                if ty == block.y as u64 {
                    ty = 0;
                    tz += 1;
                }
            }
        }
    }

    /// Runs the started block until every thread exited or waits at a group barrier.
    fn advance(&mut self) -> Result<BlockState, SimError> {
        let warps = self.threads.len().div_ceil(WARP_SIZE);
        loop {
            for warp in 0..warps {
                self.run_warp(warp)?;
            }
            if self.ptx_waits
                && (self.complete_warpgroups()?
                    || self.wake_named_barrier_waiters()
                    || self.wake_barrier_waiters()?
                    || self.land_every_tma()?)
            {
                continue;
            }
            if self.cluster.launched && self.waits_for_cluster() {
                // Another block of the cluster may release these threads.
                return Ok(BlockState::Waiting);
            }
            if self.ptx_waits {
                if let Some(error) = self.stuck() {
                    return Err(error);
                }
            }
            if let Some(state) = self.complete_barrier()? {
                return Ok(state);
            }
        }
    }

    /// Releases the threads waiting at a group barrier (which also orders the block's
    /// shared memory, as the CTA barrier inside it does on a GPU).
    fn release_group(&mut self) {
        for state in &mut self.threads {
            if matches!(state.status, Status::Group { .. }) {
                state.status = Status::Ready;
            }
        }
        self.shared.threads_synchronised();
        self.barriers += 1;
    }

    /// Releases the threads waiting at a `grid_sync()` (the block's barrier inside it also
    /// orders the block's shared memory).
    fn release_grid(&mut self) {
        for state in &mut self.threads {
            if matches!(state.status, Status::Grid { .. }) {
                state.status = Status::Ready;
            }
        }
        self.shared.threads_synchronised();
        self.barriers += 1;
    }

    /// "rank 1" (the launch's label), or "the launch".
    fn describe_launch(&self) -> String {
        match self.grid.label {
            Some(label) => label.to_owned(),
            None => "the launch".to_owned(),
        }
    }

    /// "block (b, 0, 0) of rank 1".
    fn describe_block(&self) -> String {
        match self.grid.label {
            Some(label) => format!("block {} of {label}", fmt3(self.block_index)),
            None => format!("block {}", fmt3(self.block_index)),
        }
    }

    fn extern_name(&self, function: u32) -> String {
        self.grid
            .program
            .externs
            .get(function as usize)
            .map(|f| f.name.clone())
            .unwrap_or_default()
    }

    /// Runs the threads of `warp` until every one waits at a barrier or has exited,
    /// completing its warp operations on the way.
    fn run_warp(&mut self, warp: usize) -> Result<(), SimError> {
        let first = warp * WARP_SIZE;
        let last = (first + WARP_SIZE).min(self.threads.len());
        loop {
            // A `while` rather than a range: a debug build calls the range's `next` for
            // every thread of every round.
            let mut t = first;
            while t < last {
                if matches!(self.threads[t].status, Status::Ready) {
                    self.run_thread(t)?;
                }
                t += 1;
            }
            if !self.complete_warp_operations(first, last)? {
                return Ok(());
            }
        }
    }

    fn run_thread(&mut self, t: usize) -> Result<(), SimError> {
        let grid = self.grid;
        let context = ThreadContext {
            program: grid.program,
            builtins: &self.builtins[t],
            dynamic_shared_bytes: u64::from(grid.dynamic_shared_bytes),
            output: grid.output,
            externs: grid.externs,
            watchdog: grid.watchdog,
        };
        let (r, l) = (self.stack_registers, self.stack_local_bytes);
        let mut memory = MemoryView {
            globals: grid.globals,
            externals: grid.externals,
            shared: &mut self.shared,
            local: &mut self.local[t * l..(t + 1) * l],
            thread: t as u32,
            cluster: self.cluster.view(t),
            global_races: grid.global_races.map(|races| GlobalRaceView {
                races,
                clocks: &mut self.clocks,
            }),
        };
        let regs = &mut self.regs[t * r..(t + 1) * r];
        match thread::run(&context, &mut self.threads[t], regs, &mut memory) {
            Ok(()) => Ok(()),
            Err(fault) => Err(self.fault_error(t, fault)),
        }
    }
}
