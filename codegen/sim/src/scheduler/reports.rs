//! What the scheduler reports: a site's location and callers, and the errors of warps,
//! barriers and faulting threads, in the user's terms (kernel, block, thread, source
//! position, memory region).

use cudajit_core::intrinsics::{ShuffleMode, VoteOp};

use crate::error::{SimError, SimSite};
use crate::memory::async_reads::{AsyncReader, PendingRead};
use crate::memory::{AccessFault, EXTERN_REGION_BASE, LOCAL_REGION, SHARED_REGION};
use crate::thread::{Fault, FaultKind, Site, Status, WarpOp};

use super::BlockRunner;

impl BlockRunner<'_, '_, '_> {
    pub(super) fn location(&self, site: Site) -> String {
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
    pub(super) fn callers(&self, t: usize, site: Site) -> Vec<(String, String)> {
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

    pub(super) fn site(&self, t: usize, site: Site) -> Box<SimSite> {
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

    pub(super) fn warp_error(&self, t: usize, site: Site, detail: String) -> SimError {
        let site = match self.threads[t].status {
            Status::Warp(wait) if site.function == 0 && site.pc == 0 => wait.site,
            _ => site,
        };
        SimError::Warp {
            site: self.site(t, site),
            detail,
        }
    }

    pub(super) fn barrier_error(&self, t: usize, site: Site, detail: String) -> SimError {
        SimError::BarrierDivergence {
            site: self.site(t, site),
            detail,
        }
    }

    pub(super) fn region_name(&self, region: u64) -> String {
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

    /// A write to bytes an asynchronous read may still be reading: who reads them, from
    /// which line, and what orders the two.
    fn pending_read_detail(&self, t: usize, pending: &PendingRead) -> String {
        let what = match self.grid.program.shared_at(pending.offset) {
            Some((variable, index)) => format!("`{}`[{index}]", variable.name),
            None => format!("byte {} of shared memory", pending.offset),
        };
        let at = match pending.site {
            0 => String::new(),
            site => format!(" at {}", self.location(Site::unpack(site))),
        };
        let writer = fmt3(self.thread_index(t));
        let (reader, until, retire) = match pending.reader {
            AsyncReader::Wgmma(group) => (
                format!("an operand of a `wgmma` of warpgroup {group} issued{at}"),
                "a wgmma reads its shared operands at any point until the `wgmma_wait_group` that retires its group returns (`wgmma_wait_group::<N>` leaves the newest N groups in flight)",
                "retire the group first (`wgmma_wait_group` with fewer groups left in flight)",
            ),
            AsyncReader::TmaStore(thread) => (
                format!(
                    "the source of a TMA store thread {} issued{at}",
                    fmt3(self.thread_index(thread as usize))
                ),
                "a TMA store reads its box at any point until the `tma_store_wait()` (`cp.async.bulk.wait_group.read`) that retires its group returns",
                "retire the store first (`tma_store_wait()` after `tma_store_commit()`)",
            ),
        };
        let order = "a `sync_threads()` (or named barrier) between the wait and this write, or an mbarrier arrival after the wait that this thread waits on before writing (`Ring::release` then `Ring::acquire`)";
        if pending.retired {
            format!(
                "thread {writer} overwrites {what}, {reader}: its wait has retired it, but nothing orders that wait before this write, so on a GPU the write may land while the read is still under way ({until}). Fix: add {order}"
            )
        } else {
            format!(
                "thread {writer} overwrites {what}, {reader}, which is still in flight: {until}, so on a GPU the new data may be read. Fix: {retire}, then order that wait before this write with {order}"
            )
        }
    }

    pub(super) fn fault_error(&self, t: usize, fault: Fault) -> SimError {
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
            FaultKind::Access(AccessFault::AsyncReadPending(pending)) => SimError::SharedMemoryRace {
                site,
                detail: self.pending_read_detail(t, &pending),
            },
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

pub(super) fn describe(op: WarpOp) -> String {
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

pub(super) fn fmt3([x, y, z]: [u32; 3]) -> String {
    format!("({x}, {y}, {z})")
}
