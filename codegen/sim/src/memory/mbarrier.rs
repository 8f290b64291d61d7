//! Hopper's transaction barriers (`mbarrier`) of one block: each an object in shared
//! memory named by its byte offset, with the PTX ISA's phases.
//!
//! A phase completes when its pending arrivals reach zero **and** its transaction count
//! (bytes announced by `expect_tx`, minus bytes completed by asynchronous copies) is zero;
//! the barrier then starts the next phase with the initial arrival count. A wait on parity
//! `p` is satisfied once the phase of that parity has completed: the current phase's
//! parity differs from `p`. The simulator keeps the state beside shared memory (the
//! barrier's 8 bytes are not a layout kernels may rely on).
//!
//! A completed phase orders what the arriving threads did before what the waiting threads
//! do after (`arrive` releases, `try_wait` acquires). The race records know one ordering,
//! the barrier interval, so a completed phase starts a new interval for the whole block:
//! kernels synchronised by mbarriers raise no false races, at the cost of missing races
//! across a phase between threads the barrier does not order.

use std::collections::HashMap;

/// The most arrivals a barrier can expect (`mbarrier.init`'s count is 1 to 2^20 - 1).
pub(crate) const MAX_COUNT: u32 = (1 << 20) - 1;

/// One barrier's state.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Barrier {
    /// Arrivals per phase.
    pub count: u32,
    /// Arrivals still expected in the current phase.
    pub pending: u32,
    /// Transaction bytes still expected in the current phase (negative: completed before
    /// they were announced, which the PTX ISA allows).
    pub transactions: i64,
    /// Phases completed since `init`.
    pub phase: u64,
}

impl Barrier {
    /// Whether a wait on `parity` is satisfied.
    pub(crate) fn completed(&self, parity: u32) -> bool {
        (self.phase & 1) as u32 != parity & 1
    }

    /// Completes the phase if it is done; returns whether it was.
    fn try_complete(&mut self) -> bool {
        let done = self.pending == 0 && self.transactions == 0;
        if done {
            self.phase += 1;
            self.pending = self.count;
        }
        done
    }
}

/// The barriers of a block, by byte offset in shared memory.
#[derive(Debug, Default)]
pub(crate) struct Barriers {
    barriers: HashMap<u32, Barrier>,
}

impl Barriers {
    pub(crate) fn start_block(&mut self) {
        self.barriers.clear();
    }

    pub(crate) fn get(&self, offset: u32) -> Option<&Barrier> {
        self.barriers.get(&offset)
    }

    /// `mbarrier.init`: phase 0 expecting `count` arrivals.
    pub(crate) fn init(&mut self, offset: u32, count: u32) -> Result<(), String> {
        if count == 0 || count > MAX_COUNT {
            return Err(format!(
                "`mbarrier.init` with a count of {count}: the count is 1 to {MAX_COUNT}"
            ));
        }
        self.barriers.insert(
            offset,
            Barrier {
                count,
                pending: count,
                transactions: 0,
                phase: 0,
            },
        );
        Ok(())
    }

    fn barrier(&mut self, offset: u32, what: &str) -> Result<&mut Barrier, String> {
        self.barriers.get_mut(&offset).ok_or_else(|| {
            format!(
                "`{what}` on the mbarrier at shared byte {offset}, which no `mbarrier.init` of this block initialised"
            )
        })
    }

    /// `expect_tx`: `bytes` more transaction bytes in the current phase.
    pub(crate) fn expect(&mut self, offset: u32, bytes: u32, what: &str) -> Result<(), String> {
        let barrier = self.barrier(offset, what)?;
        barrier.transactions += i64::from(bytes);
        Ok(())
    }

    /// An arrival (after its `expect_tx`, if any); returns the phase it arrived in (the
    /// `state` operand's value) and whether it completed that phase.
    pub(crate) fn arrive(&mut self, offset: u32, what: &str) -> Result<(u64, bool), String> {
        let barrier = self.barrier(offset, what)?;
        let phase = barrier.phase;
        barrier.pending -= 1;
        Ok((phase, barrier.try_complete()))
    }

    /// `complete_tx` by an asynchronous copy of `bytes`; returns whether it completed the
    /// phase.
    pub(crate) fn complete(&mut self, offset: u32, bytes: u32, what: &str) -> Result<bool, String> {
        let barrier = self.barrier(offset, what)?;
        barrier.transactions -= i64::from(bytes);
        Ok(barrier.try_complete())
    }

    /// Whether the wait on `parity` of the barrier at `offset` is satisfied.
    pub(crate) fn satisfied(&self, offset: u32, parity: u32) -> Result<bool, String> {
        self.barriers
            .get(&offset)
            .map(|b| b.completed(parity))
            .ok_or_else(|| {
                format!(
                    "`mbarrier.try_wait` on the mbarrier at shared byte {offset}, which no `mbarrier.init` of this block initialised"
                )
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_phase_needs_its_arrivals_and_its_bytes() {
        let mut barriers = Barriers::default();
        barriers.init(64, 2).unwrap();
        assert!(!barriers.satisfied(64, 0).unwrap());
        barriers.expect(64, 1024, "x").unwrap();
        assert_eq!(barriers.arrive(64, "x").unwrap(), (0, false));
        barriers.complete(64, 1000, "x").unwrap();
        assert_eq!(barriers.arrive(64, "x").unwrap(), (0, false));
        // Both arrivals, 24 bytes missing.
        assert!(!barriers.satisfied(64, 0).unwrap());
        assert!(barriers.complete(64, 24, "x").unwrap());
        assert!(barriers.satisfied(64, 0).unwrap());
        assert!(!barriers.satisfied(64, 1).unwrap());
        // Phase 1: bytes completed before they are announced.
        barriers.complete(64, 8, "x").unwrap();
        barriers.arrive(64, "x").unwrap();
        barriers.expect(64, 8, "x").unwrap();
        assert!(!barriers.satisfied(64, 1).unwrap());
        barriers.arrive(64, "x").unwrap();
        assert!(barriers.satisfied(64, 1).unwrap());
        assert!(barriers
            .arrive(0, "mbarrier.arrive")
            .unwrap_err()
            .contains("no `mbarrier.init`"));
        assert!(barriers.init(8, 0).is_err());
    }
}
