//! The block's barrier: with every warp stopped, `sync_threads()` completes when every
//! thread of the block waits at the same one; anything else (a thread that exited, or one
//! waiting elsewhere) is told apart from a group or grid barrier, or reported.

use crate::error::SimError;
use crate::thread::{Site, Status};

use super::{fmt3, BlockRunner, BlockState};

impl BlockRunner<'_, '_, '_> {
    /// With every warp stopped: completes the block's barrier if every thread waits at
    /// the same one (`None`: the threads run on). Otherwise says whether every thread
    /// exited or every thread waits at the same group barrier; anything else is reported.
    pub(super) fn complete_barrier(&mut self) -> Result<Option<BlockState>, SimError> {
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
        self.shared.threads_synchronised();
        self.barriers += 1;
        Ok(None)
    }
}
