//! A block's shared memory, plain bytes with a record of the last accesses to each byte, so
//! that accesses by different threads with no barrier between them are reported as races.

use super::async_copy::{self, AsyncCopies, PendingCopy};
use super::async_reads::AsyncReads;
use super::mbarrier::Barriers;
use super::proxy::ProxyWrites;
use super::swizzle::TmaSwizzles;
use super::{aligned, rmw, AccessFault, SHARED_REGION};
use cudajit_core::intrinsics::AtomicOp;
use cudajit_core::Scalar;

/// Two accesses to one shared-memory byte by different threads with no barrier between
/// them, at least one of them a plain write.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct RaceReport {
    /// Byte offset in the block's shared memory.
    pub offset: u64,
    /// The earlier access: thread (linear index in the block) and site.
    pub first_thread: u32,
    pub first_site: u32,
    pub first_write: bool,
    /// Whether the current access is a write.
    pub second_write: bool,
}

/// Who last wrote and read one byte of shared memory, and in which barrier interval.
#[derive(Clone, Copy, Debug, Default)]
struct AccessRecord {
    writer: u32,
    write_epoch: u32,
    write_site: u32,
    /// The first thread that read the byte in `read_epoch`, and a second one, if any.
    reader: u32,
    read_site: u32,
    other_reader: u32,
    other_read_site: u32,
    read_epoch: u32,
}

/// No second reader.
const NO_READER: u32 = u32::MAX;

/// A block's shared memory, with a record of the last accesses to each byte: a plain
/// access conflicts with a plain write by another thread since the last barrier, and a
/// write with a read by another thread since the last barrier. Atomics neither conflict
/// nor count.
pub(crate) struct SharedMemory {
    pub(super) bytes: Vec<u8>,
    records: Vec<AccessRecord>,
    /// The barrier interval: advanced at every completed barrier and every new block, never
    /// reset, so records of earlier blocks never match.
    pub epoch: u32,
    pub track_races: bool,
    /// The block's `cp.async` copies in flight (see [`async_copy`]).
    pub(crate) copies: AsyncCopies,
    /// The block's `mbarrier`s (see [`mbarrier`]).
    pub(crate) barriers: Barriers,
    /// Per warpgroup: whether a `wgmma.fence` has preceded its `wgmma.mma_async`s.
    pub(crate) wgmma_fenced: Vec<bool>,
    /// Threads' stores not yet fenced for the asynchronous proxy (see
    /// [`proxy`]).
    pub(crate) proxy: ProxyWrites,
    /// The swizzle of the last TMA write of each chunk (see [`swizzle`]).
    pub(crate) swizzles: TmaSwizzles,
    /// Asynchronous reads in flight and the threads' knowledge of their retirement (see
    /// [`super::async_reads`]).
    pub(crate) reads: AsyncReads,
}

impl SharedMemory {
    pub(crate) fn new(track_races: bool) -> Self {
        SharedMemory {
            bytes: Vec::new(),
            records: Vec::new(),
            epoch: 1,
            track_races,
            copies: AsyncCopies::default(),
            barriers: Barriers::default(),
            wgmma_fenced: Vec::new(),
            proxy: ProxyWrites::default(),
            swizzles: TmaSwizzles::default(),
            reads: AsyncReads::default(),
        }
    }

    /// Starts a block of `threads` threads with `size` bytes of zeroed shared memory.
    pub(crate) fn start_block(&mut self, size: usize, threads: usize) {
        self.bytes.clear();
        self.bytes.resize(size, 0);
        if self.track_races && self.records.len() < size {
            self.records.resize(size, AccessRecord::default());
        }
        self.epoch = self.epoch.wrapping_add(1);
        self.copies.start_block(size);
        self.barriers.start_block();
        self.wgmma_fenced.clear();
        self.proxy.start_block(size);
        self.swizzles.start_block(size);
        self.reads.start_block(threads, size);
    }

    /// A barrier of the block's threads completed (`sync_threads()`, a named barrier, a
    /// cluster or grid barrier): a new race interval, and the block's knowledge of retired
    /// asynchronous reads is every thread's.
    pub(crate) fn threads_synchronised(&mut self) {
        self.epoch = self.epoch.wrapping_add(1);
        self.reads.synchronise();
    }

    /// The mbarrier at `barrier` completed a phase: a new race interval (see
    /// [`super::mbarrier`]), and its arrivals' knowledge published to its waiters.
    pub(crate) fn phase_completed(&mut self, barrier: u32) {
        self.epoch = self.epoch.wrapping_add(1);
        self.reads.phase_completed(barrier);
    }

    /// The block's shared memory size in bytes.
    pub(crate) fn len(&self) -> usize {
        self.bytes.len()
    }

    /// A load by a thread of another block of the cluster (`ld.shared::cluster`): checked
    /// against the region and copies in flight, outside this block's race records.
    pub(crate) fn load_remote(&self, offset: u64, size: u32) -> Result<u64, AccessFault> {
        let at = self.check(offset, size)?;
        Ok(read_plain(&self.bytes, at, size))
    }

    /// A store by a thread of another block of the cluster (`st.shared::cluster`).
    pub(crate) fn store_remote(
        &mut self,
        offset: u64,
        size: u32,
        value: u64,
    ) -> Result<(), AccessFault> {
        let at = self.check(offset, size)?;
        write_plain(&mut self.bytes, at, size, value);
        self.swizzles.other_wrote(at, size);
        Ok(())
    }

    #[inline(always)]
    pub(super) fn check(&self, offset: u64, size: u32) -> Result<usize, AccessFault> {
        if !aligned(offset, size) {
            return Err(AccessFault::Misaligned {
                offset,
                align: size,
            });
        }
        if offset + u64::from(size) > self.bytes.len() as u64 {
            return Err(AccessFault::OutOfRegion {
                region: SHARED_REGION,
                offset,
                size,
            });
        }
        self.copies.check(offset as usize, size as usize)?;
        Ok(offset as usize)
    }

    /// A read by the asynchronous proxy (`wgmma`, a TMA store): checked against the region,
    /// its alignment and copies in flight, but outside the race records — its ordering with
    /// the threads' accesses is the mbarriers' and fences' business, not `sync_threads()`'s.
    pub(crate) fn load_async(&self, offset: u64, size: u32) -> Result<u64, AccessFault> {
        let at = self.check(offset, size)?;
        self.proxy.check(at, size)?;
        Ok(read_plain(&self.bytes, at, size))
    }

    /// Puts a TMA load in flight, its box checked to lie in shared memory.
    pub(crate) fn issue_tma(&mut self, load: async_copy::PendingTma) -> Result<(), AccessFault> {
        let end = u64::from(load.start) + u64::from(load.bytes);
        if end > self.bytes.len() as u64 {
            return Err(AccessFault::OutOfRegion {
                region: SHARED_REGION,
                offset: u64::from(load.start),
                size: load.bytes,
            });
        }
        self.copies.issue_tma(load)
    }

    /// Lands the TMA loads completing `barrier` (every barrier's with `None`): their boxes
    /// written, their bytes completed on their barriers. Returns whether any landed.
    pub(crate) fn land_tma(&mut self, barrier: Option<u32>) -> Result<bool, String> {
        let landed = self.copies.complete_tma(barrier);
        for load in &landed {
            for &(offset, size, value) in &load.writes {
                write_plain(&mut self.bytes, offset as usize, size, value);
            }
            self.swizzles
                .tma_wrote(load.start as usize, load.bytes as usize, load.swizzle);
            let completed =
                self.barriers
                    .complete(load.barrier, load.bytes, "cp.async.bulk.tensor")?;
            if completed {
                self.phase_completed(load.barrier);
            }
        }
        Ok(!landed.is_empty())
    }

    /// Checks the destination of a `cp.async` of `bytes`: inside, aligned to its size.
    pub(crate) fn check_async_destination(
        &self,
        offset: u64,
        bytes: u32,
    ) -> Result<(), AccessFault> {
        self.check(offset, bytes).map(|_| ())
    }

    /// Puts a `cp.async` of `thread` in flight: its destination counts as written by the
    /// thread from now on (a read by another thread since the last barrier is a race), and
    /// no access reaches it until the copy lands.
    pub(crate) fn issue_async_copy(
        &mut self,
        thread: u32,
        copy: PendingCopy,
    ) -> Result<(), AccessFault> {
        let at = self.check(u64::from(copy.offset), copy.bytes)?;
        self.reads
            .check_write(thread, at, copy.bytes)
            .map_err(AccessFault::AsyncReadPending)?;
        if self.track_races {
            for byte in at..at + copy.bytes as usize {
                self.record(byte, thread, copy.site, true)?;
            }
        }
        self.copies.issue(thread, copy)
    }

    /// `cp.async.wait_group` / `wait_all` of `thread`: the copies it completes land, as the
    /// thread's stores at their `cp.async`.
    pub(crate) fn land_async_copies(
        &mut self,
        thread: u32,
        keep: Option<u32>,
    ) -> Result<(), AccessFault> {
        for copy in self.copies.complete(thread, keep) {
            let chunk = copy.bytes.min(8);
            for at in (0..copy.bytes).step_by(chunk as usize) {
                let mut word = [0u8; 8];
                word[..chunk as usize]
                    .copy_from_slice(&copy.data[at as usize..(at + chunk) as usize]);
                let offset = u64::from(copy.offset + at);
                let at = self.check(offset, chunk)?;
                if self.track_races {
                    self.record(at, thread, copy.site, true)?;
                }
                write_plain(&mut self.bytes, at, chunk, u64::from_le_bytes(word));
                self.swizzles.other_wrote(at, chunk);
            }
        }
        Ok(())
    }

    /// Records a plain access by `thread` (its linear index) at `site`, reporting a race.
    #[inline(always)]
    pub(super) fn record(
        &mut self,
        at: usize,
        thread: u32,
        site: u32,
        write: bool,
    ) -> Result<(), AccessFault> {
        let epoch = self.epoch;
        let record = &mut self.records[at];
        let race = |first_thread, first_site, first_write| {
            Err(AccessFault::Race(RaceReport {
                offset: at as u64,
                first_thread,
                first_site,
                first_write,
                second_write: write,
            }))
        };
        if record.write_epoch == epoch && record.writer != thread {
            return race(record.writer, record.write_site, true);
        }
        if write {
            if record.read_epoch == epoch {
                if record.reader != thread {
                    return race(record.reader, record.read_site, false);
                }
                if record.other_reader != NO_READER {
                    return race(record.other_reader, record.other_read_site, false);
                }
            }
            record.writer = thread;
            record.write_epoch = epoch;
            record.write_site = site;
        } else if record.read_epoch != epoch {
            record.reader = thread;
            record.read_site = site;
            record.other_reader = NO_READER;
            record.read_epoch = epoch;
        } else if record.reader != thread && record.other_reader == NO_READER {
            record.other_reader = thread;
            record.other_read_site = site;
        }
        Ok(())
    }

    #[inline(always)]
    pub(crate) fn load(
        &mut self,
        offset: u64,
        size: u32,
        thread: u32,
        site: u32,
    ) -> Result<u64, AccessFault> {
        let at = self.check(offset, size)?;
        if self.track_races {
            self.record(at, thread, site, false)?;
        }
        Ok(read_plain(&self.bytes, at, size))
    }

    #[inline(always)]
    pub(crate) fn store(
        &mut self,
        offset: u64,
        size: u32,
        value: u64,
        thread: u32,
        site: u32,
    ) -> Result<(), AccessFault> {
        let at = self.check(offset, size)?;
        self.reads
            .check_write(thread, at, size)
            .map_err(AccessFault::AsyncReadPending)?;
        if self.track_races {
            self.record(at, thread, site, true)?;
        }
        write_plain(&mut self.bytes, at, size, value);
        self.proxy.store(at, size, thread);
        self.swizzles.other_wrote(at, size);
        Ok(())
    }

    pub(super) fn atomic(
        &mut self,
        offset: u64,
        kind: Scalar,
        op: AtomicOp,
        a: u64,
        b: u64,
    ) -> Result<u64, AccessFault> {
        let size = kind.size_bytes();
        let at = self.check(offset, size)?;
        let old = read_plain(&self.bytes, at, size);
        write_plain(&mut self.bytes, at, size, rmw(kind, op, old, a, b));
        self.swizzles.other_wrote(at, size);
        Ok(old)
    }
}

#[inline(always)]
pub(super) fn read_plain(bytes: &[u8], at: usize, size: u32) -> u64 {
    let mut word = [0u8; 8];
    word[..size as usize].copy_from_slice(&bytes[at..at + size as usize]);
    u64::from_le_bytes(word)
}

#[inline(always)]
pub(super) fn write_plain(bytes: &mut [u8], at: usize, size: u32, value: u64) {
    bytes[at..at + size as usize].copy_from_slice(&value.to_le_bytes()[..size as usize]);
}
