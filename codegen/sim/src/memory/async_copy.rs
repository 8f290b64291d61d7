//! `cp.async`: copies from global to shared memory that land when their group is waited
//! for, and not before.
//!
//! On a GPU the bytes of a `cp.async` arrive at some moment between the instruction and
//! the `cp.async.wait_group` that completes its group; a kernel that reads them earlier
//! reads whatever the moment gives. The simulator makes that moment the wait: the source
//! is read at the copy (PTX requires it to be stable until the wait), the destination
//! bytes are marked as in flight, and any access to a marked byte — by any thread,
//! through any instruction — is reported with the copy's thread and line. At the wait the
//! bytes are written as the issuing thread's stores (so the usual race rules then apply:
//! other threads see them after a `sync_threads()`).
//!
//! TMA loads are held the same way ([`PendingTma`]): their box lands, and completes its
//! bytes on the mbarrier, when a thread waits on that barrier (or when nothing else can run),
//! so a read of the box before the barrier's wait is reported rather than lucky.

use std::collections::VecDeque;

use super::AccessFault;

/// One copy in flight.
#[derive(Clone, Copy, Debug)]
pub(crate) struct PendingCopy {
    /// Byte offset of the destination in shared memory.
    pub offset: u32,
    pub bytes: u32,
    pub data: [u8; 16],
    /// The `cp.async`'s site (packed), for messages and race records.
    pub site: u32,
}

/// A TMA load in flight: its box's writes (shared offset, size, value) and the bytes it
/// completes on the mbarrier at `barrier`.
#[derive(Clone, Debug)]
pub(crate) struct PendingTma {
    pub thread: u32,
    pub barrier: u32,
    /// The box's bytes in shared memory: `start .. start + bytes`.
    pub start: u32,
    pub bytes: u32,
    pub writes: Vec<(u32, u32, u64)>,
    pub site: u32,
    /// The map's swizzle width in bytes (0: none), recorded over the box as it lands.
    pub swizzle: u32,
}

/// One thread's copies: committed groups, oldest first, and the group still open.
#[derive(Clone, Debug, Default)]
struct ThreadCopies {
    committed: VecDeque<Vec<PendingCopy>>,
    open: Vec<PendingCopy>,
}

/// The copies in flight in one block.
#[derive(Debug, Default)]
pub(crate) struct AsyncCopies {
    /// By the thread's linear index in the block.
    threads: Vec<ThreadCopies>,
    /// For each byte of shared memory: 1 + the thread whose copy is in flight to it, or 0.
    owner: Vec<u32>,
    /// Bytes marked in `owner` (0: no check needed).
    in_flight: usize,
    /// TMA loads not yet landed, in issue order.
    tma: Vec<PendingTma>,
}

impl AsyncCopies {
    /// A new block with `shared_bytes` of shared memory and nothing in flight.
    pub(crate) fn start_block(&mut self, shared_bytes: usize) {
        for thread in &mut self.threads {
            thread.committed.clear();
            thread.open.clear();
        }
        if self.in_flight > 0 || self.owner.len() != shared_bytes {
            self.owner.clear();
            self.owner.resize(shared_bytes, 0);
        }
        self.in_flight = 0;
        self.tma.clear();
    }

    /// Whether `size` bytes at `at` may be accessed (none is a copy's destination in
    /// flight).
    #[inline(always)]
    pub(crate) fn check(&self, at: usize, size: usize) -> Result<(), AccessFault> {
        if self.in_flight == 0 {
            return Ok(());
        }
        self.check_slow(at, size)
    }

    #[cold]
    fn check_slow(&self, at: usize, size: usize) -> Result<(), AccessFault> {
        for byte in at..(at + size).min(self.owner.len()) {
            let owner = self.owner[byte];
            if owner != 0 {
                let thread = owner - 1;
                let tma = self
                    .tma
                    .iter()
                    .find(|t| (t.start as usize..(t.start + t.bytes) as usize).contains(&byte));
                return Err(AccessFault::InFlight {
                    offset: byte as u64,
                    owner: thread,
                    site: tma.map_or_else(|| self.site_of(thread, byte), |t| t.site),
                    barrier: tma.map(|t| t.barrier),
                });
            }
        }
        Ok(())
    }

    fn site_of(&self, thread: u32, byte: usize) -> u32 {
        let Some(copies) = self.threads.get(thread as usize) else {
            return 0;
        };
        copies
            .committed
            .iter()
            .flatten()
            .chain(&copies.open)
            .find(|c| (c.offset as usize..(c.offset + c.bytes) as usize).contains(&byte))
            .map_or(0, |c| c.site)
    }

    /// Puts `copy` by `thread` in flight, in its open group. The caller has checked the
    /// destination lies in shared memory.
    pub(crate) fn issue(&mut self, thread: u32, copy: PendingCopy) -> Result<(), AccessFault> {
        let range = copy.offset as usize..(copy.offset + copy.bytes) as usize;
        // Two copies in flight to one byte land in either order.
        self.check(range.start, range.len())?;
        for byte in range {
            self.owner[byte] = thread + 1;
        }
        self.in_flight += copy.bytes as usize;
        let index = thread as usize;
        if self.threads.len() <= index {
            self.threads.resize_with(index + 1, ThreadCopies::default);
        }
        self.threads[index].open.push(copy);
        Ok(())
    }

    /// Puts a TMA load in flight. The caller has checked the box lies in shared memory.
    pub(crate) fn issue_tma(&mut self, load: PendingTma) -> Result<(), AccessFault> {
        let range = load.start as usize..(load.start + load.bytes) as usize;
        self.check(range.start, range.len())?;
        for byte in range {
            self.owner[byte] = load.thread + 1;
        }
        self.in_flight += load.bytes as usize;
        self.tma.push(load);
        Ok(())
    }

    /// Whether TMA loads are in flight.
    pub(crate) fn tma_in_flight(&self) -> bool {
        !self.tma.is_empty()
    }

    /// The TMA loads completing the barrier at `barrier` (every barrier's with `None`),
    /// unmarked, in issue order.
    pub(crate) fn complete_tma(&mut self, barrier: Option<u32>) -> Vec<PendingTma> {
        let (landed, kept): (Vec<PendingTma>, Vec<PendingTma>) = std::mem::take(&mut self.tma)
            .into_iter()
            .partition(|t| barrier.is_none_or(|b| t.barrier == b));
        self.tma = kept;
        for load in &landed {
            for byte in load.start..load.start + load.bytes {
                self.owner[byte as usize] = 0;
            }
            self.in_flight -= load.bytes as usize;
        }
        landed
    }

    /// `cp.async.commit_group`: closes `thread`'s open group (an empty group counts too).
    pub(crate) fn commit(&mut self, thread: u32) {
        let index = thread as usize;
        if self.threads.len() <= index {
            self.threads.resize_with(index + 1, ThreadCopies::default);
        }
        let copies = &mut self.threads[index];
        let group = std::mem::take(&mut copies.open);
        copies.committed.push_back(group);
    }

    /// The copies a wait of `thread` completes, unmarked: every committed group but the
    /// newest `keep`, or (`keep: None`, `wait_all`) every copy, committed or not.
    pub(crate) fn complete(&mut self, thread: u32, keep: Option<u32>) -> Vec<PendingCopy> {
        let Some(copies) = self.threads.get_mut(thread as usize) else {
            return Vec::new();
        };
        let mut landed = Vec::new();
        match keep {
            Some(keep) => {
                while copies.committed.len() > keep as usize {
                    if let Some(group) = copies.committed.pop_front() {
                        landed.extend(group);
                    }
                }
            }
            None => {
                landed.extend(copies.committed.drain(..).flatten());
                landed.append(&mut copies.open);
            }
        }
        for copy in &landed {
            for byte in copy.offset..copy.offset + copy.bytes {
                self.owner[byte as usize] = 0;
            }
            self.in_flight -= copy.bytes as usize;
        }
        landed
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn copy(offset: u32, site: u32) -> PendingCopy {
        PendingCopy {
            offset,
            bytes: 16,
            data: [7; 16],
            site,
        }
    }

    #[test]
    fn groups_complete_oldest_first_and_only_at_their_wait() {
        let mut copies = AsyncCopies::default();
        copies.start_block(128);
        copies.issue(3, copy(0, 10)).unwrap();
        copies.commit(3);
        copies.issue(3, copy(16, 11)).unwrap();
        copies.commit(3);
        copies.commit(3); // an empty group
        assert_eq!(
            copies.check(20, 4),
            Err(AccessFault::InFlight {
                offset: 20,
                owner: 3,
                site: 11,
                barrier: None
            })
        );
        assert!(copies.check(32, 16).is_ok());
        // wait_group 2: the oldest group only.
        let landed = copies.complete(3, Some(2));
        assert_eq!(landed.len(), 1);
        assert_eq!(landed[0].offset, 0);
        assert!(copies.check(0, 16).is_ok());
        assert!(copies.check(16, 1).is_err());
        // Another thread's wait completes nothing of thread 3's.
        assert!(copies.complete(4, Some(0)).is_empty());
        assert_eq!(copies.complete(3, Some(0)).len(), 1);
        assert!(copies.check(0, 128).is_ok());
    }

    #[test]
    fn overlapping_copies_in_flight_are_refused_and_wait_all_takes_the_open_group() {
        let mut copies = AsyncCopies::default();
        copies.start_block(64);
        copies.issue(0, copy(0, 1)).unwrap();
        assert!(copies.issue(1, copy(0, 2)).is_err());
        assert_eq!(copies.complete(0, Some(0)).len(), 0); // not committed yet
        assert_eq!(copies.complete(0, None).len(), 1);
        assert!(copies.issue(1, copy(0, 2)).is_ok());
    }
}
