//! The ranks a reshard spans, on GPUs (a communicator and its device
//! communicator) or simulated ([`SimWorld`]), and the symmetric buffers they share: what
//! a reshard needs of either, behind one type.

use cudajit_nccl::{Communicator, SymmetricBuffer};

use super::error::M2nError;
use cudajit::{BufferElement, Stream};
use cudajit_nccl_device::{DevComm, Window};
use cudajit_nccl_sim::{SimSymmetricBuffer, SimWorld};

/// The ranks of this process that take part, and how they reach each other.
#[derive(Clone, Copy, Debug)]
pub enum M2nRanks<'a> {
    /// GPUs: the local ranks of `comm`, whose device communicator `dev_comm` has an LSA
    /// barrier per CTA of the reshard kernels (`M2nConfig::requirements`).
    Gpu {
        comm: &'a Communicator,
        dev_comm: &'a cudajit_nccl::DevComm,
    },
    /// Every rank of a simulated world of one node.
    Sim(&'a SimWorld),
}

impl<'a> M2nRanks<'a> {
    /// The ranks of the communicator (the LSA team).
    pub fn nranks(&self) -> usize {
        match self {
            M2nRanks::Gpu { comm, .. } => comm.n_ranks() as usize,
            M2nRanks::Sim(world) => world.nranks(),
        }
    }

    /// The ranks this process drives.
    pub fn local_ranks(&self) -> usize {
        match self {
            M2nRanks::Gpu { comm, .. } => comm.local_ranks().len(),
            M2nRanks::Sim(world) => world.nranks(),
        }
    }

    /// The communicator rank of local rank `i`.
    pub fn rank(&self, i: usize) -> usize {
        match self {
            M2nRanks::Gpu { comm, .. } => comm.local_ranks()[i].rank as usize,
            M2nRanks::Sim(_) => i,
        }
    }

    /// The stream of local rank `i` the reshard kernels launch on by default: its CUDA
    /// context's default stream, or its simulated rank's stream.
    pub fn stream(&self, i: usize) -> Result<Stream, M2nError> {
        self.check_local(i)?;
        match self {
            M2nRanks::Gpu { comm, .. } => comm
                .context(i)
                .map(|c| Stream::from_cuda(c.default_stream()))
                .ok_or_else(|| M2nError::mismatch("local rank", i, "it has no CUDA context")),
            M2nRanks::Sim(world) => Ok(Stream::from_sim(world.stream(i).clone())),
        }
    }

    /// Shards are read by LSA (loads from peers' memory), so every rank of the
    /// communicator must be in one LSA team; and the device communicator must have an LSA
    /// barrier per CTA.
    pub(crate) fn check(&self, ctas: u32) -> Result<(), M2nError> {
        match self {
            M2nRanks::Gpu { comm, dev_comm } => {
                let lsa = dev_comm.lsa_size(0).unwrap_or(0) as usize;
                if lsa != self.nranks() {
                    return Err(M2nError::mismatch(
                        "LSA team size",
                        lsa,
                        format!("every one of the communicator's {} ranks must reach the others by load/store (one NVLink domain)", comm.n_ranks()),
                    ));
                }
                let barriers = dev_comm.lsa_barrier_count();
                if barriers < ctas {
                    return Err(M2nError::mismatch(
                        "lsa_barrier_count",
                        barriers as usize,
                        format!("the reshard kernels run {ctas} CTAs with an LSA barrier each: create the device communicator with M2nConfig::requirements()"),
                    ));
                }
            }
            M2nRanks::Sim(world) => {
                // The same rule as on GPUs, under the same name: a simulated node is
                // an LSA team.
                if world.nodes() != 1 {
                    return Err(M2nError::mismatch(
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

    pub(crate) fn check_local(&self, i: usize) -> Result<(), M2nError> {
        if i >= self.local_ranks() {
            return Err(M2nError::mismatch(
                "local rank",
                i,
                format!("this process drives {} rank(s)", self.local_ranks()),
            ));
        }
        Ok(())
    }

    /// The device communicator of local rank `i`, as a kernel parameter.
    pub(crate) fn dev_comm(&self, i: usize) -> Result<DevComm, M2nError> {
        match self {
            M2nRanks::Gpu { dev_comm, .. } => DevComm::for_rank(dev_comm, i)
                .map_err(|e| M2nError::Launch(cudajit::Error::Backend(e.to_string()))),
            M2nRanks::Sim(world) => Ok(world.dev_comm(i)),
        }
    }

    /// `len` elements on every rank, each rank's part a window: NCCL's symmetric memory
    /// on GPUs (every rank of the communicator allocates together), a simulated window
    /// otherwise. What a caller registers around its source tensor for
    /// [`ReshardHandle::reshard_with_window`](super::ReshardHandle::reshard_with_window).
    pub fn alloc<T: BufferElement + Copy + Default + 'static>(
        &self,
        len: usize,
    ) -> Result<SymmetricTensor<T>, M2nError> {
        Ok(match self {
            M2nRanks::Gpu { comm, .. } => SymmetricTensor::Gpu(comm.alloc_symmetric::<T>(len)?),
            M2nRanks::Sim(world) => SymmetricTensor::Sim(world.alloc_symmetric::<T>(len)?),
        })
    }

    /// Whether `stream` is local rank `i`'s (a launch on another rank's GPU or simulated
    /// rank would meet the wrong peers at its barriers).
    pub(crate) fn check_stream(&self, i: usize, stream: &Stream) -> Result<(), M2nError> {
        let right = match self {
            M2nRanks::Gpu { comm, .. } => stream
                .cuda()
                .is_some_and(|s| s.context().ordinal() == comm.local_ranks()[i].device),
            // A simulated rank's stream names its member of the world's group.
            M2nRanks::Sim(world) => stream
                .sim()
                .and_then(|s| s.group())
                .is_some_and(|(group, member)| member == i && group.members() == world.nranks()),
        };
        if right {
            Ok(())
        } else {
            Err(M2nError::mismatch(
                "stream",
                i,
                "the stream must be local rank i's (ReshardHandle::stream(i))",
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
    pub fn window(&self, i: usize) -> Result<Window, M2nError> {
        match self {
            SymmetricTensor::Gpu(b) => Window::for_rank(b, i).ok_or_else(|| {
                M2nError::mismatch("local rank", i, "the buffer has no window there")
            }),
            SymmetricTensor::Sim(b) => Ok(b.window(i)),
        }
    }

    /// Copies `data` to the start of local rank `i`'s part (synchronously; on simulated
    /// ranks, once every rank's earlier launches have run).
    pub fn copy_from_host(&self, i: usize, data: &[T]) -> Result<(), M2nError> {
        self.check_len("elements written", data.len())?;
        match self {
            SymmetricTensor::Gpu(b) => b.copy_from_host(i, data)?,
            SymmetricTensor::Sim(b) => b.copy_from_host(i, data)?,
        }
        Ok(())
    }

    /// The first `count` elements of local rank `i`'s part.
    pub fn to_vec(&self, i: usize, count: usize) -> Result<Vec<T>, M2nError> {
        self.check_len("elements read", count)?;
        let mut out = vec![T::default(); count];
        match self {
            SymmetricTensor::Gpu(b) => b.copy_to_host(i, &mut out)?,
            SymmetricTensor::Sim(b) => b.copy_to_host(i, &mut out)?,
        }
        Ok(out)
    }

    fn check_len(&self, dimension: &'static str, count: usize) -> Result<(), M2nError> {
        if count > self.len() {
            return Err(M2nError::mismatch(
                dimension,
                count,
                format!("the buffer holds {} per rank", self.len()),
            ));
        }
        Ok(())
    }

    /// Releases the buffer now (simulated buffers go with their world).
    pub fn close(self) -> Result<(), M2nError> {
        if let SymmetricTensor::Gpu(b) = self {
            b.close()?;
        }
        Ok(())
    }
}
