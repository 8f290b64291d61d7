//! Host implementations of `#[extern_device]` functions for simulated launches.
//!
//! A GPU resolves an `#[extern_device]` call at link time against a device library; the
//! simulator resolves it against a [`SimExterns`] host given in
//! [`super::SimOptions::externs`]. The host maps symbols to its functions once per launch
//! ([`SimExterns::resolve`]), runs them when a thread calls them ([`SimExterns::call`],
//! with the arguments' register bits and access to the thread's memory through
//! [`ExternCall`]), and may provide global memory of its own ([`SimExterns::regions`]),
//! which kernels reach through the simulated device addresses of
//! [`super::extern_address`] (`slice_at`/`slice_at_mut`).
//!
//! An extern function may also make the calling thread wait at a *group barrier*
//! ([`ExternOutcome::GroupBarrier`]): in a launch of several grids together
//! ([`super::launch_group`]), block `b` of every grid runs on one host thread, and the
//! barrier completes when every thread of block `b` of every grid waits at one. That is
//! how a multi-rank simulation models a barrier across ranks; the simulator itself knows
//! nothing of what the functions mean.

use std::fmt;

use super::memory::{AccessFault, GlobalRegion, MemoryView};
use crate::isa::BUILTINS;

/// Most arguments an extern function may take in the simulator.
pub(crate) const MAX_EXTERN_ARGS: usize = 8;

/// Host implementations of extern functions, and the memory they hand out.
pub trait SimExterns: Send + Sync + fmt::Debug {
    /// The id [`SimExterns::call`] will receive for `symbol` (the `link_name` of the
    /// declaration), or `None` if this host does not implement it (calling it is then an
    /// error of the calling thread).
    fn resolve(&self, symbol: &str) -> Option<u32>;

    /// Runs function `function` (an id from [`SimExterns::resolve`]) for one thread.
    /// `Err` stops the launch with [`super::SimError::Extern`] naming the thread.
    fn call(
        &self,
        function: u32,
        call: &mut ExternCall<'_, '_, '_>,
    ) -> Result<ExternOutcome, String>;

    /// Global memory this host provides, for the whole launch: region `i` is addressed by
    /// [`super::extern_address`]`(i, offset)`.
    fn regions(&self) -> Vec<GlobalRegion<'_>> {
        Vec::new()
    }

    /// A name for region `region` in messages.
    fn region_name(&self, region: usize) -> String {
        format!("host region {region}")
    }

    /// Called once every thread of the launches has finished without an error: `Err`
    /// fails the launch with the message (state the host expected the kernels to leave
    /// behind, such as sessions they started and did not end).
    fn finish(&self) -> Result<(), String> {
        Ok(())
    }
}

/// What an extern call did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExternOutcome {
    /// It returned `bits` (ignored for functions without a result), as register bits of
    /// the declared result type (narrower types take the low bits).
    Return(u64),
    /// The thread waits until every thread of its block, in every grid of the group,
    /// waits at a group barrier; it then continues after the call.
    GroupBarrier,
}

/// One thread's call of an extern function: its arguments, the thread's identity and its
/// memory.
pub struct ExternCall<'c, 'a, 'm> {
    pub(crate) args: &'c [u64],
    pub(crate) memory: &'c mut MemoryView<'a, 'm>,
    pub(crate) builtins: &'c [u64; BUILTINS],
    pub(crate) member: usize,
    pub(crate) site: u32,
}

impl ExternCall<'_, '_, '_> {
    /// The arguments' register bits: scalars (zero-extended), pointers for references,
    /// and handle structs as their one field.
    pub fn args(&self) -> &[u64] {
        self.args
    }

    /// Argument `i` (0 if there is none).
    pub fn arg(&self, i: usize) -> u64 {
        self.args.get(i).copied().unwrap_or(0)
    }

    /// The index of the calling thread's grid in its group (0 for a plain launch).
    pub fn member(&self) -> usize {
        self.member
    }

    /// `thread_idx()` of the caller.
    pub fn thread_idx(&self) -> [u32; 3] {
        [0, 1, 2].map(|k| self.builtins[k] as u32)
    }

    /// `block_idx()` of the caller.
    pub fn block_idx(&self) -> [u32; 3] {
        [3, 4, 5].map(|k| self.builtins[k] as u32)
    }

    /// `block_dim()` of the launch.
    pub fn block_dim(&self) -> [u32; 3] {
        [6, 7, 8].map(|k| self.builtins[k] as u32)
    }

    /// `grid_dim()` of the launch.
    pub fn grid_dim(&self) -> [u32; 3] {
        [9, 10, 11].map(|k| self.builtins[k] as u32)
    }

    /// Loads `size` bytes (1, 2, 4 or 8) through the simulated pointer `pointer` (an
    /// argument of reference type, or an address), checked like a kernel's access.
    pub fn load(&mut self, pointer: u64, size: u32) -> Result<u64, String> {
        self.memory
            .load(pointer, size, self.site)
            .map_err(|fault| describe(pointer, size, &fault))
    }

    /// Stores the low `size` bytes of `value` through `pointer`.
    pub fn store(&mut self, pointer: u64, size: u32, value: u64) -> Result<(), String> {
        self.memory
            .store(pointer, size, value, self.site)
            .map_err(|fault| describe(pointer, size, &fault))
    }

    /// The `words` consecutive `u64`s at `pointer`.
    pub fn load_words(&mut self, pointer: u64, words: usize) -> Result<Vec<u64>, String> {
        (0..words)
            .map(|k| self.load(pointer.wrapping_add(8 * k as u64), 8))
            .collect()
    }
}

fn describe(pointer: u64, size: u32, fault: &AccessFault) -> String {
    let what = match fault {
        AccessFault::OutOfRegion { .. } => "outside its memory",
        AccessFault::Misaligned { .. } => "misaligned",
        AccessFault::ReadOnly { .. } => "to read-only memory",
        AccessFault::BadRegion { .. } => "through a pointer to no memory",
        AccessFault::Race(_) | AccessFault::GlobalRace(_) => "racing with another thread's access",
        AccessFault::InFlight { .. } => {
            "to the destination of an asynchronous copy not yet waited for"
        }
        AccessFault::Unfenced { .. } => "an asynchronous-proxy read of an unfenced store",
        AccessFault::AsyncReadPending(_) => "a write to bytes an asynchronous read still reads",
    };
    format!("a {size}-byte access at simulated address {pointer:#x}, {what}")
}

/// A launch's binding of its program's extern functions to a host.
pub(crate) struct ExternBinding<'a> {
    pub host: &'a dyn SimExterns,
    /// The host's id of each of the program's extern functions.
    pub ids: Vec<Option<u32>>,
    pub member: usize,
}
