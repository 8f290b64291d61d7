//! The [`PtxOp`]s one thread runs alone: `cp.async` and its groups, `mbarrier`.

use super::super::memory::{
    AccessFault, MemoryView, LOCAL_REGION, OFFSET_BITS, OFFSET_MASK, SHARED_REGION,
};
use super::PtxOp;
use crate::memory::async_copy::PendingCopy;
use crate::memory::async_reads::AsyncReader;
use crate::thread_state::FaultKind;
use crate::thread_state::Reg;

/// What the thread does after a [`PtxOp`].
pub(crate) enum Step {
    /// Runs on.
    Next,
    /// Waits until the mbarrier at `barrier` has completed the phase of parity `parity`,
    /// then `done` (a frame register) is 1.
    Wait {
        barrier: u32,
        parity: u32,
        done: Reg,
    },
    /// Waits at `barrier.cluster.wait` until every thread of the cluster has arrived.
    ClusterWait,
}

/// The shared byte offset of a barrier operand, checked to be inside shared memory and
/// 8-byte aligned.
fn barrier_at(regs: &[u64], reg: Reg, memory: &MemoryView<'_, '_>) -> Result<u32, FaultKind> {
    let offset = regs[reg as usize] & u64::from(u32::MAX);
    memory
        .shared
        .check_async_destination(offset, 8)
        .map_err(FaultKind::Access)?;
    Ok(offset as u32)
}

/// Runs `op` for the thread whose frame registers are `regs`; `site` is the operation's
/// (packed), for race records.
pub(crate) fn run_thread(
    op: &PtxOp,
    regs: &mut [u64],
    memory: &mut MemoryView<'_, '_>,
    site: u32,
) -> Result<Step, FaultKind> {
    let thread = memory.thread;
    let instruction = |detail: String| FaultKind::Instruction { detail };
    match op {
        PtxOp::CpAsync {
            shared,
            global,
            bytes,
            source_bytes,
        } => {
            let offset = regs[*shared as usize] & u64::from(u32::MAX);
            let source = regs[*global as usize];
            let bytes = *bytes;
            let read = match source_bytes {
                Some(reg) => {
                    let read = regs[*reg as usize] & u64::from(u32::MAX);
                    if read > u64::from(bytes) {
                        return Err(FaultKind::Instruction {
                            detail: format!(
                                "`cp.async` of {bytes} bytes with a source size of {read}: the source size is 0 to {bytes}"
                            ),
                        });
                    }
                    read as u32
                }
                None => bytes,
            };
            let region = source >> OFFSET_BITS;
            if region == SHARED_REGION || region == LOCAL_REGION {
                return Err(FaultKind::Instruction {
                    detail: format!(
                        "`cp.async` reads global memory, but its source {source:#x} is a shared or local address (give `global_address(&x[i])`)"
                    ),
                });
            }
            let align = u64::from(bytes);
            if !(source & OFFSET_MASK).is_multiple_of(align) {
                return Err(FaultKind::Access(AccessFault::Misaligned {
                    offset: source & OFFSET_MASK,
                    align: bytes,
                }));
            }
            memory
                .shared
                .check_async_destination(offset, bytes)
                .map_err(FaultKind::Access)?;
            let mut data = [0u8; 16];
            if read == bytes {
                let chunk = bytes.min(8);
                for at in (0..bytes).step_by(chunk as usize) {
                    let value = memory
                        .load(source + u64::from(at), chunk, site)
                        .map_err(FaultKind::Access)?;
                    data[at as usize..(at + chunk) as usize]
                        .copy_from_slice(&value.to_le_bytes()[..chunk as usize]);
                }
            } else {
                // The zero-fill form reads its `read` bytes one by one (any count is allowed).
                for at in 0..read {
                    let value = memory
                        .load(source + u64::from(at), 1, site)
                        .map_err(FaultKind::Access)?;
                    data[at as usize] = value as u8;
                }
            }
            memory
                .shared
                .issue_async_copy(
                    thread,
                    PendingCopy {
                        offset: offset as u32,
                        bytes,
                        data,
                        site,
                    },
                )
                .map_err(FaultKind::Access)?;
        }
        PtxOp::CpAsyncCommit => memory.shared.copies.commit(thread),
        PtxOp::CpAsyncWait { keep } => memory
            .shared
            .land_async_copies(thread, *keep)
            .map_err(FaultKind::Access)?,
        PtxOp::MbarrierInit { barrier, count } => {
            let offset = barrier_at(regs, *barrier, memory)?;
            let count = regs[*count as usize] as u32;
            memory
                .shared
                .barriers
                .init(offset, count)
                .map_err(instruction)?;
        }
        PtxOp::MbarrierArrive {
            state,
            barrier,
            bytes,
            arrive,
        } => {
            let offset = barrier_at(regs, *barrier, memory)?;
            let barriers = &mut memory.shared.barriers;
            let what = &*op.name();
            if let Some(bytes) = bytes {
                let bytes = regs[*bytes as usize] as u32;
                barriers.expect(offset, bytes, what).map_err(instruction)?;
            }
            if *arrive {
                let (phase, completed) = barriers.arrive(offset, what).map_err(instruction)?;
                if let Some(state) = state {
                    regs[*state as usize] = phase;
                }
                memory.shared.reads.arrive(offset, thread);
                if completed {
                    memory.shared.phase_completed(offset);
                }
            }
        }
        PtxOp::MbarrierWait {
            done,
            barrier,
            parity,
            suspend,
        } => {
            let offset = barrier_at(regs, *barrier, memory)?;
            // The TMA loads this barrier waits for land now, at the first look at it.
            memory.shared.land_tma(Some(offset)).map_err(instruction)?;
            let parity = regs[*parity as usize] as u32 & 1;
            let satisfied = memory
                .shared
                .barriers
                .satisfied(offset, parity)
                .map_err(instruction)?;
            if !satisfied && *suspend {
                return Ok(Step::Wait {
                    barrier: offset,
                    parity,
                    done: *done,
                });
            }
            if satisfied {
                memory.shared.reads.acquire(offset, thread);
            }
            regs[*done as usize] = u64::from(satisfied);
        }
        PtxOp::TmaLoad(load) => super::tma::run_tma_load(load, regs, memory, site)?,
        PtxOp::TmaStore(store) => super::tma::run_tma_store(store, regs, memory, site)?,
        PtxOp::BulkCommit => memory.shared.reads.commit(AsyncReader::TmaStore(thread)),
        PtxOp::BulkWait { keep } => {
            memory
                .shared
                .reads
                .wait(AsyncReader::TmaStore(thread), *keep, [thread as usize]);
        }
        PtxOp::ProxyFence => {
            std::sync::atomic::fence(std::sync::atomic::Ordering::SeqCst);
            memory.shared.proxy.fence(thread);
        }
        PtxOp::ClusterArrive => super::cluster::arrive(memory)?,
        PtxOp::ClusterWait => {
            if super::cluster::wait(memory)? {
                return Ok(Step::ClusterWait);
            }
        }
        PtxOp::Mapa { dst, address, rank } => {
            super::cluster::mapa(regs, *dst, *address, *rank, memory)?
        }
        PtxOp::Dsmem(access) => super::cluster::access(access, regs, memory, site)?,
        PtxOp::MbarrierArriveCluster { barrier } => {
            super::cluster::arrive_remote(regs, *barrier, memory)?
        }
        PtxOp::Mma(_)
        | PtxOp::LdMatrix(_)
        | PtxOp::StMatrix(_)
        | PtxOp::Wgmma(_)
        | PtxOp::WgmmaFence
        | PtxOp::WgmmaCommit
        | PtxOp::WgmmaWait { .. }
        | PtxOp::SetMaxNreg
        | PtxOp::NamedBarrier(_) => {
            unreachable!("collective instructions run in the scheduler")
        }
    }
    Ok(Step::Next)
}
