//! What one thread sees of memory during a step: the launch's global regions, its block's
//! shared memory (and its cluster's), its local memory; every access checked against its
//! region and alignment, and recorded for the race checks.

use super::{
    aligned, rmw, AccessFault, GlobalRegion, SharedMemory, EXTERN_REGION_BASE, LOCAL_REGION,
    OFFSET_BITS, OFFSET_MASK, SHARED_REGION,
};
use cudajit_core::intrinsics::AtomicOp;
use cudajit_core::Scalar;

use super::shared::{read_plain, write_plain};
use crate::global_races::{BlockClocks, GlobalRaces};

/// Everything one thread's memory accesses can reach: the launch's global buffers, its
/// block's shared memory and its own local memory.
pub(crate) struct MemoryView<'a, 'm> {
    pub globals: &'a [GlobalRegion<'m>],
    /// The regions of the launch's extern host, from [`EXTERN_REGION_BASE`].
    pub externals: &'a [GlobalRegion<'m>],
    pub shared: &'a mut SharedMemory,
    pub local: &'a mut [u8],
    /// The thread's linear index in its block, for race reports.
    pub thread: u32,
    /// The thread's cluster: the other blocks' shared memory and its `barrier.cluster`
    /// arrival.
    pub cluster: ClusterView<'a>,
    /// The launch's global-memory race records and the block's clocks, when tracked.
    pub global_races: Option<GlobalRaceView<'a>>,
}

/// What a thread's accesses to global memory record, when global races are tracked.
pub(crate) struct GlobalRaceView<'a> {
    pub races: &'a GlobalRaces,
    pub clocks: &'a mut BlockClocks,
}

/// A thread's part in the cluster barrier's current phase.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) enum Arrival {
    /// Not arrived in the current phase.
    #[default]
    Idle,
    /// Arrived; the phase is not complete.
    Arrived,
    /// Arrived, and the phase completed before the thread's `barrier.cluster.wait`.
    Completed,
}

/// What a thread reaches of its thread-block cluster (a launch without clusters is one of
/// a single block, as on the GPU).
pub(crate) struct ClusterView<'a> {
    /// This block's rank in the cluster.
    pub rank: u32,
    /// Blocks in the cluster.
    pub size: u32,
    /// The shared memory of the cluster's blocks by rank, this block's own slot an empty
    /// placeholder (its memory is [`MemoryView::shared`]); empty without clusters.
    pub peers: &'a mut [SharedMemory],
    /// The thread's `barrier.cluster` arrival.
    pub arrival: &'a mut Arrival,
    /// Set when the thread changes another block's shared memory or mbarriers, so that the
    /// scheduler runs that block's waiting threads again.
    pub touched_peer: &'a mut bool,
}

impl MemoryView<'_, '_> {
    /// The shared memory of block `rank` of the cluster (this block's own for its rank).
    pub(crate) fn shared_of(&mut self, rank: u32) -> &mut SharedMemory {
        if rank == self.cluster.rank {
            &mut *self.shared
        } else {
            *self.cluster.touched_peer = true;
            &mut self.cluster.peers[rank as usize]
        }
    }
}

/// `?` without its `Try::branch` call, which a debug build of the simulator makes at
/// every use: for the access paths every simulated load and store takes.
macro_rules! attempt {
    ($result:expr) => {
        match $result {
            Ok(value) => value,
            Err(fault) => return Err(fault),
        }
    };
}

impl<'m> MemoryView<'_, 'm> {
    #[inline(always)]
    fn region(&self, region: u64) -> Result<GlobalRegion<'m>, AccessFault> {
        let index = region as usize;
        if index < self.globals.len() {
            return Ok(self.globals[index]);
        }
        region
            .checked_sub(EXTERN_REGION_BASE)
            .and_then(|r| self.externals.get(r as usize))
            .copied()
            .ok_or(AccessFault::BadRegion { region })
    }

    /// Records a plain access of global memory for the race checks, when they track it.
    #[inline(always)]
    fn record_global(
        &self,
        region: u64,
        offset: u64,
        site: u32,
        write: bool,
    ) -> Result<(), AccessFault> {
        match &self.global_races {
            Some(view) => view
                .races
                .record(
                    region,
                    offset,
                    self.thread,
                    self.shared.epoch,
                    site,
                    write,
                    view.clocks,
                )
                .map_err(AccessFault::GlobalRace),
            None => Ok(()),
        }
    }

    /// Runs the atomic access `atomic` of global memory at `pointer`, as a release and an
    /// acquire for the race checks when they track global memory.
    #[inline]
    fn global_atomic<R>(
        &mut self,
        pointer: u64,
        reads: bool,
        writes: bool,
        atomic: impl FnOnce() -> R,
    ) -> R {
        match &mut self.global_races {
            Some(view) => view
                .races
                .atomic(pointer, reads, writes, view.clocks, atomic),
            None => atomic(),
        }
    }

    /// A fence (`fence_*()`, and around ordered atomics): a host `SeqCst` fence, and for
    /// the race checks the point up to which the block's accesses may be released.
    pub(crate) fn fence(&mut self) {
        std::sync::atomic::fence(std::sync::atomic::Ordering::SeqCst);
        if let Some(view) = &mut self.global_races {
            view.clocks.fence();
        }
    }

    // The access helpers below are `inline(always)`, which a debug build of the simulator
    // (opt-level 0) still honours: every simulated load and store passes through them.
    #[inline(always)]
    fn global(&self, region: u64, offset: u64, size: u32) -> Result<GlobalRegion<'m>, AccessFault> {
        let global = attempt!(self.region(region));
        if !aligned(offset, size) {
            return Err(AccessFault::Misaligned {
                offset,
                align: size,
            });
        }
        if !global.memory.contains(offset, size as u64) {
            return Err(AccessFault::OutOfRegion {
                region,
                offset,
                size,
            });
        }
        Ok(global)
    }

    #[inline(always)]
    fn local_at(&self, offset: u64, size: u32) -> Result<usize, AccessFault> {
        if !aligned(offset, size) {
            return Err(AccessFault::Misaligned {
                offset,
                align: size,
            });
        }
        if offset + u64::from(size) > self.local.len() as u64 {
            return Err(AccessFault::OutOfRegion {
                region: LOCAL_REGION,
                offset,
                size,
            });
        }
        Ok(offset as usize)
    }

    /// Loads a `size`-byte value through `pointer` (`site` names the access for race
    /// reports).
    #[inline(always)]
    pub(crate) fn load(&mut self, pointer: u64, size: u32, site: u32) -> Result<u64, AccessFault> {
        let region = pointer >> OFFSET_BITS;
        let offset = pointer & OFFSET_MASK;
        if region < SHARED_REGION {
            let global = attempt!(self.global(region, offset, size));
            attempt!(self.record_global(region, offset, site, false));
            Ok(global.memory.load(offset, size))
        } else if region == SHARED_REGION {
            self.shared.load(offset, size, self.thread, site)
        } else {
            let at = attempt!(self.local_at(offset, size));
            Ok(read_plain(self.local, at, size))
        }
    }

    /// Stores the low `size` bytes of `value` through `pointer`.
    #[inline(always)]
    pub(crate) fn store(
        &mut self,
        pointer: u64,
        size: u32,
        value: u64,
        site: u32,
    ) -> Result<(), AccessFault> {
        let region = pointer >> OFFSET_BITS;
        let offset = pointer & OFFSET_MASK;
        if region < SHARED_REGION {
            let global = attempt!(self.global(region, offset, size));
            if !global.writable {
                return Err(AccessFault::ReadOnly { region });
            }
            attempt!(self.record_global(region, offset, site, true));
            global.memory.store(offset, size, value);
            Ok(())
        } else if region == SHARED_REGION {
            self.shared.store(offset, size, value, self.thread, site)
        } else {
            let at = attempt!(self.local_at(offset, size));
            write_plain(self.local, at, size, value);
            Ok(())
        }
    }

    /// An atomic (or volatile) load through `pointer`: as [`Self::load`], but in shared
    /// memory it neither races with nor counts against other accesses, as atomics do.
    pub(crate) fn atomic_load(&mut self, pointer: u64, size: u32) -> Result<u64, AccessFault> {
        let region = pointer >> OFFSET_BITS;
        let offset = pointer & OFFSET_MASK;
        if region < SHARED_REGION {
            let memory = self.global(region, offset, size)?.memory;
            Ok(self.global_atomic(pointer, true, false, || memory.load(offset, size)))
        } else if region == SHARED_REGION {
            let at = self.shared.check(offset, size)?;
            Ok(read_plain(&self.shared.bytes, at, size))
        } else {
            let at = self.local_at(offset, size)?;
            Ok(read_plain(self.local, at, size))
        }
    }

    /// An atomic (or volatile) store through `pointer`, exempt from race records like
    /// [`Self::atomic_load`].
    pub(crate) fn atomic_store(
        &mut self,
        pointer: u64,
        size: u32,
        value: u64,
    ) -> Result<(), AccessFault> {
        let region = pointer >> OFFSET_BITS;
        let offset = pointer & OFFSET_MASK;
        if region < SHARED_REGION {
            let global = self.global(region, offset, size)?;
            if !global.writable {
                return Err(AccessFault::ReadOnly { region });
            }
            let memory = global.memory;
            self.global_atomic(pointer, false, true, || memory.store(offset, size, value));
        } else if region == SHARED_REGION {
            let at = self.shared.check(offset, size)?;
            write_plain(&mut self.shared.bytes, at, size, value);
        } else {
            let at = self.local_at(offset, size)?;
            write_plain(self.local, at, size, value);
        }
        Ok(())
    }

    /// An atomic read-modify-write through `pointer`; returns the old value.
    pub(crate) fn atomic(
        &mut self,
        pointer: u64,
        kind: Scalar,
        op: AtomicOp,
        a: u64,
        b: u64,
    ) -> Result<u64, AccessFault> {
        let region = pointer >> OFFSET_BITS;
        let offset = pointer & OFFSET_MASK;
        let size = kind.size_bytes();
        if region < SHARED_REGION {
            let global = self.global(region, offset, size)?;
            if !global.writable {
                return Err(AccessFault::ReadOnly { region });
            }
            let memory = global.memory;
            Ok(self.global_atomic(pointer, true, true, || {
                memory.atomic(offset, kind, op, a, b)
            }))
        } else if region == SHARED_REGION {
            self.shared.atomic(offset, kind, op, a, b)
        } else {
            let at = self.local_at(offset, size)?;
            let old = read_plain(self.local, at, size);
            write_plain(self.local, at, size, rmw(kind, op, old, a, b));
            Ok(old)
        }
    }
}
