//! Data races on global memory, found when asked for (`SimOptions::global_race_detection`,
//! or `CUDAJIT_SIM_RACES=global`): two accesses to one element of a writable slice
//! argument by different threads, at least one of them a plain write, that nothing
//! orders. The same report as a shared-memory race, both threads and both lines.
//!
//! What orders two accesses:
//! - being the same thread's;
//! - within a block, a barrier between them: the block's barrier interval, as for shared
//!   memory (`sync_threads()`, a completed named barrier or mbarrier phase, a barrier
//!   across launches);
//! - a `grid_sync()` of a cooperative launch (the grid's phase), or a `barrier.cluster`
//!   between blocks of one cluster;
//! - across blocks, a release observed by an acquire: block A fences (`fence_device()`, an
//!   ordered atomic) and then writes an address of global memory atomically; block B reads
//!   that address atomically (an RMW, an atomic or volatile load) after A's write, and
//!   accesses after that are ordered after A's accesses before its fence. This is the
//!   "last block" pattern of `__threadfence()` reductions. Each block keeps a vector clock
//!   of the blocks it has acquired from (`BlockClocks`); each atomic address the clocks
//!   released to it. The release needs the fence, since without one the GPU does not
//!   order the plain writes before the atomic; the acquire is taken at the atomic read
//!   itself (the PTX model wants a fence after it too, which CUDA's samples leave out),
//!   and for the whole block at once: races it would only find through that are missed,
//!   never reported wrongly;
//! - different launches (each launch's records start empty).
//!
//! Atomics and volatile accesses neither race nor count, as in shared memory. Elements are
//! tracked by the address of their first byte (an access of another width at another
//! offset of the element is not matched), in pages allocated when first touched: 72 bytes
//! of records per element of each writable slice argument the kernel touches. Read-only
//! slices (`&[T]`) cannot race and cost nothing. Not tracked: the memory of an extern
//! host (NCCL windows of simulated ranks), tensor maps' tensors.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Mutex, OnceLock};

use cudajit_core::{EnvVar, EnvVarError};

/// The variable that turns global-memory race detection on when `SimOptions` leaves it to
/// the environment.
pub const VARIABLE: &str = "CUDAJIT_SIM_RACES";

/// Whether `CUDAJIT_SIM_RACES` asks for global-memory races: `global` yes, `shared` (or
/// unset) no; anything else is an error naming the variable and what it accepts.
pub(crate) fn enabled_by_environment() -> Result<bool, EnvVarError> {
    from_variable(&EnvVar::process(VARIABLE))
}

/// The setting `variable` (`CUDAJIT_SIM_RACES`) gives.
fn from_variable(variable: &EnvVar) -> Result<bool, EnvVarError> {
    // `shared`: data races on shared memory are reported (the default); `global`: on
    // global memory too.
    let choice = variable.choice(&[("shared", false), ("global", true)])?;
    Ok(choice.unwrap_or(false))
}

/// A slice argument whose races are tracked: where its elements start in its memory, how
/// wide they are, and its parameter's name for messages.
#[derive(Clone, Debug)]
pub(crate) struct TrackedSlice {
    /// Byte offset of element 0 in the region's memory.
    pub base: u64,
    /// Bytes per element.
    pub elem: u32,
    /// Bytes per record: the element's size, or for a struct the largest power of two (at
    /// most 8) dividing it; an access at an offset that is not a multiple of it (a narrow
    /// field of a struct) keeps no record.
    pub granule: u32,
    /// Bytes of the region's memory.
    pub bytes: u64,
    pub name: String,
}

/// No thread: an empty record.
const NONE: u16 = u16::MAX;

/// One access: who, in which barrier interval and clock, and where.
#[derive(Clone, Copy, Debug)]
struct Access {
    block: u32,
    thread: u16,
    /// The block's barrier interval (its shared memory's epoch).
    epoch: u32,
    /// The block's clock (see `BlockClocks`).
    clock: u32,
    /// The grid's phase (`grid_sync()`s so far).
    phase: u32,
    site: u32,
}

impl Default for Access {
    fn default() -> Self {
        Access {
            block: 0,
            thread: NONE,
            epoch: 0,
            clock: 0,
            phase: 0,
            site: 0,
        }
    }
}

/// The last write of an element and up to two reads since, not ordered with each other.
#[derive(Clone, Copy, Debug, Default)]
struct Cell {
    write: Access,
    read: Access,
    other_read: Access,
}

/// Records per page: pages are allocated, and locked, one at a time.
const PAGE: usize = 4096;

/// [`PAGE`] records, allocated when first touched, each page under its own lock.
type Page = OnceLock<Mutex<Box<[Cell]>>>;

/// The records of one tracked slice.
struct Shadow {
    slice: TrackedSlice,
    pages: Box<[Page]>,
}

/// Locks over the atomic addresses' released clocks.
const SHARDS: usize = 64;

/// A launch's global-memory race records, shared by the host threads running its blocks.
pub(crate) struct GlobalRaces {
    /// By global region (`None`: not tracked).
    shadows: Vec<Option<Shadow>>,
    /// What was released to each atomic address of global memory, by pointer.
    released: Box<[Mutex<HashMap<u64, Clocks>>]>,
    /// `grid_sync()`s completed.
    phase: AtomicU32,
}

/// Clocks of other blocks, sorted by block: a sparse vector clock.
pub(crate) type Clocks = Vec<(u32, u32)>;

/// Joins `from` into `into` (the larger clock of each block).
fn join(into: &mut Clocks, from: &[(u32, u32)]) {
    for &(block, clock) in from {
        match into.binary_search_by_key(&block, |&(b, _)| b) {
            Ok(at) => into[at].1 = into[at].1.max(clock),
            Err(at) => into.insert(at, (block, clock)),
        }
    }
}

/// A block's clocks: its own, the one of its last fence, and what it has acquired of
/// other blocks'. Clocks start at 1, so 0 means nothing.
#[derive(Clone, Debug, Default)]
pub(crate) struct BlockClocks {
    /// The running block's linear index.
    pub block: u32,
    clock: u32,
    fenced: u32,
    seen: Clocks,
}

impl BlockClocks {
    /// Starts block `block` afresh.
    pub(crate) fn start(&mut self, block: u32) {
        self.block = block;
        self.clock = 1;
        self.fenced = 0;
        self.seen.clear();
    }

    /// A fence: what the block did so far may be released.
    pub(crate) fn fence(&mut self) {
        self.fenced = self.clock;
        self.clock += 1;
    }

    /// The block's clock of `block` as far as it has acquired it.
    fn seen(&self, block: u32) -> u32 {
        match self.seen.binary_search_by_key(&block, |&(b, _)| b) {
            Ok(at) => self.seen[at].1,
            Err(_) => 0,
        }
    }

    /// A `barrier.cluster` completed: every block of the cluster (`clusters`) has
    /// acquired what every other did before it.
    pub(crate) fn synchronise(clusters: &mut [&mut BlockClocks]) {
        let mut all: Clocks = clusters.iter().map(|c| (c.block, c.clock)).collect();
        all.sort_unstable();
        for clocks in clusters.iter_mut() {
            join(&mut clocks.seen, &all);
            clocks.clock += 1;
        }
    }
}

/// Two accesses to one element of global memory that nothing orders, at least one of them
/// a plain write.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct GlobalRaceReport {
    pub region: u64,
    /// Byte offset in the region's memory.
    pub offset: u64,
    /// The earlier access: block (linear), thread (linear in its block), site.
    pub first_block: u32,
    pub first_thread: u32,
    pub first_site: u32,
    pub first_write: bool,
    /// Whether the current access is a write.
    pub second_write: bool,
}

/// The access being checked.
struct Current<'c> {
    access: Access,
    clocks: &'c BlockClocks,
}

impl Current<'_> {
    /// Whether `earlier` is ordered before this access (or is no access at all).
    fn after(&self, earlier: &Access) -> bool {
        let me = &self.access;
        if earlier.thread == NONE || earlier.phase != me.phase {
            return true;
        }
        if earlier.block == me.block {
            return earlier.thread == me.thread || earlier.epoch != me.epoch;
        }
        earlier.clock <= self.clocks.seen(earlier.block)
    }
}

impl GlobalRaces {
    /// Records for the slices `tracked` (by global region).
    pub(crate) fn new(tracked: &[Option<TrackedSlice>]) -> GlobalRaces {
        let shadows = tracked
            .iter()
            .map(|slice| {
                slice.as_ref().map(|slice| {
                    let cells = slice.bytes.div_ceil(u64::from(slice.granule)) as usize;
                    Shadow {
                        slice: slice.clone(),
                        pages: (0..cells.div_ceil(PAGE)).map(|_| OnceLock::new()).collect(),
                    }
                })
            })
            .collect();
        GlobalRaces {
            shadows,
            released: (0..SHARDS).map(|_| Mutex::default()).collect(),
            phase: AtomicU32::new(0),
        }
    }

    /// A `grid_sync()` completed: every earlier access is ordered before every later one.
    pub(crate) fn next_phase(&self) {
        self.phase.fetch_add(1, Ordering::Relaxed);
    }

    /// The tracked slice of `region`, for messages.
    pub(crate) fn slice(&self, region: u64) -> Option<&TrackedSlice> {
        self.shadows
            .get(region as usize)
            .and_then(Option::as_ref)
            .map(|shadow| &shadow.slice)
    }

    /// Records a plain access by `thread` of the block of `clocks` (in barrier interval
    /// `epoch`) at `offset` of global region `region`, reporting a race with an earlier
    /// access that nothing orders before it.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn record(
        &self,
        region: u64,
        offset: u64,
        thread: u32,
        epoch: u32,
        site: u32,
        write: bool,
        clocks: &BlockClocks,
    ) -> Result<(), GlobalRaceReport> {
        let Some(Some(shadow)) = self.shadows.get(region as usize) else {
            return Ok(());
        };
        let granule = u64::from(shadow.slice.granule);
        if !offset.is_multiple_of(granule) {
            return Ok(());
        }
        let cell = (offset / granule) as usize;
        let Some(page) = shadow.pages.get(cell / PAGE) else {
            return Ok(());
        };
        let page = page.get_or_init(|| Mutex::new(vec![Cell::default(); PAGE].into()));
        let mut page = page.lock().unwrap_or_else(|p| p.into_inner());
        let record = &mut page[cell % PAGE];
        let current = Current {
            access: Access {
                block: clocks.block,
                thread: thread as u16,
                epoch,
                clock: clocks.clock,
                phase: self.phase.load(Ordering::Relaxed),
                site,
            },
            clocks,
        };
        let race = |earlier: &Access, first_write: bool| {
            Err(GlobalRaceReport {
                region,
                offset,
                first_block: earlier.block,
                first_thread: u32::from(earlier.thread),
                first_site: earlier.site,
                first_write,
                second_write: write,
            })
        };
        if !current.after(&record.write) {
            return race(&record.write, true);
        }
        if write {
            for read in [&record.read, &record.other_read] {
                if !current.after(read) {
                    return race(read, false);
                }
            }
            *record = Cell {
                write: current.access,
                ..Cell::default()
            };
        } else if current.after(&record.read) {
            // The earlier read is ordered before this one: this one stands for it.
            let other = record.other_read;
            record.read = current.access;
            record.other_read = if current.after(&other) {
                Access::default()
            } else {
                other
            };
        } else if current.after(&record.other_read) {
            record.other_read = current.access;
        }
        Ok(())
    }

    /// Runs `atomic`, an atomic access of the global address `pointer` by the block of
    /// `clocks`, as a release (when it `writes`, of what the block fenced) and an acquire
    /// (when it `reads`), under the address's lock so that a block that reads the value
    /// also reads what was released with it.
    pub(crate) fn atomic<R>(
        &self,
        pointer: u64,
        reads: bool,
        writes: bool,
        clocks: &mut BlockClocks,
        atomic: impl FnOnce() -> R,
    ) -> R {
        let shard = &self.released[(pointer as usize >> 2) % SHARDS];
        let mut released = shard.lock().unwrap_or_else(|p| p.into_inner());
        if writes && (clocks.fenced > 0 || !clocks.seen.is_empty()) {
            let entry = released.entry(pointer).or_default();
            join(entry, &clocks.seen);
            if clocks.fenced > 0 {
                join(entry, &[(clocks.block, clocks.fenced)]);
            }
        }
        let result = atomic();
        if reads {
            if let Some(from) = released.get(&pointer) {
                join(&mut clocks.seen, from);
            }
        }
        result
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn slice() -> Vec<Option<TrackedSlice>> {
        vec![Some(TrackedSlice {
            base: 0,
            elem: 4,
            granule: 4,
            bytes: 64,
            name: "y".into(),
        })]
    }

    fn block(b: u32) -> BlockClocks {
        let mut clocks = BlockClocks::default();
        clocks.start(b);
        clocks
    }

    #[test]
    fn threads_of_a_block_race_within_a_barrier_interval() {
        let races = GlobalRaces::new(&slice());
        let b = block(0);
        races.record(0, 0, 0, 1, 10, true, &b).unwrap();
        // The writer reads its own value; another thread may not.
        races.record(0, 0, 0, 1, 11, false, &b).unwrap();
        let report = races.record(0, 0, 1, 1, 12, false, &b).unwrap_err();
        assert_eq!((report.first_thread, report.first_write), (0, true));
        // After a barrier it may.
        races.record(0, 0, 1, 2, 12, false, &b).unwrap();
        // A write after another thread's read in the same interval races.
        let report = races.record(0, 0, 2, 2, 13, true, &b).unwrap_err();
        assert_eq!((report.first_thread, report.first_write), (1, false));
        // Other elements are apart.
        races.record(0, 4, 3, 2, 14, true, &b).unwrap();
    }

    #[test]
    fn blocks_race_unless_a_release_is_acquired_or_the_grid_syncs() {
        let races = GlobalRaces::new(&slice());
        let (mut a, mut b) = (block(0), block(1));
        races.record(0, 0, 0, 1, 10, true, &a).unwrap();
        assert!(races.record(0, 0, 0, 1, 11, false, &b).is_err());
        // Block 0 writes another element, fences, increments a counter; block 1's atomic
        // reads the counter, then reads the element.
        races.record(0, 8, 0, 1, 12, true, &a).unwrap();
        a.fence();
        let counter = 0x1234_0000;
        races.atomic(counter, true, true, &mut a, || ());
        races.atomic(counter, true, true, &mut b, || ());
        races.record(0, 8, 5, 1, 13, false, &b).unwrap();
        // What block 0 writes after its fence is not released.
        races.record(0, 12, 0, 1, 14, true, &a).unwrap();
        assert!(races.record(0, 12, 5, 1, 15, false, &b).is_err());
        // Without a fence nothing is released.
        let (c, mut d) = (block(2), block(3));
        races.record(0, 16, 0, 1, 16, true, &c).unwrap();
        races.atomic(counter + 8, true, true, &mut d, || ());
        assert!(races.record(0, 16, 0, 1, 17, false, &d).is_err());
        // A grid_sync() orders everything before it.
        races.next_phase();
        races.record(0, 16, 0, 1, 18, true, &d).unwrap();
    }

    #[test]
    fn a_cluster_barrier_orders_its_blocks() {
        let races = GlobalRaces::new(&slice());
        let (mut a, mut b) = (block(4), block(5));
        races.record(0, 20, 7, 1, 10, true, &a).unwrap();
        BlockClocks::synchronise(&mut [&mut a, &mut b]);
        races.record(0, 20, 3, 1, 11, true, &b).unwrap();
        // After the barrier, block 4's new access races with block 5's.
        assert!(races.record(0, 20, 7, 1, 12, false, &a).is_err());
    }

    #[test]
    fn the_variable_takes_shared_or_global() {
        let given = |value: Option<&str>| from_variable(&EnvVar::given(VARIABLE, value));
        assert_eq!(given(Some("global")), Ok(true));
        assert_eq!(given(Some(" Shared ")), Ok(false));
        assert_eq!(given(None), Ok(false));
        let error = given(Some("yes")).unwrap_err().to_string();
        assert!(
            error.starts_with("CUDAJIT_SIM_RACES=`yes` is not valid"),
            "{error}"
        );
        assert!(error.contains("`shared`, `global`"), "{error}");
    }
}
