//! Memory of a simulated launch: global buffers, per-block shared memory with data-race
//! tracking, and per-thread local memory.
//!
//! A pointer is a `u64`: a region number in the top 16 bits and a byte offset in the low
//! 48. Regions below `SHARED_REGION` are the launch's global buffers (one per slice
//! argument, in argument order); `SHARED_REGION` is the block's shared memory and
//! `LOCAL_REGION` the thread's own local memory (arrays, and later structs). Every access
//! checks that it lies inside its region and is aligned to its size, so a kernel can never
//! reach memory it was not given, whatever its indices.
//!
//! Global memory is read and written through relaxed atomic accesses of the element's
//! width, so blocks running on different host threads may share it soundly; atomics are
//! compare-and-swap loops. Shared and local memory belong to one block, which one host
//! thread runs, and are plain bytes.
//!
//! Regions from `EXTERN_REGION_BASE` (0x8000) up are those an extern host lends the launch
//! ([`super::SimExterns::regions`]), e.g. the windows of every simulated NCCL rank, so an
//! LSA pointer into a peer's window is an ordinary pointer into another region, checked
//! like any other.

use std::sync::atomic::{AtomicU16, AtomicU32, AtomicU64, AtomicU8, Ordering};

use cudajit_core::intrinsics::AtomicOp;
use cudajit_core::Scalar;

use super::global_races::{BlockClocks, GlobalRaceReport, GlobalRaces};
use super::value::RegisterValue;

pub(crate) mod async_copy;
pub(crate) mod mbarrier;
pub(crate) mod proxy;
pub(crate) mod swizzle;

use async_copy::{AsyncCopies, PendingCopy};
use mbarrier::Barriers;
use proxy::ProxyWrites;
use swizzle::TmaSwizzles;

/// Bits of a pointer that hold the offset.
pub(crate) const OFFSET_BITS: u32 = 48;
/// The offset part of a pointer.
pub(crate) const OFFSET_MASK: u64 = (1 << OFFSET_BITS) - 1;
/// The region number of the block's shared memory.
pub(crate) const SHARED_REGION: u64 = 0xfffe;
/// The region number of the thread's local memory.
pub(crate) const LOCAL_REGION: u64 = 0xffff;
/// The most global regions a launch's arguments can have.
pub(crate) const MAX_GLOBAL_REGIONS: usize = 0x8000;
/// The region number of the first region a [`super::SimExterns`] host provides: host region
/// `i` is region `EXTERN_REGION_BASE + i`.
pub(crate) const EXTERN_REGION_BASE: u64 = 0x8000;
/// The most regions a host can provide.
pub const MAX_EXTERN_REGIONS: usize = 0x7ff0;

/// The simulated device address of byte `offset` of host region `region` (one of
/// [`super::SimExterns::regions`]): what an extern function returns for a kernel to read
/// through `slice_at`/`slice_at_mut`. The region number sits in the top 16 bits and the
/// offset in the low 48, so an address maps back to its region and every access through
/// it is bounds-checked like a slice argument's.
pub fn extern_address(region: usize, offset: u64) -> u64 {
    debug_assert!(region < MAX_EXTERN_REGIONS);
    pointer(EXTERN_REGION_BASE + region as u64, offset)
}

/// The host region and byte offset of a simulated device address made by
/// [`extern_address`], if it is one.
pub fn extern_region_of(address: u64) -> Option<(usize, u64)> {
    let region = address >> OFFSET_BITS;
    (EXTERN_REGION_BASE..EXTERN_REGION_BASE + MAX_EXTERN_REGIONS as u64)
        .contains(&region)
        .then(|| {
            (
                (region - EXTERN_REGION_BASE) as usize,
                address & OFFSET_MASK,
            )
        })
}

/// Whether `offset` is a multiple of `size`, a power of two as every access size is: a
/// mask, where `is_multiple_of` (like every method) is a call of its own in a debug build
/// of the simulator, once per access of every simulated thread.
#[inline(always)]
pub(crate) fn aligned(offset: u64, size: u32) -> bool {
    offset & (size as u64 - 1) == 0
}

/// A pointer to `offset` in `region`.
#[inline(always)]
pub(crate) fn pointer(region: u64, offset: u64) -> u64 {
    (region << OFFSET_BITS) | (offset & OFFSET_MASK)
}

/// Device memory the simulator's kernels read and write: a block of bytes, 8-byte aligned
/// (the simulator treats every allocation as 256-byte aligned, as CUDA's are, for the
/// alignment rules of vector accesses).
pub struct DeviceMemory {
    words: Box<[AtomicU64]>,
    bytes: usize,
}

impl std::fmt::Debug for DeviceMemory {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "DeviceMemory({} bytes)", self.bytes)
    }
}

impl DeviceMemory {
    /// `bytes` bytes of zeros.
    pub fn zeroed(bytes: usize) -> Self {
        DeviceMemory {
            words: (0..bytes.div_ceil(8)).map(|_| AtomicU64::new(0)).collect(),
            bytes,
        }
    }

    /// The size in bytes.
    pub fn len(&self) -> usize {
        self.bytes
    }

    /// Whether the memory has no bytes.
    pub fn is_empty(&self) -> bool {
        self.bytes == 0
    }

    /// Copies `data` to the bytes starting at `offset`.
    ///
    /// # Panics
    /// If the bytes are outside the memory.
    pub fn write_bytes(&mut self, offset: usize, data: &[u8]) {
        assert!(
            offset + data.len() <= self.bytes,
            "write outside device memory"
        );
        for (i, &byte) in data.iter().enumerate() {
            let at = offset + i;
            let word = self.words[at / 8].get_mut();
            let shift = (at % 8) * 8;
            *word = (*word & !(0xff << shift)) | (u64::from(byte) << shift);
        }
    }

    /// Copies `data` to the bytes starting at `offset` through a shared reference (atomic
    /// byte stores), for memory that launches may share, e.g. an NCCL window held by a
    /// simulated world.
    ///
    /// # Panics
    /// If the bytes are outside the memory.
    pub fn store_bytes(&self, offset: usize, data: &[u8]) {
        assert!(
            offset + data.len() <= self.bytes,
            "write outside device memory"
        );
        for (i, &byte) in data.iter().enumerate() {
            // SAFETY: inside the allocation (checked above); every access to device memory
            // is atomic.
            unsafe { AtomicU8::from_ptr(self.base().add(offset + i)) }
                .store(byte, Ordering::Relaxed);
        }
    }

    /// [`Self::write_values`] through a shared reference (see [`Self::store_bytes`]).
    pub fn store_values<T: RegisterValue>(&self, first: usize, values: &[T]) {
        let size = T::SCALAR.size_bytes() as usize;
        let mut bytes = Vec::with_capacity(values.len() * size);
        for value in values {
            bytes.extend_from_slice(&value.to_register().to_le_bytes()[..size]);
        }
        self.store_bytes(first * size, &bytes);
    }

    /// Copies the bytes starting at `offset` into `out`.
    ///
    /// # Panics
    /// If the bytes are outside the memory.
    pub fn read_bytes(&self, offset: usize, out: &mut [u8]) {
        assert!(
            offset + out.len() <= self.bytes,
            "read outside device memory"
        );
        let mut i = 0;
        while i < out.len() {
            let at = offset + i;
            let word = self.words[at / 8].load(Ordering::Relaxed).to_le_bytes();
            let start = at % 8;
            let take = (8 - start).min(out.len() - i);
            out[i..i + take].copy_from_slice(&word[start..start + take]);
            i += take;
        }
    }

    /// Copies `values` to the elements starting at element `first`.
    pub fn write_values<T: RegisterValue>(&mut self, first: usize, values: &[T]) {
        let size = T::SCALAR.size_bytes() as usize;
        let mut bytes = Vec::with_capacity(values.len() * size);
        for value in values {
            bytes.extend_from_slice(&value.to_register().to_le_bytes()[..size]);
        }
        self.write_bytes(first * size, &bytes);
    }

    /// The `count` elements starting at element `first`.
    pub fn read_values<T: RegisterValue>(&self, first: usize, count: usize) -> Vec<T> {
        let size = T::SCALAR.size_bytes() as usize;
        let mut bytes = vec![0u8; count * size];
        self.read_bytes(first * size, &mut bytes);
        bytes
            .chunks_exact(size)
            .map(|chunk| {
                let mut word = [0u8; 8];
                word[..size].copy_from_slice(chunk);
                T::from_register(u64::from_le_bytes(word))
            })
            .collect()
    }

    #[inline(always)]
    fn base(&self) -> *mut u8 {
        self.words.as_ptr() as *mut u8
    }

    /// Whether `size` bytes at `offset` (an offset of a pointer, below 2^48, so the sum
    /// cannot overflow) lie inside the memory.
    #[inline(always)]
    fn contains(&self, offset: u64, size: u64) -> bool {
        offset + size <= self.bytes as u64
    }

    /// Loads `size` bytes (1, 2, 4 or 8) at `offset`, which the caller checked lies inside
    /// the memory and is aligned to `size`.
    #[inline(always)]
    fn load(&self, offset: u64, size: u32) -> u64 {
        debug_assert!(self.contains(offset, size as u64) && aligned(offset, size));
        // SAFETY: the access is inside the allocation (checked by the caller) and aligned to
        // its size (the allocation is 8-byte aligned and the offset a multiple of `size`),
        // and all concurrent accesses to these bytes are atomic.
        unsafe {
            let at = self.base().add(offset as usize);
            match size {
                1 => u64::from(AtomicU8::from_ptr(at).load(Ordering::Relaxed)),
                2 => u64::from(AtomicU16::from_ptr(at.cast()).load(Ordering::Relaxed)),
                4 => u64::from(AtomicU32::from_ptr(at.cast()).load(Ordering::Relaxed)),
                _ => AtomicU64::from_ptr(at.cast()).load(Ordering::Relaxed),
            }
        }
    }

    /// Stores the low `size` bytes of `value` at `offset` (checked as for [`Self::load`]).
    #[inline(always)]
    fn store(&self, offset: u64, size: u32, value: u64) {
        debug_assert!(self.contains(offset, size as u64) && aligned(offset, size));
        // SAFETY: as in `load`.
        unsafe {
            let at = self.base().add(offset as usize);
            match size {
                1 => AtomicU8::from_ptr(at).store(value as u8, Ordering::Relaxed),
                2 => AtomicU16::from_ptr(at.cast()).store(value as u16, Ordering::Relaxed),
                4 => AtomicU32::from_ptr(at.cast()).store(value as u32, Ordering::Relaxed),
                _ => AtomicU64::from_ptr(at.cast()).store(value, Ordering::Relaxed),
            }
        }
    }

    /// An atomic read-modify-write of a 4- or 8-byte element (checked as for
    /// [`Self::load`]); returns the old value.
    #[inline]
    fn atomic(&self, offset: u64, kind: Scalar, op: AtomicOp, a: u64, b: u64) -> u64 {
        // SAFETY: as in `load`.
        unsafe {
            let at = self.base().add(offset as usize);
            if kind.size_bytes() == 4 {
                let cell = AtomicU32::from_ptr(at.cast());
                let mut old = cell.load(Ordering::Relaxed);
                loop {
                    let new = rmw(kind, op, u64::from(old), a, b) as u32;
                    match cell.compare_exchange_weak(old, new, Ordering::Relaxed, Ordering::Relaxed)
                    {
                        Ok(_) => return u64::from(old),
                        Err(current) => old = current,
                    }
                }
            } else {
                let cell = AtomicU64::from_ptr(at.cast());
                let mut old = cell.load(Ordering::Relaxed);
                loop {
                    let new = rmw(kind, op, old, a, b);
                    match cell.compare_exchange_weak(old, new, Ordering::Relaxed, Ordering::Relaxed)
                    {
                        Ok(_) => return old,
                        Err(current) => old = current,
                    }
                }
            }
        }
    }
}

/// The new value of an atomic `op` on an element of type `kind` holding `old`, with
/// operands `a` (and `b` for compare-exchange: `a` is the expected value, `b` the new one).
/// Compare-exchange compares bits, as the GPU does (floats through their integer bits).
pub(crate) fn rmw(kind: Scalar, op: AtomicOp, old: u64, a: u64, b: u64) -> u64 {
    fn ord<T: RegisterValue + PartialOrd>(op: AtomicOp, old: u64, a: u64) -> u64 {
        let (x, y) = (T::from_register(old), T::from_register(a));
        let take_new = match op {
            AtomicOp::Min => y < x,
            _ => y > x,
        };
        if take_new {
            a
        } else {
            old
        }
    }
    match op {
        AtomicOp::Exchange => a,
        AtomicOp::CompareExchange => {
            if old == a {
                b
            } else {
                old
            }
        }
        AtomicOp::And => old & a,
        AtomicOp::Or => old | a,
        AtomicOp::Xor => old ^ a,
        AtomicOp::Add | AtomicOp::Sub => {
            let add = op == AtomicOp::Add;
            match kind {
                Scalar::F32 => {
                    let (x, y) = (f32::from_register(old), f32::from_register(a));
                    (if add { x + y } else { x - y }).to_register()
                }
                Scalar::F64 => {
                    let (x, y) = (f64::from_register(old), f64::from_register(a));
                    (if add { x + y } else { x - y }).to_register()
                }
                _ => {
                    let sum = if add {
                        old.wrapping_add(a)
                    } else {
                        old.wrapping_sub(a)
                    };
                    super::value::canonical(sum, kind)
                }
            }
        }
        AtomicOp::Min | AtomicOp::Max => match kind {
            Scalar::I32 => ord::<i32>(op, old, a),
            Scalar::U32 => ord::<u32>(op, old, a),
            Scalar::I64 | Scalar::Isize => ord::<i64>(op, old, a),
            _ => ord::<u64>(op, old, a),
        },
    }
}

/// One global buffer of a launch: device memory seen from a given byte offset, read-only
/// or writable.
#[derive(Clone, Copy, Debug)]
pub struct GlobalRegion<'a> {
    pub memory: &'a DeviceMemory,
    pub writable: bool,
}

/// Why a memory access failed; the scheduler adds where it happened.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum AccessFault {
    /// Outside its region (a pointer past the end of a buffer).
    OutOfRegion { region: u64, offset: u64, size: u32 },
    /// Not aligned to its size.
    Misaligned { offset: u64, align: u32 },
    /// A store to a read-only buffer.
    ReadOnly { region: u64 },
    /// A pointer to no region.
    BadRegion { region: u64 },
    /// A data race on shared memory.
    Race(RaceReport),
    /// A data race on global memory (when tracked, see [`super::global_races`]).
    GlobalRace(GlobalRaceReport),
    /// An access to the destination of a `cp.async` that thread `owner` issued at `site`
    /// (packed) and has not waited for, or of a TMA load completing the mbarrier at
    /// `barrier` that no thread has waited on yet.
    InFlight {
        offset: u64,
        owner: u32,
        site: u32,
        barrier: Option<u32>,
    },
    /// An asynchronous-proxy read (`wgmma`, a TMA store) of a byte thread `writer` stored
    /// without a `fence.proxy.async` since.
    Unfenced { offset: u64, writer: u32 },
}

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
    bytes: Vec<u8>,
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
        }
    }

    /// Starts a block with `size` bytes of zeroed shared memory.
    pub(crate) fn start_block(&mut self, size: usize) {
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
    fn check(&self, offset: u64, size: u32) -> Result<usize, AccessFault> {
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
                self.epoch = self.epoch.wrapping_add(1);
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
    fn record(
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
        if self.track_races {
            self.record(at, thread, site, true)?;
        }
        write_plain(&mut self.bytes, at, size, value);
        self.proxy.store(at, size, thread);
        self.swizzles.other_wrote(at, size);
        Ok(())
    }

    fn atomic(
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
fn read_plain(bytes: &[u8], at: usize, size: u32) -> u64 {
    let mut word = [0u8; 8];
    word[..size as usize].copy_from_slice(&bytes[at..at + size as usize]);
    u64::from_le_bytes(word)
}

#[inline(always)]
fn write_plain(bytes: &mut [u8], at: usize, size: u32, value: u64) {
    bytes[at..at + size as usize].copy_from_slice(&value.to_le_bytes()[..size as usize]);
}

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_round_trip() {
        let mut memory = DeviceMemory::zeroed(13);
        memory.write_bytes(3, &[1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
        let mut out = [0u8; 12];
        memory.read_bytes(1, &mut out);
        assert_eq!(out, [0, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
        let mut values = DeviceMemory::zeroed(12);
        values.write_values(0, &[1.5f32, -2.0, 3.25]);
        assert_eq!(values.read_values::<f32>(1, 2), vec![-2.0, 3.25]);
    }

    #[test]
    fn shared_races_are_found() {
        let mut shared = SharedMemory::new(true);
        shared.start_block(64);
        shared.store(0, 4, 7, 0, 1).unwrap();
        // The writer may read its own value.
        assert_eq!(shared.load(0, 4, 0, 2).unwrap(), 7);
        // Another thread may not, before a barrier.
        assert!(matches!(
            shared.load(0, 4, 1, 3),
            Err(AccessFault::Race(RaceReport {
                first_thread: 0,
                first_write: true,
                ..
            }))
        ));
        shared.epoch += 1;
        assert_eq!(shared.load(0, 4, 1, 3).unwrap(), 7);
        // A write after another thread's read, before a barrier.
        assert!(matches!(
            shared.store(0, 4, 1, 2, 4),
            Err(AccessFault::Race(RaceReport {
                first_thread: 1,
                first_write: false,
                ..
            }))
        ));
        // Atomics never race.
        shared.atomic(8, Scalar::U32, AtomicOp::Add, 1, 0).unwrap();
        shared.atomic(8, Scalar::U32, AtomicOp::Add, 1, 0).unwrap();
        assert_eq!(read_plain(&shared.bytes, 8, 4), 2);
    }

    #[test]
    fn atomic_operations() {
        assert_eq!(
            rmw(Scalar::I32, AtomicOp::Min, 5, (-3i32).to_register(), 0),
            (-3i32).to_register()
        );
        assert_eq!(
            rmw(Scalar::U32, AtomicOp::Min, 5, (-3i32).to_register(), 0),
            5
        );
        assert_eq!(
            rmw(Scalar::U32, AtomicOp::Add, u64::from(u32::MAX), 2, 0),
            1
        );
        assert_eq!(
            rmw(
                Scalar::F32,
                AtomicOp::Sub,
                1.5f32.to_register(),
                0.5f32.to_register(),
                0
            ),
            1.0f32.to_register()
        );
        assert_eq!(rmw(Scalar::U64, AtomicOp::CompareExchange, 4, 4, 9), 9);
        assert_eq!(rmw(Scalar::U64, AtomicOp::CompareExchange, 4, 5, 9), 4);
    }
}
