//! Host-initiated collectives (`ncclAllReduce`, `ncclAllGather`, `ncclReduceScatter`) on
//! symmetric buffers, issued for every local rank inside one NCCL group, each on its own
//! stream.

use std::ffi::c_void;
use std::sync::Arc;

use cudarc::driver::CudaStream;

use crate::error::{NcclError, Result};
use crate::safe::buffer::SymmetricBuffer;
use crate::safe::communicator::Communicator;
use crate::sys::{
    cudaStream_t, ncclAvg, ncclBfloat16, ncclComm_t, ncclDataType_t, ncclFloat32, ncclInt32,
    ncclMax, ncclMin, ncclProd, ncclRedOp_t, ncclResult_t, ncclSum,
};

/// An element type NCCL's collectives understand (`ncclDataType_t`).
pub trait NcclType: Copy + 'static {
    /// Its `ncclDataType_t`.
    const DATA_TYPE: ncclDataType_t;
    /// A short name for reports: `f32`, `bf16`, `i32`.
    const NAME: &'static str;
}

impl NcclType for f32 {
    const DATA_TYPE: ncclDataType_t = ncclFloat32;
    const NAME: &'static str = "f32";
}

impl NcclType for i32 {
    const DATA_TYPE: ncclDataType_t = ncclInt32;
    const NAME: &'static str = "i32";
}

impl NcclType for half::bf16 {
    const DATA_TYPE: ncclDataType_t = ncclBfloat16;
    const NAME: &'static str = "bf16";
}

/// A reduction (`ncclRedOp_t`, built-in operations only).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ReduceOp {
    /// `ncclSum`.
    Sum,
    /// `ncclProd`.
    Prod,
    /// `ncclMax`.
    Max,
    /// `ncclMin`.
    Min,
    /// `ncclAvg`.
    Avg,
}

impl ReduceOp {
    fn to_c(self) -> ncclRedOp_t {
        match self {
            ReduceOp::Sum => ncclSum,
            ReduceOp::Prod => ncclProd,
            ReduceOp::Max => ncclMax,
            ReduceOp::Min => ncclMin,
            ReduceOp::Avg => ncclAvg,
        }
    }
}

/// Whether a [`Transfer`] sends or receives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    /// `ncclSend`.
    Send,
    /// `ncclRecv`.
    Receive,
}

/// One `ncclSend` or `ncclRecv` of [`Communicator::send_recv`]: `count` elements at device
/// address `address`, to or from rank `peer`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Transfer {
    /// Send or receive.
    pub direction: Direction,
    /// The other rank, in the communicator.
    pub peer: i32,
    /// The device address of the first element.
    pub address: u64,
    /// Elements.
    pub count: usize,
}

/// Elements of a [`SymmetricBuffer`] from `offset` on, on every local rank: the send or
/// receive side of a collective ([`SymmetricBuffer::at`]).
#[derive(Debug, Clone, Copy)]
pub struct BufferAt<'b, T> {
    pub(crate) buffer: &'b SymmetricBuffer<T>,
    pub(crate) offset: usize,
}

impl<T> SymmetricBuffer<T> {
    /// This buffer from element `offset` on, as a collective's send or receive side.
    pub fn at(&self, offset: usize) -> BufferAt<'_, T> {
        BufferAt {
            buffer: self,
            offset,
        }
    }
}

impl<T> BufferAt<'_, T> {
    /// The device address of local rank `i`'s element `offset`, if `count` elements from
    /// there fit the buffer.
    fn address(&self, i: usize, count: usize, what: &str) -> Result<u64> {
        let fits = self
            .offset
            .checked_add(count)
            .is_some_and(|end| end <= self.buffer.len());
        if !fits {
            return Err(NcclError::InvalidArgument(format!(
                "{what}: {count} elements at offset {} exceed the buffer's {}",
                self.offset,
                self.buffer.len()
            )));
        }
        let base = self
            .buffer
            .device_ptr(i)
            .ok_or_else(|| NcclError::InvalidArgument(format!("{what}: no local rank {i}")))?;
        Ok(base + (self.offset * std::mem::size_of::<T>()) as u64)
    }
}

impl Communicator {
    /// `ncclAllReduce` of `count` elements from `send` into `recv` on every local rank
    /// (one group), rank `i` on `streams[i]`. Asynchronous: completion is the streams'.
    /// `send` and `recv` may be the same elements (in place).
    pub fn all_reduce<T: NcclType>(
        &self,
        send: BufferAt<'_, T>,
        recv: BufferAt<'_, T>,
        count: usize,
        op: ReduceOp,
        streams: &[Arc<CudaStream>],
    ) -> Result<()> {
        let all_reduce = self.shared.nccl.sys().all_reduce;
        self.collective(
            "ncclAllReduce",
            (&send, count),
            (&recv, count),
            streams,
            |s, r, comm, stream| {
                // SAFETY: as in `collective`, with `count` elements on each side.
                unsafe { all_reduce(s, r, count, T::DATA_TYPE, op.to_c(), comm, stream) }
            },
        )
    }

    /// `ncclAllGather`: `count` elements from `send` on every rank, concatenated in rank
    /// order into `recv` (`n_ranks * count` elements) on every local rank.
    pub fn all_gather<T: NcclType>(
        &self,
        send: BufferAt<'_, T>,
        recv: BufferAt<'_, T>,
        count: usize,
        streams: &[Arc<CudaStream>],
    ) -> Result<()> {
        let total = self.every_rank(count)?;
        let all_gather = self.shared.nccl.sys().all_gather;
        self.collective(
            "ncclAllGather",
            (&send, count),
            (&recv, total),
            streams,
            |s, r, comm, stream| {
                // SAFETY: as in `collective`, with `recv` holding `n_ranks * count`.
                unsafe { all_gather(s, r, count, T::DATA_TYPE, comm, stream) }
            },
        )
    }

    /// `ncclReduceScatter`: the `n_ranks * count` elements of `send` reduced over every
    /// rank with `op`, block `r` of `count` elements into `recv` of rank `r`, on every
    /// local rank (one group), rank `i` on `streams[i]`. Asynchronous: completion is the
    /// streams'.
    pub fn reduce_scatter<T: NcclType>(
        &self,
        send: BufferAt<'_, T>,
        recv: BufferAt<'_, T>,
        count: usize,
        op: ReduceOp,
        streams: &[Arc<CudaStream>],
    ) -> Result<()> {
        let total = self.every_rank(count)?;
        let reduce_scatter = self.shared.nccl.sys().reduce_scatter;
        self.collective(
            "ncclReduceScatter",
            (&send, total),
            (&recv, count),
            streams,
            |s, r, comm, stream| {
                // SAFETY: as in `collective`, with `send` holding `n_ranks * count`.
                unsafe { reduce_scatter(s, r, count, T::DATA_TYPE, op.to_c(), comm, stream) }
            },
        )
    }

    /// `count` elements for every rank of the communicator: `n_ranks * count`.
    fn every_rank(&self, count: usize) -> Result<usize> {
        count
            .checked_mul(self.n_ranks() as usize)
            .ok_or_else(|| NcclError::InvalidArgument(format!("{count} elements overflow")))
    }

    /// One collective on every local rank in one group: `send` and `recv` (each a side and
    /// its element count) checked against the buffers and `streams` (collective_args),
    /// then, under the communicator's lock, `call(send, recv, comm, stream)` for each local
    /// rank `i` with its addresses, communicator and `streams[i]`. `function` names the
    /// NCCL call in errors.
    fn collective<T>(
        &self,
        function: &'static str,
        (send, send_count): (&BufferAt<'_, T>, usize),
        (recv, recv_count): (&BufferAt<'_, T>, usize),
        streams: &[Arc<CudaStream>],
        call: impl Fn(*const c_void, *mut c_void, ncclComm_t, cudaStream_t) -> ncclResult_t,
    ) -> Result<()> {
        let (sends, recvs) = self.collective_args(send, send_count, recv, recv_count, streams)?;
        let shared = &self.shared;
        let _op = shared.lock()?;
        // `call` relies on this: `sends[i]`/`recvs[i]` hold the checked counts of elements
        // of `T` on rank i's device (collective_args) and live as long as the borrowed
        // buffers, which the caller keeps until the stream has run the collective;
        // `streams[i]` is a stream of rank i's context.
        shared.grouped(function, |i, r| {
            call(
                sends[i] as *const c_void,
                recvs[i] as *mut c_void,
                r.comm,
                streams[i].cu_stream() as cudaStream_t,
            )
        })
    }

    /// Point-to-point transfers of every local rank in one group (`ncclSend`/`ncclRecv`
    /// between `ncclGroupStart` and `ncclGroupEnd`, as an all-to-all-v is built):
    /// `transfers[i]` are local rank `i`'s, on `streams[i]`. Asynchronous: completion is
    /// the streams'. Peers are ranks of the communicator.
    ///
    /// # Safety
    /// Each transfer's `address` is device memory of its rank's GPU holding `count`
    /// elements of `T` (written by a receive), alive and not otherwise accessed until its
    /// stream has run the group.
    pub unsafe fn send_recv<T: NcclType>(
        &self,
        transfers: &[Vec<Transfer>],
        streams: &[Arc<CudaStream>],
    ) -> Result<()> {
        let ranks = self.local_ranks();
        if transfers.len() != ranks.len() || streams.len() != ranks.len() {
            return Err(NcclError::InvalidArgument(format!(
                "{} transfer lists and {} streams for {} local ranks",
                transfers.len(),
                streams.len(),
                ranks.len()
            )));
        }
        let n = self.n_ranks();
        if let Some(t) = transfers
            .iter()
            .flatten()
            .find(|t| t.peer < 0 || t.peer >= n)
        {
            return Err(NcclError::InvalidArgument(format!(
                "a transfer with rank {} of a communicator of {n}",
                t.peer
            )));
        }
        let shared = &self.shared;
        let sys = shared.nccl.sys();
        let _op = shared.lock()?;
        shared.grouped("ncclSend/ncclRecv", |i, r| {
            for t in &transfers[i] {
                // SAFETY: the caller's contract for each address; `streams[i]` is rank
                // i's stream.
                let code = unsafe {
                    let stream = streams[i].cu_stream() as _;
                    match t.direction {
                        Direction::Send => (sys.send)(
                            t.address as *const _,
                            t.count,
                            T::DATA_TYPE,
                            t.peer,
                            r.comm,
                            stream,
                        ),
                        Direction::Receive => (sys.recv)(
                            t.address as *mut _,
                            t.count,
                            T::DATA_TYPE,
                            t.peer,
                            r.comm,
                            stream,
                        ),
                    }
                };
                if code != crate::sys::ncclSuccess && code != crate::sys::ncclInProgress {
                    return code;
                }
            }
            crate::sys::ncclSuccess
        })
    }

    /// Checks buffers and streams against the local ranks; the per-rank addresses.
    fn collective_args<T>(
        &self,
        send: &BufferAt<'_, T>,
        send_count: usize,
        recv: &BufferAt<'_, T>,
        recv_count: usize,
        streams: &[Arc<CudaStream>],
    ) -> Result<(Vec<u64>, Vec<u64>)> {
        let ranks = self.local_ranks();
        for side in [send, recv] {
            if !side.buffer.belongs_to(&self.shared) {
                return Err(NcclError::InvalidArgument(
                    "a buffer of another communicator".into(),
                ));
            }
        }
        if streams.len() != ranks.len() {
            return Err(NcclError::InvalidArgument(format!(
                "{} streams for {} local ranks",
                streams.len(),
                ranks.len()
            )));
        }
        let mut sends = Vec::with_capacity(ranks.len());
        let mut recvs = Vec::with_capacity(ranks.len());
        for (i, r) in ranks.iter().enumerate() {
            let ordinal = streams[i].context().ordinal();
            if ordinal != r.device {
                return Err(NcclError::InvalidArgument(format!(
                    "stream {i} is on GPU {ordinal}, rank {} on GPU {}",
                    r.rank, r.device
                )));
            }
            sends.push(send.address(i, send_count, "send")?);
            recvs.push(recv.address(i, recv_count, "receive")?);
        }
        Ok((sends, recvs))
    }
}
