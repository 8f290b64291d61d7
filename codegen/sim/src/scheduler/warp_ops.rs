//! Warp-synchronous operations (`shfl_*_sync`, votes, `activemask`, warp-collective PTX):
//! the lanes stopped at one are grouped as PTX's `.sync` instructions define it (the same
//! operation with the same member mask) and complete together, or the warp is reported
//! when they never can.

use cudajit_core::intrinsics::{ShuffleMode, VoteOp};

use crate::error::SimError;
use crate::thread::{Site, Status, WarpOp};

use super::{describe, fmt3, BlockRunner, Collective, WARP_SIZE};

impl BlockRunner<'_, '_, '_> {
    /// Completes the warp operations of lanes `first..last` that can complete. Returns
    /// whether any did (those lanes are ready again); reports a warp that can never
    /// proceed.
    pub(super) fn complete_warp_operations(
        &mut self,
        first: usize,
        last: usize,
    ) -> Result<bool, SimError> {
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
    pub(super) fn deliver(
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
}
