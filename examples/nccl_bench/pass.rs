//! One pass: an element type, a window, a dev comm, the contenders.

use std::sync::Arc;

use cudajit::nccl::{DevComm, DevCommRequirements, ReduceOp, SymmetricBuffer};
use cudajit::CudaStream;
use cudarc::driver::{LaunchConfig, PushKernelArg};

use super::peer::memcpy_peer_async;
use super::{
    cudajit_contenders, input_value, BenchResult, Collective, Contender, Elem, Options, Setup,
    Size, POISON,
};

/// The resources of one element type's run.
pub(crate) struct Pass<'s, T> {
    pub(crate) setup: &'s Setup,
    /// The symmetric window: input at 0, output at `Size::output_offset`.
    pub(crate) buffer: SymmetricBuffer<T>,
    /// Its device communicator (`lsaBarrierCount` = `--ctas`), when the device API runs.
    pub(crate) dev: Option<DevComm>,
    /// Every rank's `ncclDevComm` as a kernel argument (`cudarc` copies the kernel's
    /// declared parameter size, checked against the host layout when the cubin loads).
    pub(crate) dev_args: Vec<cudajit::nccl::device::DevComm>,
    pub(crate) max_ctas: u32,
    pub(crate) threads: u32,
    pub(crate) thread_bytes: usize,
}

impl<T: Elem> Pass<'_, T> {
    /// Rank `i`'s `ncclDevComm`, ready to pass by value.
    pub(crate) fn dev_comm_arg(&self, i: usize) -> &cudajit::nccl::device::DevComm {
        &self.dev_args[i]
    }

    /// The same grid on every rank: enough CTAs for one unrolled 4 x 16-byte step per
    /// thread, at most `--ctas` (= the dev comm's barriers).
    pub(crate) fn config(&self, bytes: usize) -> LaunchConfig {
        let per_cta = self.threads as usize * self.thread_bytes;
        let ctas = bytes.div_ceil(per_cta).clamp(1, self.max_ctas as usize) as u32;
        LaunchConfig {
            grid_dim: (ctas, 1, 1),
            block_dim: (self.threads, 1, 1),
            shared_mem_bytes: 0,
        }
    }

    pub(crate) fn launch_reference(
        &self,
        kernel: &str,
        i: usize,
        stream: &Arc<CudaStream>,
        count: usize,
        bytes: usize,
    ) -> BenchResult<()> {
        let f = self
            .setup
            .reference
            .as_ref()
            .and_then(|r| r[i].get(kernel))
            .ok_or_else(|| format!("no reference kernel {kernel}"))?;
        let window = self.buffer.window(i).ok_or("no window")? as u64;
        let offset = 0usize;
        let mut b = stream.launch_builder(f);
        b.arg(self.dev_comm_arg(i))
            .arg(&window)
            .arg(&offset)
            .arg(&count);
        // SAFETY: the parameters match the kernel's (ncclDevComm checked at load, a
        // window handle, two size_t); the window holds input and output for `count`
        // elements (the pass sizes it for the largest size); gridDim <= lsaBarrierCount.
        unsafe { b.launch(self.config(bytes)) }?;
        Ok(())
    }

    pub(crate) fn contenders(&self) -> Vec<Contender<'_>> {
        let comm = &self.setup.comm;
        let elem = std::mem::size_of::<T>();
        let mut out = vec![
            Contender::group("ncclAllReduce", Collective::AllReduce, move |streams, s| {
                let recv = self.buffer.at(s.output_offset / elem);
                comm.all_reduce(self.buffer.at(0), recv, s.count, ReduceOp::Sum, streams)?;
                Ok(())
            }),
            Contender::group("ncclAllGather", Collective::AllGather, move |streams, s| {
                let recv = self.buffer.at(s.output_offset / elem);
                comm.all_gather(self.buffer.at(0), recv, s.count, streams)?;
                Ok(())
            }),
            Contender::per_rank(
                "cuMemcpyPeerAsync",
                Collective::PeerRead,
                move |i, stream, s| {
                    let peer = (i + 1) % self.setup.n();
                    let src = self.buffer.device_ptr(peer).ok_or("no peer buffer")?;
                    let dst =
                        self.buffer.device_ptr(i).ok_or("no buffer")? + s.output_offset as u64;
                    let peer_ctx = self.setup.context(peer);
                    // SAFETY: both ranges lie in live window allocations of `s.bytes` (input)
                    // and `s.bytes` from the output offset.
                    unsafe { memcpy_peer_async(stream, dst, peer_ctx, src, s.bytes)? };
                    Ok(())
                },
            ),
        ];
        if self.dev.is_some() && self.setup.reference.is_some() {
            let t = T::NAME;
            for (label, shot) in [("reference one-shot", "one"), ("reference two-shot", "two")] {
                let kernel = format!("lsa_all_reduce_{shot}_shot_{t}");
                out.push(Contender::per_rank(
                    label,
                    Collective::AllReduce,
                    move |i, st, s| self.launch_reference(&kernel, i, st, s.count, s.bytes),
                ));
            }
            out.push(Contender::per_rank(
                "reference all-gather",
                Collective::AllGather,
                move |i, st, s| {
                    self.launch_reference("lsa_all_gather_bytes", i, st, s.bytes, s.bytes)
                },
            ));
            out.push(Contender::per_rank(
                "reference peer read",
                Collective::PeerRead,
                move |i, st, s| {
                    self.launch_reference("lsa_peer_read_bytes", i, st, s.bytes, s.bytes)
                },
            ));
        }
        match cudajit_contenders::contenders(self) {
            Ok(extra) => out.extend(extra),
            Err(e) => eprintln!("cudajit contenders skipped: {e}"),
        }
        out
    }

    /// Writes every rank's input (`count` elements).
    pub(crate) fn write_inputs(&self, count: usize) -> BenchResult<()> {
        for i in 0..self.setup.n() {
            let data: Vec<T> = (0..count).map(|k| input_value(i, k)).collect();
            self.buffer.copy_from_host(i, &data)?;
        }
        Ok(())
    }

    /// Fills every rank's output region with the poison pattern.
    pub(crate) fn poison_outputs(&self, size: &Size) -> BenchResult<()> {
        let n = self.setup.n();
        let bytes = size.bytes * n;
        for i in 0..n {
            let ptr = self.buffer.device_ptr(i).ok_or("no buffer")? + size.output_offset as u64;
            self.setup.context(i).bind_to_thread()?;
            // SAFETY: the output region (n * bytes) lies inside the window allocation.
            unsafe {
                cudarc::driver::result::memset_d8_async(
                    ptr,
                    POISON,
                    bytes,
                    self.setup.streams[i].cu_stream(),
                )
            }?;
        }
        self.setup.synchronize()
    }

    /// `len` elements of rank `i`'s window from byte `offset`.
    pub(crate) fn read(&self, i: usize, offset: usize, len: usize) -> BenchResult<Vec<T>> {
        let mut out = vec![T::from_i32(0); len];
        let ptr = self.buffer.device_ptr(i).ok_or("no buffer")? + offset as u64;
        self.setup.context(i).bind_to_thread()?;
        // SAFETY: the range lies inside the window allocation; `out` has `len` elements.
        unsafe { cudarc::driver::result::memcpy_dtoh_sync(&mut out, ptr) }?;
        Ok(out)
    }

    /// Checks the outputs of `collective` for `size`; the first mismatch, if any.
    pub(crate) fn check(&self, collective: Collective, size: &Size) -> BenchResult<Option<String>> {
        let n = self.setup.n();
        let expected_at = |i: usize, k: usize| -> T {
            match collective {
                Collective::AllReduce => T::sum((0..n).map(|r| input_value::<T>(r, k))),
                Collective::AllGather => input_value((k / size.count) % n, k % size.count),
                Collective::PeerRead => input_value((i + 1) % n, k),
            }
        };
        let len = match collective {
            Collective::AllGather => size.count * n,
            _ => size.count,
        };
        for i in 0..n {
            let got = self.read(i, size.output_offset, len)?;
            if let Some(k) = (0..len).find(|&k| got[k] != expected_at(i, k)) {
                return Ok(Some(format!(
                    "rank {i} element {k}: got {:?}, expected {:?}",
                    got[k],
                    expected_at(i, k)
                )));
            }
        }
        Ok(None)
    }
}

/// Allocates the window for `max_count` elements (input + an all-gather output) and
/// creates the dev comm when the reference kernels will run.
pub(crate) fn open_pass<'s, T: Elem>(
    setup: &'s Setup,
    opts: &Options,
    max_count: usize,
) -> BenchResult<Pass<'s, T>> {
    let n = setup.n();
    let size = Size::of::<T>(max_count);
    let total = (size.output_offset + n * size.bytes).div_ceil(std::mem::size_of::<T>());
    let buffer = setup.comm.alloc_symmetric::<T>(total)?;
    let (dev, dev_args) = if setup.reference.is_some() {
        let dev = setup
            .comm
            .create_dev_comm(&DevCommRequirements::lsa_barriers(opts.max_ctas))?;
        for i in 0..n {
            if dev.lsa_size(i) != Some(n as i32) {
                return Err(format!(
                    "rank {i}: LSA team of {:?} ranks, not all {n}: the reference kernels need \
                     one NVLink domain",
                    dev.lsa_size(i)
                )
                .into());
            }
        }
        let args = (0..n)
            .map(|i| cudajit::nccl::device::DevComm::for_rank(&dev, i))
            .collect::<Result<Vec<_>, _>>()?;
        (Some(dev), args)
    } else {
        (None, Vec::new())
    };
    Ok(Pass {
        setup,
        buffer,
        dev,
        dev_args,
        max_ctas: opts.max_ctas,
        thread_bytes: opts
            .thread_bytes
            .unwrap_or(if T::SCALAR == cudajit::core::Scalar::BF16 {
                16
            } else {
                64
            }),
        threads: opts.threads,
    })
}
