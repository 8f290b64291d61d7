//! Thread-block clusters (sm_90): `barrier.cluster`, `mapa`, `ld`/`st.shared::cluster`
//! and `mbarrier.arrive` on another block's barrier. The scheduler runs the blocks of a
//! cluster together (`scheduler/clusters.rs`); this module is what one thread does.
//!
//! A `.shared::cluster` address is a block's shared byte offset with the block's rank + 1
//! in bits 24–31 (shared memory is under 2^18 bytes): an address with zero there is this
//! block's own `.shared` address, which PTX lets a block use as a `.shared::cluster` one
//! for itself. `mapa` writes the rank, the accesses decode it; the GPU's addresses carry
//! the CTA id alike, in bits the kernel never reads.

use super::super::memory::{AccessFault, Arrival, MemoryView};
use crate::thread_state::FaultKind;
use crate::thread_state::Reg;

/// Where the rank of a `.shared::cluster` address starts.
const RANK_SHIFT: u32 = 24;
const OFFSET_MASK: u32 = (1 << RANK_SHIFT) - 1;

/// A `.shared::cluster` access of `size` bytes through `address` (`ld`), or storing
/// `value` (`st`).
#[derive(Clone, Debug)]
pub(crate) struct DsmemAccess {
    pub address: Reg,
    pub size: u32,
    /// `ld`'s destination, or `st`'s value.
    pub value: Reg,
    pub store: bool,
}

/// The `.shared::cluster` address of shared byte `offset` of block `rank`.
fn encode(rank: u32, offset: u32) -> u32 {
    ((rank + 1) << RANK_SHIFT) | offset
}

/// The block rank and shared byte offset a `.shared::cluster` address names, checked
/// against the cluster (`what` names the instruction for the message).
pub(crate) fn decode(
    address: u64,
    memory: &MemoryView<'_, '_>,
    what: &str,
) -> Result<(u32, u32), FaultKind> {
    let address = address as u32;
    let (rank, offset) = match address >> RANK_SHIFT {
        0 => (memory.cluster.rank, address),
        high => (high - 1, address & OFFSET_MASK),
    };
    if rank >= memory.cluster.size {
        return Err(FaultKind::Instruction {
            detail: format!(
                "`{what}` through the address {address:#x}, which names block rank {rank} of a cluster of {} blocks (ranks 0 to {}): give `mapa` (`map_shared_rank`) a rank below `cluster_nctarank()`",
                memory.cluster.size,
                memory.cluster.size - 1
            ),
        });
    }
    Ok((rank, offset))
}

/// `mapa.shared::cluster.u32 d, a, rank`: the address of the variable at `a` (this
/// block's or another's) in block `rank`'s shared memory.
pub(crate) fn mapa(
    regs: &mut [u64],
    dst: Reg,
    address: Reg,
    rank: Reg,
    memory: &MemoryView<'_, '_>,
) -> Result<(), FaultKind> {
    let (_, offset) = decode(regs[address as usize], memory, "mapa")?;
    let rank = regs[rank as usize] as u32;
    let size = memory.cluster.size;
    if rank >= size {
        return Err(FaultKind::Instruction {
            detail: format!(
                "`mapa` to block rank {rank}, but the cluster has {size} blocks (ranks 0 to {}): the rank must be below `cluster_nctarank()`",
                size - 1
            ),
        });
    }
    regs[dst as usize] = u64::from(encode(rank, offset));
    Ok(())
}

/// `ld.shared::cluster` / `st.shared::cluster`. Another block's memory is bounds- and
/// copy-checked but outside the race records, whose barrier intervals are per block.
pub(crate) fn access(
    op: &DsmemAccess,
    regs: &mut [u64],
    memory: &mut MemoryView<'_, '_>,
    site: u32,
) -> Result<(), FaultKind> {
    let what = if op.store {
        "st.shared::cluster"
    } else {
        "ld.shared::cluster"
    };
    let (rank, offset) = decode(regs[op.address as usize], memory, what)?;
    let (offset, size, thread) = (u64::from(offset), op.size, memory.thread);
    let own = rank == memory.cluster.rank;
    let shared = memory.shared_of(rank);
    let len = shared.len();
    let outside = |fault: AccessFault| {
        match fault {
        AccessFault::OutOfRegion { .. } => FaultKind::Instruction {
            detail: format!(
                "`{what}` of {size} bytes at byte offset {offset} of block rank {rank}'s shared memory ({len} bytes), outside it"
            ),
        },
        other => FaultKind::Access(other),
    }
    };
    if op.store {
        let value = regs[op.value as usize];
        let result = if own {
            shared.store(offset, size, value, thread, site)
        } else {
            shared.store_remote(offset, size, value)
        };
        result.map_err(outside)
    } else {
        let result = if own {
            shared.load(offset, size, thread, site)
        } else {
            shared.load_remote(offset, size)
        };
        regs[op.value as usize] = result.map_err(outside)?;
        Ok(())
    }
}

/// `mbarrier.arrive.release.cluster.shared::cluster.b64 _, [barrier]`: one arrival on the
/// barrier at a `.shared::cluster` address, this block's or another's.
pub(crate) fn arrive_remote(
    regs: &[u64],
    barrier: Reg,
    memory: &mut MemoryView<'_, '_>,
) -> Result<(), FaultKind> {
    let what = "mbarrier.arrive.shared::cluster";
    let (rank, offset) = decode(regs[barrier as usize], memory, what)?;
    let shared = memory.shared_of(rank);
    shared
        .check_async_destination(u64::from(offset), 8)
        .map_err(FaultKind::Access)?;
    let (_, completed) =
        shared
            .barriers
            .arrive(offset, what)
            .map_err(|detail| FaultKind::Instruction {
                detail: format!("block rank {rank}'s barrier: {detail}"),
            })?;
    if completed {
        shared.phase_completed(offset);
    }
    Ok(())
}

/// `barrier.cluster.arrive`: the thread's arrival in the current phase.
pub(crate) fn arrive(memory: &mut MemoryView<'_, '_>) -> Result<(), FaultKind> {
    let arrival = &mut *memory.cluster.arrival;
    if *arrival != Arrival::Idle {
        return Err(FaultKind::Instruction {
            detail: "`barrier.cluster.arrive` twice without a `barrier.cluster.wait` between: each arrival is followed by its wait".into(),
        });
    }
    *arrival = Arrival::Arrived;
    Ok(())
}

/// `barrier.cluster.wait`: whether the thread waits (its phase has not completed).
pub(crate) fn wait(memory: &mut MemoryView<'_, '_>) -> Result<bool, FaultKind> {
    let arrival = &mut *memory.cluster.arrival;
    match *arrival {
        Arrival::Idle => Err(FaultKind::Instruction {
            detail: "`barrier.cluster.wait` without a `barrier.cluster.arrive` before it: arrive first (`cluster_sync()` does both)".into(),
        }),
        Arrival::Arrived => Ok(true),
        Arrival::Completed => {
            *arrival = Arrival::Idle;
            Ok(false)
        }
    }
}
