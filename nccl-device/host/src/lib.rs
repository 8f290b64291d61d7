//! cudajit's NCCL host layer: communicators, symmetric windows and device communicators
//! from Rust, with NCCL loaded at run time.
//!
//! Layers, as in cudarc:
//! - [`discover`]: where `libnccl.so.2`, its headers and its device library are;
//! - [`sys`]: the raw function table and, in [`sys::layout`], the struct layouts of each
//!   supported release, generated from the real headers;
//! - [`LoadedNccl`]: the loaded host library (`libnccl.so.2`), its release checked against
//!   its headers;
//! - [`safe`]: [`Communicator`], [`SymmetricBuffer`], [`DevComm`] with RAII teardown in
//!   NCCL's order;
//! - [`device_code`]: NCCL's device code, the provider of the `DeviceLibrary` kernels link
//!   against (the shipped `.ltoir`, or a bridge over 2.28's headers built by nvcc);
//! - [`bootstrap`]: one process per GPU (torchrun-style variables, TCP exchange of the
//!   unique id, a launcher).
//!
//! ```no_run
//! use cudajit_nccl::{Communicator, DevCommRequirements, LoadedNccl};
//! let nccl = LoadedNccl::global()?;
//! let comm = Communicator::init_all(&nccl, &[0, 1])?;
//! let buf = comm.alloc_symmetric::<f32>(1 << 20)?;
//! let dev = comm.create_dev_comm(&DevCommRequirements::lsa_barriers(64))?;
//! for i in 0..comm.local_ranks().len() {
//!     println!("lsa rank {:?} of {:?}", dev.lsa_rank(i), dev.lsa_size(i));
//! }
//! # drop((dev, buf));
//! # Ok::<(), cudajit_nccl::NcclError>(())
//! ```
#![deny(unsafe_op_in_unsafe_fn)]
#![deny(clippy::undocumented_unsafe_blocks)]
#![warn(missing_docs)]

pub mod bootstrap;
pub mod device_code;
pub mod discover;
mod error;
mod loaded;
mod result;
pub mod safe;
pub mod sys;
mod version;

pub use error::{NcclCallError, NcclError, Result};
pub use loaded::{check_same_release, LoadedNccl, NcclReport, UniqueId, SEARCH_ORDER};
pub use safe::{
    BufferAt, Communicator, DevComm, DevCommRequirements, DeviceApiStatus, Direction, InitRank,
    LocalRank, NcclType, PeerInfo, ReduceOp, SymmetricBuffer, Transfer, DEFAULT_TIMEOUT,
};
pub use sys::layout::{CommProperties, DevCommLayout, Generation};
pub use version::{NcclVersion, MIN_SUPPORTED};
