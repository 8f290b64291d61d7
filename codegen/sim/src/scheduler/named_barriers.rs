//! The block's 16 named barriers (`bar.sync`, `bar.arrive`), as the PTX ISA defines them:
//! the warp is the unit. A warp arrives once every non-exited lane is at the instruction;
//! a barrier's phase completes when the warps that arrived make up its thread count (a
//! multiple of 32, the same at every arrival of the phase; without one, every warp of the
//! block), which releases the warps waiting in `bar.sync`, while `bar.arrive` never waits.
//! A phase that can never complete is reported, naming where the other threads are.

use super::super::error::SimError;
use super::super::ptx::NamedBarrier;
use super::super::thread::{Site, Status};
use super::collective::Collective;
use super::{fmt3, BlockRunner, WARP_SIZE};

/// Barriers per block.
const BARRIERS: usize = 16;

/// The state of every named barrier of a block.
#[derive(Clone, Debug, Default)]
pub(super) struct NamedBarriers {
    phases: [Phase; BARRIERS],
}

impl NamedBarriers {
    /// Every barrier at the start of a block: no arrivals.
    pub(super) fn reset(&mut self) {
        *self = Self::default();
    }
}

/// One barrier's current phase.
#[derive(Clone, Copy, Debug, Default)]
struct Phase {
    /// The threads it counts (from its first arrival; 0 before).
    count: u32,
    /// The warps arrived so far.
    arrived: u32,
    /// Phases completed: a waiting warp is released once this moves past its own.
    generation: u32,
    /// Where the phase's first warp arrived (its first lane's thread and the site), for
    /// the message of a mismatched count.
    first: Option<(usize, Site)>,
}

impl BlockRunner<'_, '_, '_> {
    /// The arrival of the warp `first..last`, whose lanes `group` wait at `barrier` (the
    /// instruction at `site`): once every other lane has exited, its lanes arrive.
    pub(super) fn arrive_at_named_barrier(
        &mut self,
        first: usize,
        last: usize,
        group: &[usize],
        site: Site,
        barrier: &NamedBarrier,
    ) -> Result<Collective, SimError> {
        let name = if barrier.wait {
            "bar.sync"
        } else {
            "bar.arrive"
        };
        let error = |runner: &Self, detail: String| SimError::Ptx {
            site: runner.site(group[0], site),
            detail,
        };
        for t in first..last {
            if group.contains(&t) {
                continue;
            }
            match self.threads[t].status {
                Status::Exited => {}
                Status::Ready => return Ok(Collective::Waiting),
                _ => {
                    let detail = format!(
                        "`{name}` counts warps: every lane of the warp that has not exited arrives at the same barrier instruction (`.aligned`), but lane {} (thread {}) {}",
                        t - first,
                        fmt3(self.thread_index(t)),
                        self.whereabouts(t)
                    );
                    return Ok(Collective::Blocked(error(self, detail)));
                }
            }
        }
        // The operands, which every lane must give alike.
        let operand = |runner: &Self, t: usize, reg: u32| -> u32 {
            let Status::Warp(wait) = runner.threads[t].status else {
                unreachable!("a lane at a barrier waits in a warp operation");
            };
            runner.regs[t * runner.stack_registers + wait.dst + reg as usize] as u32
        };
        let read = |runner: &Self, t: usize| {
            (
                operand(runner, t, barrier.id),
                barrier.count.map(|c| operand(runner, t, c)),
            )
        };
        let (id, count) = read(self, group[0]);
        if let Some(&other) = group.iter().find(|&&t| read(self, t) != (id, count)) {
            let (other_id, other_count) = read(self, other);
            let show = |c: Option<u32>| c.map_or("every thread".to_owned(), |c| c.to_string());
            return Err(error(
                self,
                format!(
                    "`{name}`: the lanes of a warp arrive together, so they give the same barrier and thread count, but thread {} gives barrier {id} with {} and thread {} barrier {other_id} with {}",
                    fmt3(self.thread_index(group[0])),
                    show(count),
                    fmt3(self.thread_index(other)),
                    show(other_count)
                ),
            ));
        }
        if id as usize >= BARRIERS {
            return Err(error(
                self,
                format!("`{name}` on barrier {id}: a block has 16 named barriers, 0 to 15"),
            ));
        }
        let warps = self.threads.len().div_ceil(WARP_SIZE) as u32;
        let capacity = warps * WARP_SIZE as u32;
        let count = match count {
            None => capacity,
            Some(count) if count == 0 || count % WARP_SIZE as u32 != 0 => {
                return Err(error(
                    self,
                    format!(
                        "`{name}` on barrier {id} for {count} threads: the count is a non-zero multiple of the warp size (32), since warps arrive as a whole"
                    ),
                ))
            }
            Some(count) if count > capacity => {
                return Err(error(
                    self,
                    format!(
                        "`{name}` on barrier {id} for {count} threads, but the block has {} threads ({warps} warps): the barrier could never complete",
                        self.threads.len()
                    ),
                ))
            }
            Some(count) => count,
        };
        let phase = self.named.phases[id as usize];
        if phase.arrived > 0 && phase.count != count {
            let (t, at) = phase.first.unwrap_or((group[0], site));
            return Err(error(
                self,
                format!(
                    "`{name}` on barrier {id} for {count} threads, but thread {} arrived at it in this phase for {} (at {}): every arrival of a phase gives the same thread count",
                    fmt3(self.thread_index(t)),
                    phase.count,
                    self.location(at)
                ),
            ));
        }
        let generation = phase.generation;
        let phase = &mut self.named.phases[id as usize];
        phase.count = count;
        phase.arrived += 1;
        phase.first.get_or_insert((group[0], site));
        if phase.arrived * WARP_SIZE as u32 == count {
            *phase = Phase {
                generation: generation.wrapping_add(1),
                ..Phase::default()
            };
            // Like `sync_threads()`, a completed barrier orders the block's shared memory.
            self.shared.threads_synchronised();
            self.barriers += 1;
        }
        for &t in group {
            self.threads[t].status = if barrier.wait {
                Status::NamedBarrier {
                    site,
                    id,
                    generation,
                }
            } else {
                Status::Ready
            };
        }
        Ok(Collective::Done)
    }

    /// Makes ready the threads whose named barrier has completed the phase they waited
    /// in. Returns whether any was.
    pub(super) fn wake_named_barrier_waiters(&mut self) -> bool {
        let mut progress = false;
        for state in &mut self.threads {
            if let Status::NamedBarrier { id, generation, .. } = state.status {
                if self.named.phases[id as usize].generation != generation {
                    state.status = Status::Ready;
                    progress = true;
                }
            }
        }
        progress
    }

    /// With nothing left to run: a thread waiting at a named barrier, whose phase can no
    /// longer complete, as an error.
    pub(super) fn stuck_at_named_barrier(&self) -> Option<SimError> {
        let (t, site, id) =
            self.threads
                .iter()
                .enumerate()
                .find_map(|(t, state)| match state.status {
                    Status::NamedBarrier { site, id, .. } => Some((t, site, id)),
                    _ => None,
                })?;
        let phase = self.named.phases[id as usize];
        Some(SimError::BarrierDivergence {
            site: self.site(t, site),
            detail: format!(
                "this `bar.sync` on named barrier {id} can never complete: {} of the {} warps its {} threads make have arrived in this phase, and no other warp of the block can arrive any more ({}); on a GPU the block would hang",
                phase.arrived,
                phase.count / WARP_SIZE as u32,
                phase.count,
                self.others_whereabouts(t)
            ),
        })
    }
}
