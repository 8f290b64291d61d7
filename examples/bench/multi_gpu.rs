//! What the benchmarks over every GPU of one machine share (`#[path]`-included): the
//! setting NCCL needs before it loads, knobs from the environment, where results go, every
//! rank's stream, and median timing over them. (`peer.rs`: their bandwidth bound.)

use std::path::PathBuf;
use std::sync::Arc;

use cudajit::cudarc::driver::CudaStream;
use cudajit::nccl::Communicator;
use cudajit::Stream;

pub type Result<T> = std::result::Result<T, Box<dyn std::error::Error>>;

/// Sets `NCCL_NVLS_ENABLE=0` unless the user set it: NVLink multicast stays off on shared
/// machines. Call before NCCL is loaded and before any other thread starts.
pub fn disable_nvls() {
    if std::env::var_os("NCCL_NVLS_ENABLE").is_none() {
        // SAFETY: the caller's contract: no other thread reads the environment yet.
        unsafe { std::env::set_var("NCCL_NVLS_ENABLE", "0") };
    }
}

/// The environment variable `name` as a number, or `default` when unset or not one.
pub fn env_usize(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// Where results are written: `$OUT`, or the working directory.
pub fn out_dir() -> PathBuf {
    std::env::var_os("OUT")
        .map(PathBuf::from)
        .unwrap_or_else(|| ".".into())
}

/// The default stream of each of `comm`'s local ranks, as cudarc's and as cudajit's.
pub fn default_streams(comm: &Communicator) -> Result<(Vec<Arc<CudaStream>>, Vec<Stream>)> {
    let cuda: Vec<Arc<CudaStream>> = (0..comm.local_ranks().len())
        .map(|r| {
            comm.context(r)
                .map(|c| c.default_stream())
                .ok_or("a rank without a context")
        })
        .collect::<std::result::Result<_, _>>()?;
    let streams = cuda.iter().cloned().map(Stream::from_cuda).collect();
    Ok((cuda, streams))
}

/// Median microseconds of `op` (which launches on every rank), timed by events on every
/// rank's stream (the slowest rank's), after `warmup` runs.
pub fn time(
    streams: &[Stream],
    warmup: usize,
    iters: usize,
    mut op: impl FnMut() -> Result<()>,
) -> Result<f64> {
    for _ in 0..warmup {
        op()?;
    }
    for s in streams {
        s.synchronize()?;
    }
    let mut samples = Vec::with_capacity(iters);
    for _ in 0..iters {
        let starts = streams
            .iter()
            .map(Stream::record_event)
            .collect::<std::result::Result<Vec<_>, _>>()?;
        op()?;
        let ends = streams
            .iter()
            .map(Stream::record_event)
            .collect::<std::result::Result<Vec<_>, _>>()?;
        let mut slowest = 0f64;
        for (start, end) in starts.iter().zip(&ends) {
            slowest = slowest.max(f64::from(start.elapsed_ms(end)?));
        }
        samples.push(slowest * 1e3);
    }
    samples.sort_by(f64::total_cmp);
    Ok(samples[samples.len() / 2])
}
