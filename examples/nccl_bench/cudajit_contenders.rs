//! cudajit's own contenders: the `#[kernel]`s of `examples/lsa/kernels.rs`, written in the
//! kernel language over `cudajit::nccl::device`, launched with the same grid as the
//! reference kernels and checked and timed the same way.

use cudajit::nccl::device::{DevComm, Window};

use super::lsa::{
    all_gather, all_reduce_one_shot, all_reduce_one_shot_bf16, all_reduce_two_shot,
    all_reduce_two_shot_bf16, all_reduce_two_shot_push, peer_read,
};
use super::{BenchResult, Collective, Contender, Elem, Pass};

/// The kernel parameters of every local rank.
fn params<T: Elem>(pass: &Pass<T>) -> BenchResult<Vec<(DevComm, Window)>> {
    (0..pass.setup.n())
        .map(|i| {
            let window = Window::for_rank(&pass.buffer, i).ok_or("no window")?;
            Ok((*pass.dev_comm_arg(i), window))
        })
        .collect()
}

/// The DSL all-reduce (one-shot and two-shot), all-gather and, for f32, peer read.
pub(super) fn contenders<'a, T>(pass: &'a Pass<T>) -> BenchResult<Vec<Contender<'a>>>
where
    T: Elem,
{
    if pass.dev.is_none() {
        return Ok(Vec::new());
    }
    let params = std::sync::Arc::new(params(pass)?);
    let config = move |bytes: usize| {
        let c = pass.config(bytes);
        cudajit::LaunchConfig::new(c.grid_dim.0, c.block_dim.0)
    };
    // bf16 sums as the reference does: 16-byte vectors of 8, in f32.
    let bf16 = T::SCALAR == cudajit::core::Scalar::BF16;
    let mut out = Vec::new();
    let p = params.clone();
    out.push(Contender::per_rank(
        "cudajit one-shot",
        Collective::AllReduce,
        move |i, stream, s| {
            let (comm, window) = p[i];
            let (c, n, o) = (config(s.bytes), s.count, s.output_offset);
            if bf16 {
                all_reduce_one_shot_bf16::launch(stream, c, comm, window, n, o)?;
            } else {
                all_reduce_one_shot::launch::<T>(stream, c, comm, window, n, o)?;
            }
            Ok(())
        },
    ));
    let p = params.clone();
    out.push(Contender::per_rank(
        "cudajit two-shot",
        Collective::AllReduce,
        move |i, stream, s| {
            let (comm, window) = p[i];
            let (c, n, o) = (config(s.bytes), s.count, s.output_offset);
            if bf16 {
                all_reduce_two_shot_bf16::launch(stream, c, comm, window, n, o)?;
            } else {
                all_reduce_two_shot::launch::<T>(stream, c, comm, window, n, o)?;
            }
            Ok(())
        },
    ));
    if !bf16 {
        let p = params.clone();
        out.push(Contender::per_rank(
            "cudajit two-shot push",
            Collective::AllReduce,
            move |i, stream, s| {
                let (comm, window) = p[i];
                // Scratch past the output: the window holds `ranks` outputs' worth.
                let scratch = s.output_offset + s.bytes.div_ceil(16) * 16;
                let (c, n, o) = (config(s.bytes), s.count, s.output_offset);
                all_reduce_two_shot_push::launch::<T>(stream, c, comm, window, n, o, scratch)?;
                Ok(())
            },
        ));
    }
    let p = params.clone();
    out.push(Contender::per_rank(
        "cudajit all-gather",
        Collective::AllGather,
        move |i, stream, s| {
            let (comm, window) = p[i];
            all_gather::launch::<T>(
                stream,
                config(s.bytes),
                comm,
                window,
                s.count,
                s.bytes,
                s.output_offset,
            )?;
            Ok(())
        },
    ));
    if T::SCALAR == cudajit::core::Scalar::F32 {
        out.push(Contender::per_rank(
            "cudajit peer read",
            Collective::PeerRead,
            move |i, stream, s| {
                let (comm, window) = params[i];
                peer_read::launch(
                    stream,
                    config(s.bytes),
                    comm,
                    window,
                    s.count,
                    s.output_offset,
                )?;
                Ok(())
            },
        ));
    }
    Ok(out)
}
