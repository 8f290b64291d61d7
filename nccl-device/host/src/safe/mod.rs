//! RAII types over NCCL: [`Communicator`], [`SymmetricBuffer`], [`DevComm`], and the
//! host-initiated collectives on symmetric buffers ([`Communicator::all_reduce`]).
//!
//! Each type covers *every rank of the communicator that lives in this process* (one
//! for one-process-per-GPU jobs, all of them for [`Communicator::init_all`]), because
//! NCCL's setup and teardown calls are collective: across several GPUs of one process
//! they must be issued inside one `ncclGroupStart`/`ncclGroupEnd`, which a per-GPU
//! handle dropped on its own could not do.
//!
//! Teardown follows NCCL's order, dev comm → window → memory → comm, whatever order
//! the values are dropped in: buffers and dev comms hold the communicator alive, and a
//! buffer dropped while a dev comm is alive has its window deregistered (and memory
//! freed) after the last dev comm is destroyed. `Drop` never panics: failures are
//! logged through `tracing`; the explicit `close` methods return them instead.

pub mod agreement;
mod buffer;
mod capability;
mod collective;
mod communicator;
mod devcomm;

pub use buffer::SymmetricBuffer;
pub use capability::DeviceApiStatus;
pub use collective::{BufferAt, Direction, NcclType, ReduceOp, Transfer};
pub(crate) use communicator::timeout_from_env as communicator_timeout;
pub use communicator::{host_name, Communicator, InitRank, LocalRank, PeerInfo, DEFAULT_TIMEOUT};
pub use devcomm::{DevComm, DevCommRequirements};
