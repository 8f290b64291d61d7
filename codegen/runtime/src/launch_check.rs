//! What a GPU launch checks of its arguments before anything is enqueued.
//!
//! Launch state belongs to the launch, not to the language: the layout of a type kernels
//! take ([`DeviceStruct`], in `cudajit-core`) says nothing about launching, while
//! [`LaunchArgument`] says what the generated `launch` checks of an argument of the type,
//! with what the launch knows about itself ([`LaunchInfo`]) and the checks that already
//! passed ([`LaunchMemo`]).

use std::sync::atomic::{AtomicU64, Ordering};

use cudajit_core::layout::DeviceStruct;
use cudajit_core::CapturedKernel;

/// A type kernels take by value, as the launch sees it: `#[derive(DeviceCopy)]` implements
/// it with no check, and `cudajit::nccl::device::DevComm` with its own.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be passed to a kernel",
    label = "kernels take scalars, slices of scalars and `#[derive(DeviceCopy)]` structs and enums",
    note = "derive `DeviceCopy` for it (a `#[repr(C)]` struct of scalars, or a fieldless enum with `#[repr(u8)]`..`#[repr(i64)]`)"
)]
pub trait LaunchArgument: DeviceStruct {
    /// A check the generated `launch` runs on an argument of this type before every GPU
    /// launch, with what the launch knows ([`LaunchInfo`]); an error fails the launch
    /// (`cudajit::Error::Collective`) before anything is enqueued. `None` (the default,
    /// and what `#[derive(DeviceCopy)]` gives) compiles to nothing: the generated code
    /// branches on this constant, so the branch folds away.
    /// `cudajit::nccl::device::DevComm` uses it: its barrier count against the grid, and
    /// the ranks' agreement on the kernel before its first launch.
    const LAUNCH_CHECK: Option<LaunchCheck<Self>> = None;
}

/// A launch check of an argument of type `T` ([`LaunchArgument::LAUNCH_CHECK`]): `Err`
/// holds the message, which the launch reports with the kernel's name.
pub type LaunchCheck<T> = fn(&T, &LaunchInfo<'_>) -> Result<(), String>;

/// What a GPU launch knows about itself, for [`LaunchArgument::LAUNCH_CHECK`].
#[derive(Clone, Copy, Debug)]
pub struct LaunchInfo<'a> {
    /// The kernel's name.
    pub kernel: &'a str,
    /// Its captured form (what it calls: `captured.reachable()`).
    pub captured: &'static CapturedKernel,
    /// The compiled identity of the specialisation: a BLAKE3 hash over the kernel's captured
    /// source, every device function it reaches, the struct layouts it takes and its
    /// generic and `#[comptime]` values; the same on every GPU architecture and
    /// toolchain, different for every other kernel or specialisation.
    pub identity: &'a [u8; 32],
    /// The specialisation for people: `all_reduce_one_shot<T=f32>`.
    pub description: &'a str,
    /// Grid dimensions (CTAs).
    pub grid: (u32, u32, u32),
    /// Block dimensions (threads).
    pub block: (u32, u32, u32),
    /// Keys of checks that already passed for this loaded kernel (one per specialisation
    /// and GPU): lets a check that needs a slow first step (an exchange among processes)
    /// skip it on later launches without a lock.
    pub memo: &'a LaunchMemo,
}

impl LaunchInfo<'_> {
    /// CTAs in the grid (`grid.x * grid.y * grid.z`, saturating).
    pub fn ctas(&self) -> u64 {
        (self.grid.0 as u64)
            .saturating_mul(self.grid.1 as u64)
            .saturating_mul(self.grid.2 as u64)
    }
}

/// How many keys a [`LaunchMemo`] holds.
pub const LAUNCH_MEMO_SLOTS: usize = 8;

/// A small lock-free set of non-zero `u64` keys: checks that passed once. Full, it
/// forgets nothing and adds nothing more (callers then take their slow path, which must
/// give the same answer).
#[derive(Debug)]
pub struct LaunchMemo {
    slots: [AtomicU64; LAUNCH_MEMO_SLOTS],
}

impl Default for LaunchMemo {
    fn default() -> Self {
        Self::new()
    }
}

impl LaunchMemo {
    /// An empty memo.
    pub const fn new() -> Self {
        LaunchMemo {
            slots: [const { AtomicU64::new(0) }; LAUNCH_MEMO_SLOTS],
        }
    }

    /// Whether `key` (non-zero) was inserted.
    #[inline]
    pub fn contains(&self, key: u64) -> bool {
        for slot in &self.slots {
            match slot.load(Ordering::Acquire) {
                0 => return false,
                k if k == key => return true,
                _ => {}
            }
        }
        false
    }

    /// Remembers `key` (non-zero); false when the memo is full or `key` is 0.
    pub fn insert(&self, key: u64) -> bool {
        if key == 0 {
            return false;
        }
        for slot in &self.slots {
            match slot.compare_exchange(0, key, Ordering::AcqRel, Ordering::Acquire) {
                Ok(_) => return true,
                Err(k) if k == key => return true,
                Err(_) => {}
            }
        }
        false
    }
}
