//! The ranks an LSA operation spans, on GPUs (a communicator and its device communicator)
//! or simulated ([`SimWorld`]), and the symmetric buffers they share: what the
//! mixture-of-experts group and the M-to-N reshard need of either, behind one type, so a
//! program written against simulated ranks runs on GPUs unchanged.

use cudajit_nccl::{Communicator, SymmetricBuffer};

use cudajit::{BufferElement, Stream};
use cudajit_nccl_device::{DevComm, Window};

use crate::{SimSymmetricBuffer, SimWorld};

/// Why the ranks or a symmetric tensor refused an operation.
#[derive(thiserror::Error, cudajit_error_debug::ReadableDebug)]
#[non_exhaustive]
pub enum RanksError {
    /// A dimension does not fit the ranks or the device communicator; nothing was launched.
    #[error("{dimension} is {value}, but {requirement}")]
    Mismatch {
        /// What was given wrong (`local rank`, `LSA team size`, `stream`, ...).
        dimension: &'static str,
        value: usize,
        /// What it must be, and where the limit comes from.
        requirement: String,
    },
    /// A launch or a copy failed.
    #[error(transparent)]
    Launch(#[from] cudajit::Error),
    /// NCCL refused an allocation or a copy.
    #[error(transparent)]
    Nccl(#[from] cudajit_nccl::NcclError),
}

/// `impl From<RanksError> for $error`, for an error type with the same `Mismatch {
/// dimension, value, requirement }`, `Launch(cudajit::Error)` and `Nccl(NcclError)`
/// variants (the MoE group's and the reshard's, which name the same dimensions): each
/// variant to its namesake, a later kind of ranks error to `Launch` with its message.
/// The invoking crate names `cudajit`.
#[macro_export]
macro_rules! from_ranks_error {
    ($error:ident) => {
        impl From<$crate::RanksError> for $error {
            fn from(error: $crate::RanksError) -> Self {
                match error {
                    $crate::RanksError::Mismatch {
                        dimension,
                        value,
                        requirement,
                    } => $error::Mismatch {
                        dimension,
                        value,
                        requirement,
                    },
                    $crate::RanksError::Launch(e) => $error::Launch(e),
                    $crate::RanksError::Nccl(e) => $error::Nccl(e),
                    // A later kind of ranks error keeps its message.
                    other => $error::Launch(cudajit::Error::Backend(other.to_string())),
                }
            }
        }
    };
}

impl RanksError {
    fn mismatch(dimension: &'static str, value: usize, requirement: impl Into<String>) -> Self {
        RanksError::Mismatch {
            dimension,
            value,
            requirement: requirement.into(),
        }
    }
}

/// The ranks of this process that take part, and how they reach each other.
#[derive(Clone, Copy, Debug)]
pub enum LsaRanks<'a> {
    /// GPUs: the local ranks of `comm`, whose device communicator `dev_comm` has an LSA
    /// barrier per CTA of the operation's kernels (`MoeConfig::requirements`,
    /// `M2nConfig::requirements`).
    Gpu {
        comm: &'a Communicator,
        dev_comm: &'a cudajit_nccl::DevComm,
    },
    /// Every rank of a simulated world of one node.
    Sim(&'a SimWorld),
}

impl<'a> LsaRanks<'a> {
    /// The ranks of the communicator (the LSA team).
    pub fn nranks(&self) -> usize {
        match self {
            LsaRanks::Gpu { comm, .. } => comm.n_ranks() as usize,
            LsaRanks::Sim(world) => world.nranks(),
        }
    }

    /// The ranks this process drives.
    pub fn local_ranks(&self) -> usize {
        match self {
            LsaRanks::Gpu { comm, .. } => comm.local_ranks().len(),
            LsaRanks::Sim(world) => world.nranks(),
        }
    }

    /// The communicator rank of local rank `i`.
    pub fn rank(&self, i: usize) -> usize {
        match self {
            LsaRanks::Gpu { comm, .. } => comm.local_ranks()[i].rank as usize,
            LsaRanks::Sim(_) => i,
        }
    }

    /// The stream of local rank `i` the kernels launch on by default: its CUDA
    /// context's default stream, or its simulated rank's stream.
    pub fn stream(&self, i: usize) -> Result<Stream, RanksError> {
        self.check_local(i)?;
        match self {
            LsaRanks::Gpu { comm, .. } => comm
                .context(i)
                .map(|c| Stream::from_cuda(c.default_stream()))
                .ok_or_else(|| RanksError::mismatch("local rank", i, "it has no CUDA context")),
            LsaRanks::Sim(world) => Ok(Stream::from_sim(world.stream(i).clone())),
        }
    }

    /// Peers are reached by LSA (loads and stores to their memory), so every rank of the
    /// communicator must be in one LSA team; and the device communicator must have an LSA
    /// barrier per CTA of the kernels (`requirements`: the call that makes one so).
    pub fn check(&self, ctas: u32, requirements: &str) -> Result<(), RanksError> {
        match self {
            LsaRanks::Gpu { comm, dev_comm } => {
                let lsa = dev_comm.lsa_size(0).unwrap_or(0) as usize;
                if lsa != self.nranks() {
                    return Err(RanksError::mismatch(
                        "LSA team size",
                        lsa,
                        format!("every one of the communicator's {} ranks must reach the others by load/store (one NVLink domain)", comm.n_ranks()),
                    ));
                }
                let barriers = dev_comm.lsa_barrier_count();
                if barriers < ctas {
                    return Err(RanksError::mismatch(
                        "lsa_barrier_count",
                        barriers as usize,
                        format!("the kernels run {ctas} CTAs with an LSA barrier each: create the device communicator with {requirements}"),
                    ));
                }
            }
            LsaRanks::Sim(world) => {
                // The same rule as on GPUs, under the same name: a simulated node is
                // an LSA team.
                if world.nodes() != 1 {
                    return Err(RanksError::mismatch(
                        "LSA team size",
                        world.ranks_per_node(),
                        format!(
                            "every one of the world's {} ranks must reach the others by load/store: simulate them as one node (SimWorld::new), not {} nodes",
                            world.nranks(),
                            world.nodes()
                        ),
                    ));
                }
            }
        }
        Ok(())
    }

    pub fn check_local(&self, i: usize) -> Result<(), RanksError> {
        if i >= self.local_ranks() {
            return Err(RanksError::mismatch(
                "local rank",
                i,
                format!("this process drives {} rank(s)", self.local_ranks()),
            ));
        }
        Ok(())
    }

    /// The device communicator of local rank `i`, as a kernel parameter.
    pub fn dev_comm(&self, i: usize) -> Result<DevComm, RanksError> {
        match self {
            LsaRanks::Gpu { dev_comm, .. } => DevComm::for_rank(dev_comm, i)
                .map_err(|e| RanksError::Launch(cudajit::Error::Backend(e.to_string()))),
            LsaRanks::Sim(world) => Ok(world.dev_comm(i)),
        }
    }

    /// `len` elements on every rank, each rank's part a window: NCCL's symmetric memory
    /// on GPUs (every rank of the communicator allocates together), a simulated window
    /// otherwise.
    pub fn alloc<T: BufferElement + Copy + Default + 'static>(
        &self,
        len: usize,
    ) -> Result<SymmetricTensor<T>, RanksError> {
        Ok(match self {
            LsaRanks::Gpu { comm, .. } => SymmetricTensor::Gpu(comm.alloc_symmetric::<T>(len)?),
            LsaRanks::Sim(world) => SymmetricTensor::Sim(world.alloc_symmetric::<T>(len)?),
        })
    }

    /// Whether `stream` is local rank `i`'s (a launch on another rank's GPU or simulated
    /// rank would meet the wrong peers at its barriers); `source` names where the right one
    /// comes from (`MoeGroup::stream(i)`).
    pub fn check_stream(&self, i: usize, stream: &Stream, source: &str) -> Result<(), RanksError> {
        let right = match self {
            LsaRanks::Gpu { comm, .. } => stream
                .cuda()
                .is_some_and(|s| s.context().ordinal() == comm.local_ranks()[i].device),
            // A simulated rank's stream names its member of the world's group.
            LsaRanks::Sim(world) => stream
                .sim()
                .and_then(|s| s.group())
                .is_some_and(|(group, member)| member == i && group.members() == world.nranks()),
        };
        if right {
            Ok(())
        } else {
            Err(RanksError::mismatch(
                "stream",
                i,
                format!("the stream must be local rank i's ({source})"),
            ))
        }
    }
}

/// `len` elements of `T` on every rank, each rank's part a window: NCCL's symmetric memory
/// on GPUs, a simulated window otherwise.
pub enum SymmetricTensor<T> {
    Gpu(SymmetricBuffer<T>),
    Sim(SimSymmetricBuffer<T>),
}

impl<T> std::fmt::Debug for SymmetricTensor<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SymmetricTensor::Gpu(b) => b.fmt(f),
            SymmetricTensor::Sim(b) => b.fmt(f),
        }
    }
}

impl<T: BufferElement + Copy + Default + 'static> SymmetricTensor<T> {
    /// Elements per rank.
    pub fn len(&self) -> usize {
        match self {
            SymmetricTensor::Gpu(b) => b.len(),
            SymmetricTensor::Sim(b) => b.len(),
        }
    }

    /// Whether it has no elements.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Local rank `i`'s window, as a kernel parameter.
    pub fn window(&self, i: usize) -> Result<Window, RanksError> {
        match self {
            SymmetricTensor::Gpu(b) => Window::for_rank(b, i).ok_or_else(|| {
                RanksError::mismatch("local rank", i, "the buffer has no window there")
            }),
            SymmetricTensor::Sim(b) => Ok(b.window(i)),
        }
    }

    /// Copies `data` to the start of local rank `i`'s part (synchronously; on simulated
    /// ranks, once every rank's earlier launches have run).
    pub fn copy_from_host(&self, i: usize, data: &[T]) -> Result<(), RanksError> {
        self.check_len("elements written", data.len())?;
        match self {
            SymmetricTensor::Gpu(b) => b.copy_from_host(i, data)?,
            SymmetricTensor::Sim(b) => b.copy_from_host(i, data)?,
        }
        Ok(())
    }

    /// The first `count` elements of local rank `i`'s part.
    pub fn to_vec(&self, i: usize, count: usize) -> Result<Vec<T>, RanksError> {
        self.check_len("elements read", count)?;
        let mut out = vec![T::default(); count];
        match self {
            SymmetricTensor::Gpu(b) => b.copy_to_host(i, &mut out)?,
            SymmetricTensor::Sim(b) => b.copy_to_host(i, &mut out)?,
        }
        Ok(out)
    }

    fn check_len(&self, dimension: &'static str, count: usize) -> Result<(), RanksError> {
        if count > self.len() {
            return Err(RanksError::mismatch(
                dimension,
                count,
                format!("the buffer holds {} per rank", self.len()),
            ));
        }
        Ok(())
    }

    /// Releases the buffer now (simulated buffers go with their world).
    pub fn close(self) -> Result<(), RanksError> {
        if let SymmetricTensor::Gpu(b) = self {
            b.close()?;
        }
        Ok(())
    }
}
