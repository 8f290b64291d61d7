//! The baseline MoE stacks use without device-initiated communication, as PyTorch's
//! all-to-all token dispatcher does: a permute kernel gathers each (token, expert) pair's
//! row into a send buffer ordered by destination rank and expert, grouped
//! `ncclSend`/`ncclRecv` move each rank's segment, and on the way back the experts'
//! rows return the same way and an un-permute kernel sums each token's rows with its
//! weights. The plan (the permutation and the counts) is computed once per routing on
//! the host, outside the timing (PyTorch also exchanges the counts and copies them to the
//! host every step: the baseline here is spared that).

use std::sync::Arc;

use cudajit::bf16;
use cudajit::cudarc::driver::{CudaSlice, CudaStream, DevicePtr};
use cudajit::nccl::{Communicator, Direction, Transfer};
use cudajit::prelude::*;

use super::BenchResult;

/// Row `i` of `out` is row `order[i]` of `x` (16-byte vectors: `hidden % 8 == 0`).
#[kernel]
pub fn permute_rows(x: &[bf16], order: &[u32], out: &mut [bf16], hidden: u64) {
    let vectors = hidden as usize / 8;
    let mut v = global_index();
    while v < order.len() * vectors {
        let row = v / vectors;
        let from = order[row] as usize * vectors + v % vectors;
        let (a, b, c, d, e, f, g, h) = vload8(x, from);
        vstore8(out, v, (a, b, c, d, e, f, g, h));
        v += grid_stride();
    }
}

/// `out[t] = sum over j with rows[t * top_k + j] >= 0 of weights[..] * y[row]`, in `f32`
/// fused multiply-adds in `j` order, rounded to `bf16` once (as cudajit's combine).
#[kernel]
pub fn unpermute_weighted(
    y: &[bf16],
    rows: &[i32],
    weights: &[f32],
    out: &mut [bf16],
    top_k: u64,
    hidden: u64,
) {
    let k = top_k as usize;
    let vectors = hidden as usize / 8;
    let tokens = rows.len() / k;
    let mut v = global_index();
    while v < tokens * vectors {
        let t = v / vectors;
        let mut acc = [0.0f32; 8];
        let mut j = 0;
        while j < k {
            let row = rows[t * k + j];
            if row >= 0 {
                let w = weights[t * k + j];
                let (a, b, c, d, e, f, g, h) = vload8(y, row as usize * vectors + v % vectors);
                acc[0] = w.mul_add(a.to_f32(), acc[0]);
                acc[1] = w.mul_add(b.to_f32(), acc[1]);
                acc[2] = w.mul_add(c.to_f32(), acc[2]);
                acc[3] = w.mul_add(d.to_f32(), acc[3]);
                acc[4] = w.mul_add(e.to_f32(), acc[4]);
                acc[5] = w.mul_add(f.to_f32(), acc[5]);
                acc[6] = w.mul_add(g.to_f32(), acc[6]);
                acc[7] = w.mul_add(h.to_f32(), acc[7]);
            }
            j += 1;
        }
        let o = (
            bf16::from_f32(acc[0]),
            bf16::from_f32(acc[1]),
            bf16::from_f32(acc[2]),
            bf16::from_f32(acc[3]),
            bf16::from_f32(acc[4]),
            bf16::from_f32(acc[5]),
            bf16::from_f32(acc[6]),
            bf16::from_f32(acc[7]),
        );
        vstore8(out, v, (o.0, o.1, o.2, o.3, o.4, o.5, o.6, o.7));
        v += grid_stride();
    }
}

/// One rank's plan: which token each send row holds, where each (token, expert) pair's
/// row is, and the rows per peer each way.
pub struct Plan {
    /// Send row `i` holds token `order[i]`; rows are grouped by destination rank.
    pub order: Vec<u32>,
    /// `[tokens × top-k]`: the send (and returned) row of each pair, `-1` for none.
    pub rows: Vec<i32>,
    /// Rows to each rank, in rank order (the send buffer's segments).
    pub send_counts: Vec<usize>,
    /// Rows from each rank (the receive buffer's segments).
    pub recv_counts: Vec<usize>,
}

/// The plans of every rank for `routings[r]` (`[tokens × top-k]` experts), each
/// (token, expert) pair one row, sorted by expert.
pub fn plans(routings: &[Vec<i32>], top_k: usize, experts: usize) -> Vec<Plan> {
    let ranks = routings.len();
    let per_rank = experts / ranks;
    let mut plans: Vec<Plan> = routings
        .iter()
        .map(|idx| {
            let mut pairs: Vec<(usize, usize)> = idx
                .iter()
                .enumerate()
                .filter(|(_, &e)| e >= 0)
                .map(|(p, &e)| (e as usize, p))
                .collect();
            pairs.sort_unstable();
            let mut rows = vec![-1; idx.len()];
            let mut send_counts = vec![0; ranks];
            let order = pairs
                .iter()
                .enumerate()
                .map(|(row, &(e, p))| {
                    rows[p] = row as i32;
                    send_counts[e / per_rank] += 1;
                    (p / top_k) as u32
                })
                .collect();
            Plan {
                order,
                rows,
                send_counts,
                recv_counts: vec![0; ranks],
            }
        })
        .collect();
    for r in 0..ranks {
        for s in 0..ranks {
            plans[r].recv_counts[s] = plans[s].send_counts[r];
        }
    }
    plans
}

/// The device buffers of one rank.
pub struct Buffers {
    pub x: CudaSlice<bf16>,
    pub order: CudaSlice<u32>,
    pub rows: CudaSlice<i32>,
    pub weights: CudaSlice<f32>,
    pub send: CudaSlice<bf16>,
    pub recv: CudaSlice<bf16>,
    pub returned: CudaSlice<bf16>,
    pub out: CudaSlice<bf16>,
}

impl Buffers {
    pub fn new(
        stream: &Arc<CudaStream>,
        plan: &Plan,
        x: &[bf16],
        weights: &[f32],
        hidden: usize,
    ) -> BenchResult<Buffers> {
        let sent = plan.order.len();
        let received: usize = plan.recv_counts.iter().sum();
        Ok(Buffers {
            x: stream.clone_htod(x)?,
            order: stream.clone_htod(&plan.order)?,
            rows: stream.clone_htod(&plan.rows)?,
            weights: stream.clone_htod(weights)?,
            send: stream.alloc_zeros(sent.max(1) * hidden)?,
            recv: stream.alloc_zeros(received.max(1) * hidden)?,
            returned: stream.alloc_zeros(sent.max(1) * hidden)?,
            out: stream.alloc_zeros(x.len())?,
        })
    }
}

/// The segments of `counts` rows of `hidden` elements at `base`, one transfer per peer
/// with rows.
fn segments(direction: Direction, base: u64, counts: &[usize], hidden: usize) -> Vec<Transfer> {
    let mut offset = 0;
    let mut transfers = Vec::new();
    for (peer, &rows) in counts.iter().enumerate() {
        if rows > 0 {
            transfers.push(Transfer {
                direction,
                peer: peer as i32,
                address: base + (offset * hidden * 2) as u64,
                count: rows * hidden,
            });
        }
        offset += rows;
    }
    transfers
}

/// Dispatch: permute, then every rank's segments to their experts' ranks.
pub fn dispatch(
    comm: &Communicator,
    streams: &[Arc<CudaStream>],
    plans: &[Plan],
    buffers: &mut [Buffers],
    hidden: usize,
) -> BenchResult<()> {
    let mut transfers = Vec::new();
    for (r, (b, s)) in buffers.iter_mut().zip(streams).enumerate() {
        let rows = plans[r].order.len();
        let config = LaunchConfig::for_elements((rows * hidden / 8).max(1));
        permute_rows::launch(s, config, &b.x, &b.order, &mut b.send, hidden as u64)?;
        let (send, _) = b.send.device_ptr(s);
        let (recv, _) = b.recv.device_ptr(s);
        let mut mine = segments(Direction::Send, send, &plans[r].send_counts, hidden);
        mine.extend(segments(
            Direction::Receive,
            recv,
            &plans[r].recv_counts,
            hidden,
        ));
        transfers.push(mine);
    }
    // SAFETY: every address is a live allocation of its rank's stream holding the
    // segment (the counts are the buffers' own), kept until the streams synchronise.
    unsafe { comm.send_recv::<bf16>(&transfers, streams)? };
    Ok(())
}

/// Combine: every rank's received rows (the experts' outputs, here the rows themselves)
/// back to their tokens' ranks, then the weighted un-permute.
pub fn combine(
    comm: &Communicator,
    streams: &[Arc<CudaStream>],
    plans: &[Plan],
    buffers: &mut [Buffers],
    hidden: usize,
    top_k: usize,
) -> BenchResult<()> {
    let mut transfers = Vec::new();
    for (r, (b, s)) in buffers.iter().zip(streams).enumerate() {
        let (recv, _) = b.recv.device_ptr(s);
        let (returned, _) = b.returned.device_ptr(s);
        let mut mine = segments(Direction::Send, recv, &plans[r].recv_counts, hidden);
        mine.extend(segments(
            Direction::Receive,
            returned,
            &plans[r].send_counts,
            hidden,
        ));
        transfers.push(mine);
    }
    // SAFETY: as in `dispatch`.
    unsafe { comm.send_recv::<bf16>(&transfers, streams)? };
    for (b, s) in buffers.iter_mut().zip(streams) {
        let config = LaunchConfig::for_elements((b.out.len() / 8).max(1));
        unpermute_weighted::launch(
            s,
            config,
            &b.returned,
            &b.rows,
            &b.weights,
            &mut b.out,
            top_k as u64,
            hidden as u64,
        )?;
    }
    Ok(())
}
