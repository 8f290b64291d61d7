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

use super::global_races::GlobalRaceReport;

pub(crate) mod async_copy;
pub(crate) mod async_reads;
mod global;
pub(crate) mod mbarrier;
pub(crate) mod proxy;
mod shared;
pub(crate) mod swizzle;
mod view;

pub(crate) use global::rmw;
pub use global::{DeviceMemory, GlobalRegion};
pub(crate) use shared::{RaceReport, SharedMemory};
pub(crate) use view::{Arrival, ClusterView, GlobalRaceView, MemoryView};

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
    /// A write to a byte an asynchronous read (a `wgmma` operand, a TMA store's source) may
    /// still be reading (see [`async_reads`]).
    AsyncReadPending(async_reads::PendingRead),
}

#[cfg(test)]
mod tests {
    use super::shared::read_plain;
    use super::*;
    use crate::value::RegisterValue;
    use cudajit_core::intrinsics::AtomicOp;
    use cudajit_core::Scalar;

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
        shared.start_block(64, 2);
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
