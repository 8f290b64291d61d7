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
use cudajit_core::intrinsics::{ShuffleMode, VoteOp};

use super::error::{SimError, SimSite};
use super::externs::ExternBinding;
use super::global_races::{BlockClocks, GlobalRaces};
use super::memory::{
    AccessFault, GlobalRaceView, GlobalRegion, MemoryView, SharedMemory, EXTERN_REGION_BASE,
    LOCAL_REGION, SHARED_REGION,
};
use super::program::{Program, BUILTINS};
use super::thread::{self, Fault, FaultKind, Site, Status, ThreadContext, ThreadState, WarpOp};

mod clusters;
mod collective;
mod global_race_report;
mod named_barriers;
mod warpgroups;
use collective::Collective;
use named_barriers::NamedBarriers;

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
                shared.proxy.enabled = crate::ptx::proxy::reads_through_async_proxy(grid.program);
                shared.swizzles.enabled = crate::ptx::wgmma::runs_wgmma(grid.program);
                shared
            },
            block_index: [0; 3],
            named: NamedBarriers::default(),
            barriers: 0,
            cluster: clusters::ClusterPlace::new(threads),
            clocks: BlockClocks::default(),
            ptx_waits: crate::ptx::has_ptx_ops(grid.program),
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
        self.shared.epoch = self.shared.epoch.wrapping_add(1);
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
        self.shared.epoch = self.shared.epoch.wrapping_add(1);
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

    /// Completes the warp operations of lanes `first..last` that can complete. Returns
    /// whether any did (those lanes are ready again); reports a warp that can never
    /// proceed.
    fn complete_warp_operations(&mut self, first: usize, last: usize) -> Result<bool, SimError> {
        let waiting: Vec<usize> = (first..last)
            .filter(|&t| matches!(self.threads[t].status, Status::Warp(_)))
            .collect();
        if waiting.is_empty() {
            return Ok(false);
        }
        let mut progress = false;
        // Threads in warpgroup instructions, left for the block to complete.
        let mut parked = 0;
        let mut handled = vec![false; last - first];
        let mut blocked: Option<SimError> = None;
        for &leader in &waiting {
            if handled[leader - first] {
                continue;
            }
            let Status::Warp(key) = self.threads[leader].status else {
                continue;
            };
            let same = |status: &Status| matches!(status, Status::Warp(w) if w.op == key.op && w.mask == key.mask);
            let group: Vec<usize> = waiting
                .iter()
                .copied()
                .filter(|&t| same(&self.threads[t].status))
                .collect();
            for &t in &group {
                handled[t - first] = true;
            }
            if let WarpOp::Collective(site) = key.op {
                match self.complete_collective(first, last, &group, site)? {
                    Collective::Done => progress = true,
                    Collective::Waiting => {}
                    Collective::Blocked(error) => {
                        blocked.get_or_insert(error);
                    }
                    Collective::Parked => parked += 1,
                }
                continue;
            }
            if matches!(key.op, WarpOp::ActiveMask(_)) {
                let mask = group.iter().fold(0u32, |m, &t| m | (1 << (t - first)));
                self.deliver(&group, |_, _| Ok(u64::from(mask)))?;
                progress = true;
                continue;
            }
            // Every thread must name itself, and every non-exited thread named must be here.
            for &t in &group {
                if key.mask & (1 << (t - first)) == 0 {
                    return Err(self.warp_error(
                        t,
                        key.site,
                        format!(
                            "{} with mask {:#010x}, which does not include the calling lane {}",
                            describe(key.op),
                            key.mask,
                            t - first
                        ),
                    ));
                }
            }
            let mut ready = true;
            for lane in 0..WARP_SIZE {
                let t = first + lane;
                if key.mask & (1 << lane) == 0 || t >= last || group.contains(&t) {
                    continue;
                }
                let elsewhere = match self.threads[t].status {
                    Status::Exited => continue,
                    // Released by another group of this round: it may still come here.
                    Status::Ready => {
                        ready = false;
                        break;
                    }
                    Status::Barrier { site } => {
                        format!("waits at the sync_threads() at {}", self.location(site))
                    }
                    Status::Warp(other) => format!(
                        "waits in {} with mask {:#010x} at {}",
                        describe(other.op),
                        other.mask,
                        self.location(other.site)
                    ),
                    Status::Group { .. }
                    | Status::Mbarrier { .. }
                    | Status::NamedBarrier { .. } => self.whereabouts(t),
                    Status::Grid { site } => {
                        format!("waits at the grid_sync() at {}", self.location(site))
                    }
                    Status::ClusterWait { .. } => self.whereabouts(t),
                };
                ready = false;
                if blocked.is_none() {
                    blocked = Some(self.warp_error(
                        group[0],
                        key.site,
                        format!(
                            "{} with mask {:#010x} cannot complete: lane {lane} (thread {}) is named in the mask but {elsewhere}",
                            describe(key.op),
                            key.mask,
                            fmt3(self.thread_index(t)),
                        ),
                    ));
                }
                break;
            }
            if !ready {
                continue;
            }
            let values: Vec<(usize, u64, u32)> = group
                .iter()
                .map(|&t| match self.threads[t].status {
                    Status::Warp(w) => (t - first, w.value, w.lane),
                    _ => (t - first, 0, 0),
                })
                .collect();
            let value_of = |lane: usize| values.iter().find(|v| v.0 == lane).map(|v| v.1);
            match key.op {
                WarpOp::Vote(op) => {
                    let ballot = values
                        .iter()
                        .filter(|v| v.1 & 1 == 1)
                        .fold(0u32, |m, v| m | (1 << v.0));
                    let members = values.iter().fold(0u32, |m, v| m | (1 << v.0));
                    let result = match op {
                        VoteOp::Ballot => u64::from(ballot),
                        VoteOp::All => u64::from(ballot == members),
                        VoteOp::Any => u64::from(ballot != 0),
                    };
                    self.deliver(&group, |_, _| Ok(result))?;
                }
                WarpOp::Shuffle(mode, _) => {
                    let warp_threads = last - first;
                    let outcome = |lane: usize, offset: u32| -> Result<u64, String> {
                        let b = (offset & 31) as usize;
                        // PTX `shfl.sync` with the clamp the writer passes (31, or 0 for
                        // `up`): an out-of-range source reads the lane's own value.
                        let (source, valid) = match mode {
                            ShuffleMode::Up => (lane.wrapping_sub(b), lane >= b),
                            ShuffleMode::Down => (lane + b, lane + b < WARP_SIZE),
                            ShuffleMode::Xor => (lane ^ b, true),
                            ShuffleMode::Idx => (b, true),
                        };
                        let source = if valid { source } else { lane };
                        value_of(source).ok_or_else(|| {
                            let why = if source >= warp_threads {
                                format!("does not exist (this warp has {warp_threads} threads)")
                            } else if key.mask & (1 << source) == 0 {
                                "is not in the mask".to_owned()
                            } else {
                                "has exited".to_owned()
                            };
                            format!(
                                "{} with mask {:#010x}: lane {lane} reads lane {source}, which {why}; the value would be undefined on a GPU",
                                describe(key.op),
                                key.mask
                            )
                        })
                    };
                    let lanes: Vec<u32> = values.iter().map(|v| v.2).collect();
                    self.deliver(&group, |index, lane| outcome(lane, lanes[index]))?;
                }
                WarpOp::ActiveMask(_) | WarpOp::Collective(_) => {}
            }
            progress = true;
        }
        if progress {
            return Ok(true);
        }
        if blocked.is_none() && parked > 0 {
            return Ok(false);
        }
        Err(blocked.unwrap_or_else(|| {
            self.warp_error(
                waiting[0],
                Site { function: 0, pc: 0 },
                "a warp operation cannot complete".into(),
            )
        }))
    }

    /// Gives each thread of `group` its result (`result(index in group, lane)`) and makes
    /// it ready.
    fn deliver(
        &mut self,
        group: &[usize],
        result: impl Fn(usize, usize) -> Result<u64, String>,
    ) -> Result<(), SimError> {
        let first = group[0] - group[0] % WARP_SIZE;
        for (index, &t) in group.iter().enumerate() {
            let Status::Warp(wait) = self.threads[t].status else {
                continue;
            };
            let value =
                result(index, t - first).map_err(|detail| self.warp_error(t, wait.site, detail))?;
            self.regs[t * self.stack_registers + wait.dst] = value;
            self.threads[t].status = Status::Ready;
        }
        Ok(())
    }

    /// With every warp stopped: completes the block's barrier if every thread waits at
    /// the same one (`None`: the threads run on). Otherwise says whether every thread
    /// exited or every thread waits at the same group barrier; anything else is reported.
    fn complete_barrier(&mut self) -> Result<Option<BlockState>, SimError> {
        let mut waiting: Option<(usize, Site)> = None;
        let mut group: Option<(usize, Site, u32)> = None;
        let mut exited: Option<usize> = None;
        let mut grid: Option<(usize, Site)> = None;
        for (t, state) in self.threads.iter().enumerate() {
            match state.status {
                Status::Barrier { site } => match waiting {
                    None => waiting = Some((t, site)),
                    Some((first, first_site)) if first_site != site => {
                        return Err(self.barrier_error(
                            first,
                            first_site,
                            format!(
                                "thread {} waits at this sync_threads(), thread {} at the one at {}; every thread of a block must reach the same barrier",
                                fmt3(self.thread_index(first)),
                                fmt3(self.thread_index(t)),
                                self.location(site)
                            ),
                        ));
                    }
                    Some(_) => {}
                },
                Status::Group { site, function } => match group {
                    None => group = Some((t, site, function)),
                    Some((first, first_site, first_function)) if first_site != site => {
                        return Err(self.barrier_error(
                            first,
                            first_site,
                            format!(
                                "thread {} waits at this `{}`, thread {} at the `{}` at {}; every thread of a block must reach the same barrier",
                                fmt3(self.thread_index(first)),
                                self.extern_name(first_function),
                                fmt3(self.thread_index(t)),
                                self.extern_name(function),
                                self.location(site)
                            ),
                        ));
                    }
                    Some(_) => {}
                },
                Status::Grid { site } => match grid {
                    None => grid = Some((t, site)),
                    Some((first, first_site)) if first_site != site => {
                        return Err(self.barrier_error(
                            first,
                            first_site,
                            format!(
                                "thread {} waits at this grid_sync(), thread {} at the one at {}; every thread of a block must reach the same barrier",
                                fmt3(self.thread_index(first)),
                                fmt3(self.thread_index(t)),
                                self.location(site)
                            ),
                        ));
                    }
                    Some(_) => {}
                },
                Status::Exited => {
                    exited.get_or_insert(t);
                }
                // Warps end only with every thread at a barrier or exited (`stuck` has
                // reported the threads left in mbarrier and warpgroup waits).
                Status::Ready
                | Status::Warp(_)
                | Status::Mbarrier { .. }
                | Status::NamedBarrier { .. } => {}
                // Only cluster launches run `barrier.cluster` (`clusters.rs`), and their
                // blocks stop at it before they get here.
                Status::ClusterWait { .. } => {
                    unreachable!("a cluster barrier outside a cluster launch")
                }
            }
        }
        if let (Some((first, site)), Some((other, other_site, function))) = (waiting, group) {
            return Err(self.barrier_error(
                first,
                site,
                format!(
                    "thread {} waits at this sync_threads(), thread {} at the `{}` at {}; every thread of a block must reach the same barrier",
                    fmt3(self.thread_index(first)),
                    fmt3(self.thread_index(other)),
                    self.extern_name(function),
                    self.location(other_site)
                ),
            ));
        }
        if let Some((first, site)) = grid {
            // The first thread at another kind of barrier, or one that exited.
            let other = (0..self.threads.len()).find_map(|t| match self.threads[t].status {
                Status::Barrier { site } => Some((
                    t,
                    format!("waits at the sync_threads() at {}", self.location(site)),
                )),
                Status::Group { site, function } => Some((
                    t,
                    format!(
                        "waits in `{}` at {}",
                        self.extern_name(function),
                        self.location(site)
                    ),
                )),
                Status::Exited => Some((t, "exited without reaching it".to_owned())),
                _ => None,
            });
            if let Some((t, elsewhere)) = other {
                return Err(self.barrier_error(
                    first,
                    site,
                    format!(
                        "thread {} waits at this grid_sync(), but thread {} {elsewhere}; every thread of the grid must reach grid_sync() (on a GPU the grid would hang)",
                        fmt3(self.thread_index(first)),
                        fmt3(self.thread_index(t)),
                    ),
                ));
            }
            return Ok(Some(BlockState::AtGrid {
                thread: first,
                site,
            }));
        }
        if let (Some((first, site, function)), Some(gone)) = (group, exited) {
            return Err(self.barrier_error(
                first,
                site,
                format!(
                    "thread {} waits at this `{}`, but thread {} exited without reaching it; every thread of the block takes part in it (ncclCoopCta)",
                    fmt3(self.thread_index(first)),
                    self.extern_name(function),
                    fmt3(self.thread_index(gone))
                ),
            ));
        }
        if let Some((thread, site, function)) = group {
            return Ok(Some(BlockState::AtGroup {
                thread,
                site,
                function,
            }));
        }
        let Some((first, site)) = waiting else {
            return Ok(Some(BlockState::Finished));
        };
        if let Some(gone) = exited {
            return Err(self.barrier_error(
                first,
                site,
                format!(
                    "thread {} waits at this sync_threads(), but thread {} exited without reaching it; on a GPU the block would hang or the barrier would not synchronise",
                    fmt3(self.thread_index(first)),
                    fmt3(self.thread_index(gone))
                ),
            ));
        }
        for state in &mut self.threads {
            state.status = Status::Ready;
        }
        self.shared.epoch = self.shared.epoch.wrapping_add(1);
        self.barriers += 1;
        Ok(None)
    }

    // ----- reports -----

    fn location(&self, site: Site) -> String {
        let program = self.grid.program;
        let function = program.functions.get(site.function as usize);
        let span = function
            .and_then(|f| f.spans.get(site.pc as usize))
            .copied()
            .unwrap_or_default();
        // A device function's spans are lines of its own file (another crate's, for
        // `cudajit::tensor`'s).
        let file = function
            .map(|f| f.file.as_str())
            .filter(|file| !file.is_empty())
            .unwrap_or(&program.file);
        format!("{file}:{span}")
    }

    /// Where thread `t`'s device function at `site` was called from, out to the kernel,
    /// when the thread is inside that call: an error in a library's device function also
    /// names the user's line.
    fn callers(&self, t: usize, site: Site) -> Vec<(String, String)> {
        let frames = self
            .threads
            .get(t)
            .map_or(&[][..], |thread| &thread.frames[..]);
        if frames
            .last()
            .is_none_or(|top| top.function != site.function)
        {
            return Vec::new();
        }
        frames[..frames.len() - 1]
            .iter()
            .rev()
            .map(|caller| {
                let name = self
                    .grid
                    .program
                    .functions
                    .get(caller.function as usize)
                    .map_or_else(String::new, |f| f.name.clone());
                // A caller's `pc` is the operation after its call.
                let call = Site {
                    function: caller.function,
                    pc: caller.pc.saturating_sub(1),
                };
                (name, self.location(call))
            })
            .collect()
    }

    fn site(&self, t: usize, site: Site) -> Box<SimSite> {
        let program = self.grid.program;
        Box::new(SimSite {
            kernel: program.kernel.clone(),
            function: program
                .functions
                .get(site.function as usize)
                .map(|f| f.name.clone())
                .unwrap_or_default(),
            location: self.location(site),
            callers: self.callers(t, site),
            block: self.block_index,
            thread: self.thread_index(t),
            launch: self.grid.label.map(str::to_owned),
        })
    }

    fn warp_error(&self, t: usize, site: Site, detail: String) -> SimError {
        let site = match self.threads[t].status {
            Status::Warp(wait) if site.function == 0 && site.pc == 0 => wait.site,
            _ => site,
        };
        SimError::Warp {
            site: self.site(t, site),
            detail,
        }
    }

    fn barrier_error(&self, t: usize, site: Site, detail: String) -> SimError {
        SimError::BarrierDivergence {
            site: self.site(t, site),
            detail,
        }
    }

    fn region_name(&self, region: u64) -> String {
        match region {
            SHARED_REGION => format!(
                "the block's shared memory ({} bytes)",
                self.grid.program.static_shared_bytes + self.grid.dynamic_shared_bytes
            ),
            LOCAL_REGION => "the thread's local memory".to_owned(),
            r => match (
                self.grid.region_names.get(r as usize),
                self.grid.globals.get(r as usize),
            ) {
                (Some(name), Some(global)) => {
                    format!("`{name}` ({} bytes)", global.memory.len())
                }
                _ => match (
                    r.checked_sub(EXTERN_REGION_BASE).map(|e| e as usize),
                    self.grid.externs,
                ) {
                    (Some(e), Some(binding)) if e < self.grid.externals.len() => format!(
                        "{} ({} bytes)",
                        binding.host.region_name(e),
                        self.grid.externals[e].memory.len()
                    ),
                    _ => format!("region {r}"),
                },
            },
        }
    }

    fn fault_error(&self, t: usize, fault: Fault) -> SimError {
        let site = self.site(t, fault.site);
        let program = self.grid.program;
        match fault.kind {
            FaultKind::OutOfBounds { index, len } => SimError::OutOfBounds { site, index, len },
            FaultKind::RangeOutOfBounds { start, end, len } => SimError::RangeOutOfBounds {
                site,
                start,
                end,
                len,
            },
            FaultKind::Assertion { message } => SimError::Assertion {
                site,
                message: program
                    .messages
                    .get(message as usize)
                    .cloned()
                    .unwrap_or_default(),
            },
            FaultKind::Extern { detail } => SimError::Extern { site, detail },
            FaultKind::Hang { elapsed } => SimError::Hang {
                site,
                milliseconds: u64::try_from(elapsed.as_millis()).unwrap_or(u64::MAX),
            },
            FaultKind::Instruction { detail } => SimError::Ptx { site, detail },
            FaultKind::DivisionByZero { remainder } => SimError::DivisionByZero { site, remainder },
            FaultKind::FellOff => SimError::MemoryAccess {
                site,
                detail: "the function ended without returning its value".into(),
            },
            FaultKind::Misaligned { offset, align } => SimError::MemoryAccess {
                site,
                detail: format!(
                    "a {align}-byte vector access at byte offset {offset}, which is not a multiple of {align}"
                ),
            },
            FaultKind::Access(AccessFault::Race(race)) => {
                let what = match program.shared_at(race.offset) {
                    Some((variable, index)) => format!("`{}`[{index}]", variable.name),
                    None => format!("byte {}", race.offset),
                };
                let verb = |write: bool| if write { "writes" } else { "reads" };
                let other = Site::unpack(race.first_site);
                SimError::SharedMemoryRace {
                    site,
                    detail: format!(
                        "thread {} {} {what} here, but thread {} {} it at {} with no sync_threads() between",
                        fmt3(self.thread_index(t)),
                        verb(race.second_write),
                        fmt3(self.thread_index(race.first_thread as usize)),
                        if race.first_write { "wrote" } else { "read" },
                        self.location(other),
                    ),
                }
            }
            FaultKind::Access(AccessFault::GlobalRace(race)) => {
                SimError::GlobalMemoryRace {
                    site,
                    detail: self.global_race_detail(t, &race),
                }
            }
            FaultKind::Access(AccessFault::InFlight {
                offset,
                owner,
                site: copy_site,
                barrier,
            }) => {
                let what = match program.shared_at(offset) {
                    Some((variable, index)) => format!("`{}`[{index}]", variable.name),
                    None => format!("byte {offset} of shared memory"),
                };
                let copier = if owner as usize == t {
                    "this thread".to_owned()
                } else {
                    format!("thread {}", fmt3(self.thread_index(owner as usize)))
                };
                let copy = self.location(Site::unpack(copy_site));
                let detail = match barrier {
                    None => format!(
                        "thread {} accesses {what}, the destination of a `cp.async` {copier} issued at {copy} and has not waited for: until its `cp.async.wait_group` the data may not have landed (wait for the group, then `sync_threads()` before other threads read it)",
                        fmt3(self.thread_index(t)),
                    ),
                    Some(barrier) => format!(
                        "thread {} accesses {what}, in the box of a TMA load {copier} issued at {copy}, before any thread waited on its mbarrier (shared byte {barrier}): until the barrier's phase completes the box may not have landed (wait with `mbarrier_wait_parity` first)",
                        fmt3(self.thread_index(t)),
                    ),
                };
                SimError::SharedMemoryRace { site, detail }
            }
            FaultKind::Access(AccessFault::Unfenced { offset, writer }) => {
                let what = match program.shared_at(offset) {
                    Some((variable, index)) => format!("`{}`[{index}]", variable.name),
                    None => format!("byte {offset} of shared memory"),
                };
                SimError::Ptx {
                    site,
                    detail: format!(
                        "the tensor cores or TMA read {what} through the asynchronous proxy, but thread {} stored it without a `fence.proxy.async` since (`fence_proxy_async_shared()`): the asynchronous proxy may not see the store (a `sync_threads()` does not order the two proxies)",
                        fmt3(self.thread_index(writer as usize))
                    ),
                }
            }
            FaultKind::Access(AccessFault::OutOfRegion {
                region,
                offset,
                size,
            }) => SimError::MemoryAccess {
                site,
                detail: format!(
                    "a {size}-byte access at byte offset {offset} of {}, outside it",
                    self.region_name(region)
                ),
            },
            FaultKind::Access(AccessFault::Misaligned { offset, align }) => SimError::MemoryAccess {
                site,
                detail: format!("a {align}-byte access at byte offset {offset}, misaligned"),
            },
            FaultKind::Access(AccessFault::ReadOnly { region }) => SimError::MemoryAccess {
                site,
                detail: format!("a store to {}, which is read-only (`&[T]`)", self.region_name(region)),
            },
            FaultKind::Access(AccessFault::BadRegion { region }) => SimError::MemoryAccess {
                site,
                detail: format!("a pointer into region {region}, which does not exist"),
            },
        }
    }
}

fn describe(op: WarpOp) -> String {
    match op {
        WarpOp::Shuffle(mode, _) => format!(
            "shfl_{}_sync",
            match mode {
                ShuffleMode::Idx => "idx",
                ShuffleMode::Up => "up",
                ShuffleMode::Down => "down",
                ShuffleMode::Xor => "xor",
            }
        ),
        WarpOp::Vote(VoteOp::Ballot) => "ballot_sync".into(),
        WarpOp::Vote(VoteOp::All) => "all_sync".into(),
        WarpOp::Vote(VoteOp::Any) => "any_sync".into(),
        WarpOp::ActiveMask(_) => "activemask".into(),
        WarpOp::Collective(_) => "a warp-collective PTX instruction".into(),
    }
}

fn fmt3([x, y, z]: [u32; 3]) -> String {
    format!("({x}, {y}, {z})")
}
