//! Warp-collective inline PTX (`mma.sync`, `ldmatrix`): completed once all 32 lanes of the
//! warp wait at the same instruction, as `.sync.aligned` requires; a lane that exited, or
//! a warp of fewer than 32 threads, is an error rather than the GPU's undefined result.

use super::super::error::SimError;
use super::super::memory::SharedMemory;
use super::super::ptx::warp::run_collective;
use super::super::ptx::Lane;
use super::super::ptx::{kernel_site, Participants, PtxOp};
use super::super::thread::{Fault, FaultKind, Site, Status};
use super::{fmt3, BlockRunner, WARP_SIZE};
use crate::isa::Op;

/// Where a collective stands after a round of its warp.
pub(super) enum Collective {
    /// It ran: every lane is ready again.
    Done,
    /// A lane has yet to arrive (it is ready to run).
    Waiting,
    /// A lane waits elsewhere: the error if the warp makes no other progress.
    Blocked(SimError),
    /// A warpgroup's instruction: completed once every warp of the block has stopped
    /// ([`BlockRunner::complete_warpgroups`]).
    Parked,
}

impl BlockRunner<'_, '_, '_> {
    /// Runs the collective instruction at `site` that the threads of `group` (of the warp
    /// `first..last`) wait at, if every lane is there.
    pub(super) fn complete_collective(
        &mut self,
        first: usize,
        last: usize,
        group: &[usize],
        site: Site,
    ) -> Result<Collective, SimError> {
        let program = self.grid.program;
        let Some(Op::Ptx(op)) = program
            .functions
            .get(site.function as usize)
            .and_then(|f| f.code.get(site.pc as usize))
        else {
            unreachable!("a collective waits at an inline PTX operation");
        };
        if op.participants() == Participants::Warpgroup {
            return Ok(Collective::Parked);
        }
        if let PtxOp::NamedBarrier(barrier) = &**op {
            let barrier = barrier.clone();
            return self.arrive_at_named_barrier(first, last, group, site, &barrier);
        }
        let name = op.name();
        let ptx_error = |runner: &Self, detail: String| SimError::Ptx {
            site: runner.site(group[0], site),
            detail,
        };
        if last - first < WARP_SIZE {
            return Err(ptx_error(
                self,
                format!(
                    "`{name}` is warp-collective: all 32 lanes of a warp run it together, but this warp has {} threads (the block's size is not a multiple of 32)",
                    last - first
                ),
            ));
        }
        for lane in 0..WARP_SIZE {
            let t = first + lane;
            if group.contains(&t) {
                continue;
            }
            let elsewhere = match self.threads[t].status {
                Status::Ready => return Ok(Collective::Waiting),
                Status::Exited => {
                    return Err(ptx_error(
                        self,
                        format!(
                            "`{name}` is warp-collective (`.sync.aligned`): every lane of the warp runs it together, but lane {lane} (thread {}) exited without reaching it",
                            fmt3(self.thread_index(t))
                        ),
                    ))
                }
                _ => self.whereabouts(t),
            };
            return Ok(Collective::Blocked(ptx_error(
                self,
                format!(
                    "`{name}` is warp-collective (`.sync.aligned`): every lane of the warp runs this same instruction, but lane {lane} (thread {}) {elsewhere}",
                    fmt3(self.thread_index(t))
                ),
            )));
        }
        self.run_on_lanes(first, WARP_SIZE, site, |lanes, shared| {
            run_collective(op, lanes, shared)
        })?;
        for t in first..first + WARP_SIZE {
            self.threads[t].status = Status::Ready;
        }
        Ok(Collective::Done)
    }
}

impl BlockRunner<'_, '_, '_> {
    /// Where thread `t`, which is not running, stands: for messages.
    /// Runs a collective instruction over threads `first..first + count`, all waiting at it:
    /// each lane sees its registers from the destination its wait names and the kernel-level
    /// site of the instruction; a lane's fault becomes the block's error at `site`.
    pub(super) fn run_on_lanes(
        &mut self,
        first: usize,
        count: usize,
        site: Site,
        run: impl FnOnce(&mut [Lane<'_>], &mut SharedMemory) -> Result<(), (usize, FaultKind)>,
    ) -> Result<(), SimError> {
        let waits: Vec<(usize, u32)> = (first..first + count)
            .map(|t| match self.threads[t].status {
                Status::Warp(wait) => (
                    wait.dst,
                    kernel_site(&self.threads[t].frames, wait.site).pack(),
                ),
                _ => (0, 0),
            })
            .collect();
        let r = self.stack_registers;
        let outcome = {
            let mut lanes: Vec<Lane<'_>> = self.regs[first * r..(first + count) * r]
                .chunks_mut(r)
                .zip(&waits)
                .enumerate()
                .map(|(lane, (regs, &(base, site)))| Lane {
                    regs: &mut regs[base..],
                    thread: (first + lane) as u32,
                    site,
                })
                .collect();
            run(&mut lanes, &mut self.shared)
        };
        outcome.map_err(|(lane, kind)| self.fault_error(first + lane, Fault { kind, site }))
    }

    pub(super) fn whereabouts(&self, t: usize) -> String {
        match self.threads[t].status {
            Status::Ready => "has yet to run".to_owned(),
            Status::Exited => "exited".to_owned(),
            Status::Barrier { site } => {
                format!("waits at the sync_threads() at {}", self.location(site))
            }
            Status::Warp(other) => format!("waits at {}", self.location(other.site)),
            Status::NamedBarrier { site, id, .. } => {
                format!("waits at named barrier {id} (`bar.sync`) at {}", self.location(site))
            }
            Status::Group { site, function } => format!(
                "waits in `{}` at {}",
                self.extern_name(function),
                self.location(site)
            ),
            Status::Grid { site } => {
                format!("waits at the grid_sync() at {}", self.location(site))
            }
            Status::ClusterWait { site } => format!(
                "waits at the barrier.cluster.wait at {}",
                self.location(site)
            ),
            Status::Mbarrier {
                site,
                barrier,
                parity,
                ..
            } => format!(
                "waits on the mbarrier at shared byte {barrier} for its phase of parity {parity} at {}",
                self.location(site)
            ),
        }
    }
}
