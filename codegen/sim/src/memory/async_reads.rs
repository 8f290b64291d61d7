//! Reads of shared memory by the asynchronous proxy that are still in flight: a `wgmma`'s
//! operand tiles and a TMA store's source box.
//!
//! On a GPU a `wgmma.mma_async` reads its A and B tiles at some point before the
//! `wgmma.wait_group` that retires its group returns, and a TMA store reads its box before
//! the `cp.async.bulk.wait_group[.read]` that retires its bulk group. Writing those bytes in
//! between — a TMA refill of a ring buffer, a `cp.async`, a plain store — is the pipeline
//! hazard of Hopper kernels: the tensor cores may read the new data. The simulator runs both
//! when they are issued, so it cannot get the wrong numbers a GPU gets; it reports the write
//! instead, naming the reader's line and the writer's.
//!
//! Being retired is not enough: the writer must *know* it. A write is safe when the
//! retiring wait happens before it — in the same thread, or through a `sync_threads()`
//! (any block-wide or named barrier), or through an mbarrier the retiring side arrived on
//! and the writer waited on. That ordering is kept as knowledge, a vector clock over a few
//! *readers*: the block's warpgroups (their wgmma groups) and up to [`BULK_READERS`]
//! threads that issue TMA stores (their bulk groups).
//!
//! - Each reader numbers its groups (1, 2, ...; never reset, so marks of earlier blocks
//!   are always retired). A byte read by a group in flight is marked with its number.
//! - A thread knows, per reader, the last group whose retirement happens before its
//!   present point. The warpgroup's own threads learn at the wait; a barrier gives every
//!   thread the block's best knowledge; an mbarrier's completed phase gives its waiters the
//!   knowledge its arriving threads had.
//! - A write to a byte whose mark is above the writer's knowledge of that reader is the
//!   hazard.
//!
//! Named barriers are treated as block-wide (they order fewer threads on a GPU), and
//! arrivals from other blocks of a cluster carry no knowledge: both can hide a hazard, never
//! report one that is not there.

use std::collections::{HashMap, VecDeque};

/// Warpgroups of a block (1024 threads / 128).
const WARPGROUPS: usize = 8;
/// Threads of a block whose TMA stores are followed; more are not checked.
pub(crate) const BULK_READERS: usize = 8;
const READERS: usize = WARPGROUPS + BULK_READERS;
/// Issue sites kept per reader, for messages.
const HISTORY: usize = 64;

/// Per reader: the last group whose retirement happens before a point of a thread.
type Knowledge = [u32; READERS];

/// Who reads the bytes a write would overwrite.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum AsyncReader {
    /// A `wgmma` of warpgroup `.0`.
    Wgmma(u32),
    /// A TMA store of thread `.0` (its linear index in the block).
    TmaStore(u32),
}

/// A write to bytes an asynchronous read may still be reading.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct PendingRead {
    /// Byte offset in shared memory.
    pub offset: u64,
    pub reader: AsyncReader,
    /// The reading instruction's site (packed), 0 when no longer known.
    pub site: u32,
    /// Whether the reader's own wait has retired it (only the ordering is missing).
    pub retired: bool,
}

/// One reader's groups.
#[derive(Clone, Debug, Default)]
struct Groups {
    /// Groups committed (the open group is `committed + 1`).
    committed: u32,
    /// Groups retired by the reader's waits.
    retired: u32,
    /// The site of each recent group's first read: `(group, site)`, oldest first.
    sites: VecDeque<(u32, u32)>,
}

impl Groups {
    fn site_of(&self, group: u32) -> u32 {
        self.sites
            .iter()
            .find(|&&(g, _)| g == group)
            .map_or(0, |&(_, site)| site)
    }
}

/// The block's asynchronous reads in flight and its threads' knowledge of them.
#[derive(Debug, Default)]
pub(crate) struct AsyncReads {
    /// Readers with marks in this block, as bits (0: nothing to check).
    active: u32,
    groups: [Groups; READERS],
    /// Per bulk reader slot: the thread it stands for, + 1 (0: free).
    bulk_threads: [u32; BULK_READERS],
    /// Per reader, per shared byte: the last group reading it (allocated on first use).
    marks: Vec<Vec<u32>>,
    /// Per thread (allocated when the first reader becomes active).
    knows: Vec<Knowledge>,
    threads: usize,
    shared_bytes: usize,
    /// Per mbarrier (shared offset): what its current phase's arrivals knew, and what its
    /// completed phases publish to their waiters.
    pending: HashMap<u32, Knowledge>,
    published: HashMap<u32, Knowledge>,
}

impl AsyncReads {
    /// A new block of `threads` threads and `shared_bytes` of shared memory: whatever
    /// earlier blocks left in flight counts as retired and known.
    pub(crate) fn start_block(&mut self, threads: usize, shared_bytes: usize) {
        for groups in &mut self.groups {
            groups.retired = groups.committed;
            groups.sites.clear();
        }
        self.active = 0;
        self.bulk_threads = [0; BULK_READERS];
        self.knows.clear();
        self.threads = threads;
        self.shared_bytes = shared_bytes;
        self.pending.clear();
        self.published.clear();
    }

    fn base(&self) -> Knowledge {
        std::array::from_fn(|r| self.groups[r].retired)
    }

    /// Makes `reader` active: its marks exist and every thread's knowledge is kept.
    fn activate(&mut self, reader: usize) {
        if self.knows.is_empty() {
            let base = self.base();
            self.knows = vec![base; self.threads];
        }
        if self.marks.len() <= reader {
            self.marks.resize(reader + 1, Vec::new());
        }
        if self.marks[reader].len() < self.shared_bytes {
            self.marks[reader].resize(self.shared_bytes, 0);
        }
        self.active |= 1 << reader;
    }

    fn bulk_slot(&mut self, thread: u32) -> Option<usize> {
        if let Some(i) = self.bulk_threads.iter().position(|&t| t == thread + 1) {
            return Some(WARPGROUPS + i);
        }
        let free = self.bulk_threads.iter().position(|&t| t == 0)?;
        self.bulk_threads[free] = thread + 1;
        Some(WARPGROUPS + free)
    }

    fn slot(&mut self, reader: AsyncReader) -> Option<usize> {
        match reader {
            AsyncReader::Wgmma(group) => (group < WARPGROUPS as u32).then_some(group as usize),
            AsyncReader::TmaStore(thread) => self.bulk_slot(thread),
        }
    }

    /// `reader`'s open group reads `size` bytes at `at`, issued at `site`.
    pub(crate) fn read(&mut self, reader: AsyncReader, at: usize, size: u32, site: u32) {
        let Some(slot) = self.slot(reader) else {
            return;
        };
        if self.active & (1 << slot) == 0 {
            self.activate(slot);
        }
        let groups = &mut self.groups[slot];
        let group = groups.committed + 1;
        if groups.sites.back().is_none_or(|&(g, _)| g != group) {
            if groups.sites.len() == HISTORY {
                groups.sites.pop_front();
            }
            groups.sites.push_back((group, site));
        }
        let end = (at + size as usize).min(self.marks[slot].len());
        for mark in &mut self.marks[slot][at.min(end)..end] {
            *mark = group;
        }
    }

    /// `commit_group` of `reader`.
    pub(crate) fn commit(&mut self, reader: AsyncReader) {
        if let Some(slot) = self.slot(reader) {
            self.groups[slot].committed += 1;
        }
    }

    /// `wait_group keep` of `reader`, run by `threads` (the warpgroup's, or the one
    /// thread's): all but the newest `keep` committed groups are retired, and they know it.
    pub(crate) fn wait(
        &mut self,
        reader: AsyncReader,
        keep: u32,
        threads: impl IntoIterator<Item = usize>,
    ) {
        let Some(slot) = self.slot(reader) else {
            return;
        };
        let groups = &mut self.groups[slot];
        groups.retired = groups.retired.max(groups.committed.saturating_sub(keep));
        let retired = groups.retired;
        if self.knows.is_empty() {
            return;
        }
        for t in threads {
            if let Some(knows) = self.knows.get_mut(t) {
                knows[slot] = knows[slot].max(retired);
            }
        }
    }

    /// A barrier of the block completed: every thread knows what any thread knew.
    pub(crate) fn synchronise(&mut self) {
        if self.knows.is_empty() {
            return;
        }
        let mut best = self.knows[0];
        for knows in &self.knows[1..] {
            merge(&mut best, knows);
        }
        self.knows.fill(best);
    }

    /// `thread` arrives on the mbarrier at `barrier` (release).
    pub(crate) fn arrive(&mut self, barrier: u32, thread: u32) {
        let Some(knows) = self.knows.get(thread as usize).copied() else {
            return;
        };
        merge(self.pending.entry(barrier).or_default(), &knows);
    }

    /// The mbarrier at `barrier` completed a phase: its arrivals' knowledge is published.
    pub(crate) fn phase_completed(&mut self, barrier: u32) {
        if let Some(pending) = self.pending.remove(&barrier) {
            merge(self.published.entry(barrier).or_default(), &pending);
        }
    }

    /// `thread`'s wait on the mbarrier at `barrier` returned true (acquire).
    pub(crate) fn acquire(&mut self, barrier: u32, thread: u32) {
        let Some(published) = self.published.get(&barrier) else {
            return;
        };
        if let Some(knows) = self.knows.get_mut(thread as usize) {
            merge(knows, published);
        }
    }

    /// Whether `thread` may write `size` bytes at `at`: no asynchronous read it does not
    /// know retired reads them.
    #[inline(always)]
    pub(crate) fn check_write(&self, thread: u32, at: usize, size: u32) -> Result<(), PendingRead> {
        if self.active == 0 {
            return Ok(());
        }
        self.check_write_slow(thread, at, size)
    }

    #[cold]
    fn check_write_slow(&self, thread: u32, at: usize, size: u32) -> Result<(), PendingRead> {
        let Some(knows) = self.knows.get(thread as usize) else {
            return Ok(());
        };
        for slot in (0..READERS).filter(|s| self.active & (1 << s) != 0) {
            let marks = &self.marks[slot];
            let end = (at + size as usize).min(marks.len());
            let Some(byte) = (at.min(end)..end).find(|&b| marks[b] > knows[slot]) else {
                continue;
            };
            let group = marks[byte];
            let groups = &self.groups[slot];
            let reader = if slot < WARPGROUPS {
                AsyncReader::Wgmma(slot as u32)
            } else {
                AsyncReader::TmaStore(self.bulk_threads[slot - WARPGROUPS] - 1)
            };
            return Err(PendingRead {
                offset: byte as u64,
                reader,
                site: groups.site_of(group),
                retired: group <= groups.retired,
            });
        }
        Ok(())
    }
}

fn merge(into: &mut Knowledge, other: &Knowledge) {
    for (a, b) in into.iter_mut().zip(other) {
        *a = (*a).max(*b);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const WG0: AsyncReader = AsyncReader::Wgmma(0);
    const WG1: AsyncReader = AsyncReader::Wgmma(1);

    fn block() -> AsyncReads {
        let mut reads = AsyncReads::default();
        reads.start_block(256, 1024);
        reads
    }

    #[test]
    fn a_write_waits_for_the_wait_that_retires_the_read() {
        let mut reads = block();
        reads.read(WG0, 0, 64, 7);
        reads.commit(WG0);
        let pending = reads.check_write(0, 32, 4).unwrap_err();
        assert_eq!(
            (pending.offset, pending.site, pending.retired),
            (32, 7, false)
        );
        // Bytes no group reads are free.
        assert!(reads.check_write(0, 64, 4).is_ok());
        // `wait_group 1` leaves the only group in flight.
        reads.wait(WG0, 1, 0..128);
        assert!(reads.check_write(0, 32, 4).is_err());
        reads.wait(WG0, 0, 0..128);
        assert!(reads.check_write(0, 32, 4).is_ok());
        // The other warpgroup does not know until a barrier.
        let pending = reads.check_write(128, 32, 4).unwrap_err();
        assert!(pending.retired);
        reads.synchronise();
        assert!(reads.check_write(128, 32, 4).is_ok());
    }

    #[test]
    fn an_mbarrier_phase_carries_what_its_arrivals_knew() {
        let mut reads = block();
        reads.read(WG1, 0, 16, 3);
        reads.commit(WG1);
        reads.wait(WG1, 0, 128..256);
        // Thread 128 arrives, thread 0 waits: only a completed phase publishes.
        reads.arrive(64, 128);
        reads.acquire(64, 0);
        assert!(reads.check_write(0, 0, 4).is_err());
        reads.phase_completed(64);
        reads.acquire(64, 0);
        assert!(reads.check_write(0, 0, 4).is_ok());
        // Another barrier publishes nothing of it.
        assert!(reads.check_write(1, 0, 4).is_err());
    }

    #[test]
    fn tma_stores_are_followed_per_thread_and_new_blocks_start_clean() {
        let mut reads = block();
        let store = AsyncReader::TmaStore(5);
        reads.read(store, 100, 8, 9);
        reads.commit(store);
        let pending = reads.check_write(5, 104, 4).unwrap_err();
        assert_eq!(pending.reader, store);
        reads.wait(store, 0, [5]);
        assert!(reads.check_write(5, 104, 4).is_ok());
        reads.read(store, 100, 8, 9);
        reads.commit(store);
        reads.start_block(256, 1024);
        assert!(reads.check_write(5, 104, 4).is_ok());
    }
}
