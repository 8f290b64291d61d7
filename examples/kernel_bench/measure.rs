//! The measuring environment: the device, the nvcc module, CUDA-event timing of both
//! implementations interleaved with an L2 flush before every run, the medians, and the
//! device-to-device copy bandwidth the kernels are compared with.

use std::cell::RefCell;
use std::sync::Arc;

use cudajit::{Arch, CudaContext, CudaSlice, CudaStream};
use cudarc::driver::sys::CUdevice_attribute;
use cudarc::driver::{CudaFunction, CudaModule};

use super::cases::reduce_grid;
use super::kernels::reduce_sum;
use super::options::Options;
use super::Result;

/// Events that record time (cudarc's default flags disable timing).
const TIMED: cudarc::driver::sys::CUevent_flags =
    cudarc::driver::sys::CUevent_flags::CU_EVENT_DEFAULT;

/// Bytes read before every timed run so that no kernel finds its data in L2 (50 MB on an
/// H100/H200) left there by the run before. Read, not written (as a memset would): a
/// written flush leaves dirty lines whose write-back would land inside the timed run.
pub(crate) const L2_FLUSH_BYTES: usize = 256 << 20;

/// The implementation a launch goes to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Side {
    Cudajit,
    Nvcc,
}

impl Side {
    pub(crate) fn label(self) -> &'static str {
        match self {
            Side::Cudajit => "cudajit",
            Side::Nvcc => "nvcc",
        }
    }
}

pub(crate) struct Env {
    pub(crate) context: Arc<CudaContext>,
    pub(crate) stream: Arc<CudaStream>,
    pub(crate) arch: Arch,
    pub(crate) sms: u32,
    pub(crate) nvcc: Option<Arc<CudaModule>>,
    pub(crate) runs: usize,
    pub(crate) warmup: usize,
    /// The measured transpose's rows and columns.
    pub(crate) transpose: (usize, usize),
    /// The transpose's tile side and block rows (one of `TRANSPOSE_TILES`).
    pub(crate) transpose_tile: (u32, u32),
    /// The L2 flush: a buffer read by `reduce_sum`, and its per-block sums.
    flush: RefCell<(CudaSlice<f32>, CudaSlice<f32>)>,
}

/// Medians (and spread) of one kernel's timed runs, milliseconds.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Stats {
    pub(crate) median: f64,
    pub(crate) min: f64,
    pub(crate) max: f64,
}

#[derive(Clone, Copy, Debug)]
pub(crate) struct Times {
    pub(crate) cudajit: Stats,
    pub(crate) nvcc: Option<Stats>,
}

impl Env {
    pub(crate) fn new(context: Arc<CudaContext>, options: &Options) -> Result<Env> {
        let stream = context.default_stream();
        let (major, minor) = context.compute_capability()?;
        let sms =
            context.attribute(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)?;
        let nvcc = match &options.cubin {
            Some(path) => {
                let bytes = std::fs::read(path).map_err(|e| {
                    format!(
                        "reading the nvcc cubin {}: {e} (build it with `nvcc -O3 -arch=sm_90 \
                         -cubin -o kernels.cubin benches/cuda/kernels.cu`)",
                        path.display()
                    )
                })?;
                let module = context
                    .load_module(cudarc::nvrtc::Ptx::from_binary(bytes))
                    .map_err(|e| format!("loading the nvcc cubin {}: {e}", path.display()))?;
                Some(module)
            }
            None => None,
        };
        let flush = (
            stream.alloc_zeros::<f32>(L2_FLUSH_BYTES / 4)?,
            stream.alloc_zeros::<f32>(sms.max(1) as usize * 8)?,
        );
        Ok(Env {
            stream,
            arch: Arch::new(major as u32, minor as u32),
            sms: sms.max(1) as u32,
            nvcc,
            runs: options.runs,
            warmup: options.warmup,
            transpose: options.transpose,
            transpose_tile: options.transpose_tile,
            flush: RefCell::new(flush),
            context,
        })
    }

    /// The implementations this run compares.
    pub(crate) fn sides(&self) -> Vec<Side> {
        match self.nvcc {
            Some(_) => vec![Side::Cudajit, Side::Nvcc],
            None => vec![Side::Cudajit],
        }
    }

    /// The nvcc kernel `name`, when an nvcc cubin was given.
    pub(crate) fn nvcc_function(&self, name: &str) -> Result<Option<CudaFunction>> {
        match &self.nvcc {
            Some(module) => Ok(Some(module.load_function(name).map_err(|e| {
                format!("the nvcc cubin has no kernel `{name}` ({e}); rebuild it from benches/cuda/kernels.cu")
            })?)),
            None => Ok(None),
        }
    }

    /// Times `launch` on every side: `warmup` untimed runs each, then `runs` timed runs
    /// interleaved (cudajit, nvcc, cudajit, ..) so that clock and thermal drift hit both
    /// alike, each after an L2 flush, each between two CUDA events.
    pub(crate) fn time(&self, mut launch: impl FnMut(Side) -> Result<()>) -> Result<Times> {
        let sides = self.sides();
        for _ in 0..self.warmup {
            for &side in &sides {
                launch(side)?;
            }
        }
        let mut samples: Vec<Vec<f64>> = vec![Vec::with_capacity(self.runs); sides.len()];
        for _ in 0..self.runs {
            for (k, &side) in sides.iter().enumerate() {
                self.flush_l2()?;
                let start = self.stream.record_event(Some(TIMED))?;
                launch(side)?;
                let end = self.stream.record_event(Some(TIMED))?;
                end.synchronize()?;
                samples[k].push(f64::from(start.elapsed_ms(&end)?));
            }
        }
        let stats = |mut v: Vec<f64>| {
            v.sort_by(f64::total_cmp);
            Stats {
                median: median(&v),
                min: v[0],
                max: v[v.len() - 1],
            }
        };
        let mut samples = samples.into_iter();
        let cudajit = stats(samples.next().unwrap_or_default());
        let nvcc = samples.next().map(stats);
        Ok(Times { cudajit, nvcc })
    }

    /// Replaces L2's contents with clean lines of the flush buffer (see `L2_FLUSH_BYTES`).
    fn flush_l2(&self) -> Result<()> {
        let mut flush = self.flush.borrow_mut();
        let (buffer, sums) = &mut *flush;
        reduce_sum::launch(&self.stream, reduce_grid(self.sms), &*buffer, sums)?;
        Ok(())
    }

    /// Device-to-device copy bandwidth, GB/s (bytes read + written), with the method of
    /// `time`.
    pub(crate) fn copy_bandwidth(&self, bytes: usize) -> Result<f64> {
        let src = self.stream.alloc_zeros::<u8>(bytes)?;
        let mut dst = self.stream.alloc_zeros::<u8>(bytes)?;
        let mut samples = Vec::new();
        for run in 0..self.warmup + self.runs {
            self.flush_l2()?;
            let start = self.stream.record_event(Some(TIMED))?;
            self.stream.memcpy_dtod(&src, &mut dst)?;
            let end = self.stream.record_event(Some(TIMED))?;
            end.synchronize()?;
            if run >= self.warmup {
                samples.push(f64::from(start.elapsed_ms(&end)?));
            }
        }
        samples.sort_by(f64::total_cmp);
        Ok(2.0 * bytes as f64 / median(&samples) / 1e6)
    }
}

fn median(sorted: &[f64]) -> f64 {
    match sorted.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => sorted[n / 2],
        n => 0.5 * (sorted[n / 2 - 1] + sorted[n / 2]),
    }
}
