//! The same transforms as a user without M2N writes them: NCCL host collectives on
//! symmetric buffers and local copies, the way `torch.distributed` code does it
//! (`all_to_all` then `torch.cat` along dimension 1, `all_gather` then `torch.cat`,
//! `all_gather_into_tensor`, `reduce_scatter_tensor`); and `cuMemcpyPeerAsync` of the
//! bytes each rank needs from its peers, the bandwidth bound. Even shards only (every
//! dimension a multiple of the ranks), as those collectives need.

use std::sync::Arc;

use cudajit::bf16;
use cudajit::cudarc::driver::CudaStream;
use cudajit::nccl::device::{self as nccl, Window};
use cudajit::nccl::{Communicator, Direction, ReduceOp, SymmetricBuffer, Transfer};
use cudajit::prelude::*;

use super::peer::memcpy_peer_async;
use super::BenchResult;

/// `out[i][q * cols + j] = blocks[q][i][j]` for `nblocks` blocks of `[rows × cols]`: the
/// column blocks an all-gather or all-to-all delivered, concatenated along dimension 1
/// (`torch.cat(blocks, dim=1)`). 16-byte vectors when `cols` is a multiple of 8.
#[kernel]
pub fn concat_column_blocks(blocks: Window, out: Window, rows: u64, cols: u64, nblocks: u64) {
    let (rows, cols, nblocks) = (rows as usize, cols as usize, nblocks as usize);
    let total = rows * cols * nblocks;
    let from = unsafe { slice_at::<bf16>(nccl::local_address(blocks, 0), total) };
    let to = unsafe { slice_at_mut::<bf16>(nccl::local_address(out, 0), total) };
    if cols % 8 == 0 {
        let vectors = cols / 8;
        let mut v = global_index();
        while v < total / 8 {
            let q = v / (rows * vectors);
            let i = (v / vectors) % rows;
            let j = v % vectors;
            let (a, b, c, d, e, f, g, h) = vload8(from, v);
            vstore8(
                to,
                i * vectors * nblocks + q * vectors + j,
                (a, b, c, d, e, f, g, h),
            );
            v += grid_stride();
        }
    } else {
        let mut k = global_index();
        while k < total {
            let q = k / (rows * cols);
            let i = (k / cols) % rows;
            let j = k % cols;
            to[i * cols * nblocks + q * cols + j] = from[k];
            k += grid_stride();
        }
    }
}

/// One rank's baseline buffers: its source shard, what the collective delivers, the
/// result.
pub struct Buffers {
    pub source: SymmetricBuffer<bf16>,
    pub received: SymmetricBuffer<bf16>,
    pub out: SymmetricBuffer<bf16>,
}

impl Buffers {
    pub fn new(comm: &Communicator, elements: usize) -> BenchResult<Buffers> {
        Ok(Buffers {
            source: comm.alloc_symmetric(elements)?,
            received: comm.alloc_symmetric(elements)?,
            out: comm.alloc_symmetric(elements)?,
        })
    }
}

fn concat(
    b: &Buffers,
    streams: &[Arc<CudaStream>],
    rows: usize,
    cols: usize,
    n: usize,
) -> BenchResult<()> {
    for (i, s) in streams.iter().enumerate() {
        let blocks = Window::for_rank(&b.received, i).ok_or("no window")?;
        let out = Window::for_rank(&b.out, i).ok_or("no window")?;
        let config = LaunchConfig::for_elements((rows * cols * n / 8).max(1));
        concat_column_blocks::launch(s, config, blocks, out, rows as u64, cols as u64, n as u64)?;
    }
    Ok(())
}

/// A transform as a user without M2N writes it, on `[rows × cols]` over every rank (even
/// shards).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Baseline {
    /// `Shard(1)` → `Shard(0)`: grouped `ncclSend`/`ncclRecv` (an all-to-all: rank `r`'s
    /// rows of `p`'s block are contiguous in its shard), then the column blocks
    /// concatenated.
    AllToAllColumnsToRows,
    /// `Shard(1)` → `Replicate`: `ncclAllGather` of the column shards, then concatenated.
    AllGatherColumns,
    /// `Shard(0)` → `Replicate`: `ncclAllGather` straight into the result.
    AllGatherRows,
    /// `Partial(sum)` → `Shard(0)`: `ncclReduceScatter` straight into the result.
    ReduceScatterRows,
}

impl Baseline {
    /// Its name in the results.
    pub fn name(self) -> &'static str {
        match self {
            Baseline::AllToAllColumnsToRows => "ncclSend/Recv all-to-all + cat",
            Baseline::AllGatherColumns => "ncclAllGather + cat",
            Baseline::AllGatherRows => "ncclAllGather",
            Baseline::ReduceScatterRows => "ncclReduceScatter",
        }
    }

    /// Launches it on every rank, from `b.source` into `b.out`.
    pub fn run(
        self,
        comm: &Communicator,
        streams: &[Arc<CudaStream>],
        b: &Buffers,
        rows: usize,
        cols: usize,
    ) -> BenchResult<()> {
        let n = streams.len();
        let shard = rows * cols / n;
        match self {
            Baseline::AllToAllColumnsToRows => {
                all_to_all(comm, streams, b, shard / n)?;
                concat(b, streams, rows / n, cols / n, n)
            }
            Baseline::AllGatherColumns => {
                comm.all_gather(b.source.at(0), b.received.at(0), shard, streams)?;
                concat(b, streams, rows, cols / n, n)
            }
            Baseline::AllGatherRows => {
                comm.all_gather(b.source.at(0), b.out.at(0), shard, streams)?;
                Ok(())
            }
            Baseline::ReduceScatterRows => {
                let op = ReduceOp::Sum;
                comm.reduce_scatter(b.source.at(0), b.out.at(0), shard, op, streams)?;
                Ok(())
            }
        }
    }
}

/// Every rank sends block `p` (of `block` elements) of its source to rank `p` and receives
/// rank `p`'s into block `p` of its received buffer, in one group.
fn all_to_all(
    comm: &Communicator,
    streams: &[Arc<CudaStream>],
    b: &Buffers,
    block: usize,
) -> BenchResult<()> {
    let n = streams.len();
    let mut transfers = Vec::with_capacity(n);
    for i in 0..n {
        let send = b.source.device_ptr(i).ok_or("no buffer")?;
        let recv = b.received.device_ptr(i).ok_or("no buffer")?;
        let mut mine = Vec::with_capacity(2 * n);
        for p in 0..n {
            let at = (p * block * 2) as u64;
            for (direction, base) in [(Direction::Send, send), (Direction::Receive, recv)] {
                mine.push(Transfer {
                    direction,
                    peer: p as i32,
                    address: base + at,
                    count: block,
                });
            }
        }
        transfers.push(mine);
    }
    // SAFETY: every address lies in a live symmetric buffer of its rank holding `n`
    // blocks, kept until the streams synchronise.
    unsafe { comm.send_recv::<bf16>(&transfers, streams)? };
    Ok(())
}

/// The bound: each rank copies `bytes[i]` from its peers' source buffers (an equal part
/// from each) into its received buffer with `cuMemcpyPeerAsync`.
pub fn memcpy_peer(streams: &[Arc<CudaStream>], b: &Buffers, bytes: &[usize]) -> BenchResult<()> {
    let n = streams.len();
    for (i, stream) in streams.iter().enumerate() {
        let part = bytes[i] / (n - 1);
        for (k, peer) in (0..n).filter(|&p| p != i).enumerate() {
            let src = b.source.device_ptr(peer).ok_or("no peer buffer")?;
            let dst = b.received.device_ptr(i).ok_or("no buffer")? + (k * part) as u64;
            // SAFETY: both ranges lie in live symmetric buffers (the parts are at most a
            // peer's shard, `n - 1` of them at most the received buffer), kept until the
            // streams synchronise.
            unsafe { memcpy_peer_async(stream, dst, streams[peer].context(), src, part)? };
        }
    }
    Ok(())
}
