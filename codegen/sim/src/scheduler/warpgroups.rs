//! What completes once every warp of the block has stopped: warpgroup-collective
//! instructions (`wgmma`, `setmaxnreg`: all 128 threads of warps `4w..4w+4` at the same
//! instruction) and `mbarrier` waits whose phase has completed. When neither can make
//! progress and a thread still waits in one, the block can never finish: that is
//! reported, naming the barrier's state or the missing threads, instead of hanging.

use super::super::error::SimError;
use super::super::memory::async_reads::AsyncReader;
use super::super::ptx::wgmma::{run_wgmma, WARPGROUP};
use super::super::ptx::{Participants, PtxOp};
use super::super::thread::{Site, Status, WarpOp};
use super::{fmt3, BlockRunner};
use crate::isa::Op;

impl BlockRunner<'_, '_, '_> {
    fn warpgroup_op(&self, t: usize) -> Option<(Site, &PtxOp)> {
        let Status::Warp(wait) = self.threads[t].status else {
            return None;
        };
        let WarpOp::Collective(site) = wait.op else {
            return None;
        };
        match self
            .grid
            .program
            .functions
            .get(site.function as usize)
            .and_then(|f| f.code.get(site.pc as usize))
        {
            Some(Op::Ptx(op)) if op.participants() == Participants::Warpgroup => Some((site, op)),
            _ => None,
        }
    }

    /// Runs every warpgroup instruction that all 128 threads of its warpgroup wait at.
    /// Returns whether any ran.
    pub(super) fn complete_warpgroups(&mut self) -> Result<bool, SimError> {
        let threads = self.threads.len();
        let mut progress = false;
        for first in (0..threads).step_by(WARPGROUP) {
            let Some(leader) =
                (first..(first + WARPGROUP).min(threads)).find(|&t| self.warpgroup_op(t).is_some())
            else {
                continue;
            };
            let Some((site, op)) = self.warpgroup_op(leader) else {
                continue;
            };
            let name = op.name();
            if first + WARPGROUP > threads {
                return Err(SimError::Ptx {
                    site: self.site(leader, site),
                    detail: format!(
                        "`{name}` is warpgroup-collective: the 128 threads of warps {}..{} run it together, but the block has {threads} threads",
                        first / 32,
                        first / 32 + 4
                    ),
                });
            }
            let all_here = (first..first + WARPGROUP)
                .all(|t| self.warpgroup_op(t).is_some_and(|(s, _)| s == site));
            if !all_here {
                continue;
            }
            let op = op.clone();
            self.run_warpgroup(first, site, &op)?;
            progress = true;
        }
        Ok(progress)
    }

    fn run_warpgroup(&mut self, first: usize, site: Site, op: &PtxOp) -> Result<(), SimError> {
        let group = first / WARPGROUP;
        if self.shared.wgmma_fenced.len() <= group {
            self.shared.wgmma_fenced.resize(group + 1, false);
        }
        match op {
            PtxOp::WgmmaFence => self.shared.wgmma_fenced[group] = true,
            PtxOp::Wgmma(wgmma) => {
                if !self.shared.wgmma_fenced[group] {
                    return Err(SimError::Ptx {
                        site: self.site(first, site),
                        detail: format!(
                            "`wgmma.mma_async` without a `wgmma.fence` before it: warpgroup {group} must issue `wgmma.fence.sync.aligned` (`wgmma_fence()`) before its first wgmma, so the accumulators' registers and the shared tiles are ordered before the tensor cores read them"
                        ),
                    });
                }
                self.run_on_lanes(first, WARPGROUP, site, |lanes, shared| {
                    run_wgmma(wgmma, group as u32, lanes, shared)
                })?;
            }
            PtxOp::WgmmaCommit => self.shared.reads.commit(AsyncReader::Wgmma(group as u32)),
            &PtxOp::WgmmaWait { keep } => self.shared.reads.wait(
                AsyncReader::Wgmma(group as u32),
                keep,
                first..first + WARPGROUP,
            ),
            // `setmaxnreg` has nothing to reallocate; it is checked for being the whole
            // warpgroup's.
            _ => {}
        }
        for t in first..first + WARPGROUP {
            self.threads[t].status = Status::Ready;
        }
        Ok(())
    }

    /// Makes ready the threads whose `mbarrier` wait is satisfied (the TMA loads of the
    /// barriers they wait on landed first). Returns whether any was.
    pub(super) fn wake_barrier_waiters(&mut self) -> Result<bool, SimError> {
        let mut progress = false;
        for t in 0..self.threads.len() {
            let Status::Mbarrier {
                site,
                barrier,
                parity,
                dst,
            } = self.threads[t].status
            else {
                continue;
            };
            self.shared
                .land_tma(Some(barrier))
                .map_err(|detail| SimError::Ptx {
                    site: self.site(t, site),
                    detail,
                })?;
            if self.shared.barriers.satisfied(barrier, parity) == Ok(true) {
                self.shared.reads.acquire(barrier, t as u32);
                self.regs[t * self.stack_registers + dst] = 1;
                self.threads[t].status = Status::Ready;
                progress = true;
            }
        }
        Ok(progress)
    }

    /// With nothing else to run: lands every TMA load still in flight (no thread waits on
    /// its barrier, but the copy completes on a GPU all the same). Returns whether any did.
    pub(super) fn land_every_tma(&mut self) -> Result<bool, SimError> {
        if !self.shared.copies.tma_in_flight() {
            return Ok(false);
        }
        let kernel = self.grid.program.kernel.clone();
        self.shared
            .land_tma(None)
            .map_err(|detail| SimError::Launch { kernel, detail })
    }

    /// With nothing left to run: a thread that waits in an mbarrier or a warpgroup
    /// instruction that can no longer complete, as an error.
    pub(super) fn stuck(&self) -> Option<SimError> {
        for t in 0..self.threads.len() {
            if let Status::Mbarrier {
                site,
                barrier,
                parity,
                ..
            } = self.threads[t].status
            {
                let state = match self.shared.barriers.get(barrier) {
                    Some(b) => format!(
                        "its current phase ({}, parity {}) still expects {} of {} arrivals and {} transaction bytes",
                        b.phase,
                        b.phase & 1,
                        b.pending,
                        b.count,
                        b.transactions
                    ),
                    None => "it is not initialised".to_owned(),
                };
                let name = self
                    .grid
                    .program
                    .shared_at(u64::from(barrier))
                    .map(|(v, i)| format!(" (`{}`[{i}])", v.name))
                    .unwrap_or_default();
                return Some(SimError::Ptx {
                    site: self.site(t, site),
                    detail: format!(
                        "this `mbarrier.try_wait` on the barrier at shared byte {barrier}{name} for the phase of parity {parity} can never complete: {state}, and no thread of the block can arrive any more ({}); on a GPU the block would hang",
                        self.others_whereabouts(t)
                    ),
                });
            }
        }
        for t in 0..self.threads.len() {
            if let Some((site, op)) = self.warpgroup_op(t) {
                let first = t - t % WARPGROUP;
                let missing = (first..first + WARPGROUP)
                    .find(|&u| self.warpgroup_op(u).is_none_or(|(s, _)| s != site))
                    .unwrap_or(first);
                return Some(SimError::Ptx {
                    site: self.site(t, site),
                    detail: format!(
                        "`{}` is warpgroup-collective (`.sync.aligned`): the 128 threads of warpgroup {} run it together, but thread {} {}",
                        op.name(),
                        first / WARPGROUP,
                        fmt3(self.thread_index(missing)),
                        self.whereabouts(missing)
                    ),
                });
            }
        }
        self.stuck_at_named_barrier()
    }

    /// Where the other threads of the block stand (up to three distinct places), for the
    /// message of a wait that can never complete.
    pub(super) fn others_whereabouts(&self, me: usize) -> String {
        let mut seen: Vec<(usize, String)> = Vec::new();
        for t in 0..self.threads.len() {
            if t == me {
                continue;
            }
            let what = self.whereabouts(t);
            if !seen.iter().any(|(_, w)| *w == what) {
                seen.push((t, what));
            }
        }
        seen.iter()
            .take(3)
            .map(|(t, what)| format!("thread {} {what}", fmt3(self.thread_index(*t))))
            .collect::<Vec<_>>()
            .join("; ")
    }
}
