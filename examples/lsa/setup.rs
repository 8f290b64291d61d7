//! What the LSA examples share: a communicator over the GPUs of this process (all visible
//! GPUs in one process, or the one GPU of this rank under `cudajit-nccl-launch`/torchrun),
//! a symmetric buffer, and the device communicator with one LSA barrier per CTA.

use std::error::Error;
use std::sync::Arc;

use cudajit::nccl::device::{DevComm, Window};
use cudajit::nccl::{Communicator, DevCommRequirements, Nccl, SymmetricBuffer};
use cudajit::{CudaStream, LaunchConfig};

pub type Result<T> = std::result::Result<T, Box<dyn Error>>;

/// The GPUs of this process, communicating.
pub struct World {
    pub comm: Communicator,
    pub dev: cudajit::nccl::DevComm,
    pub streams: Vec<Arc<CudaStream>>,
}

/// `None` (after saying why) when this machine cannot run the example.
pub fn world(ctas: u32) -> Result<Option<World>> {
    // NVLink multicast must stay off on shared machines.
    if std::env::var_os("NCCL_NVLS_ENABLE").is_none() {
        // SAFETY: set before any thread starts and before NCCL reads it.
        unsafe { std::env::set_var("NCCL_NVLS_ENABLE", "0") };
    }
    let nccl = Nccl::global()?;
    let comm = if std::env::var_os("RANK").is_some() {
        Communicator::from_env(&nccl)?
    } else {
        let gpus = match cudajit::gpu_count() {
            Ok(n) => n,
            Err(e) => {
                println!("skipped: {e}");
                return Ok(None);
            }
        };
        if gpus < 2 {
            println!("skipped: the LSA examples need at least 2 GPUs, this machine has {gpus}");
            return Ok(None);
        }
        Communicator::init_all(&nccl, &(0..gpus).collect::<Vec<_>>())?
    };
    let dev = comm.create_dev_comm(&DevCommRequirements::lsa_barriers(ctas))?;
    let streams = (0..comm.local_ranks().len())
        .map(|i| comm.context(i).map(|c| c.default_stream()))
        .collect::<Option<Vec<_>>>()
        .ok_or("a local rank without a CUDA context")?;
    Ok(Some(World { comm, dev, streams }))
}

impl World {
    /// The local ranks of this process.
    pub fn local(&self) -> usize {
        self.streams.len()
    }

    /// World rank of local rank `i`.
    pub fn rank(&self, i: usize) -> i32 {
        self.comm.local_ranks()[i].rank
    }

    /// Kernel parameters of local rank `i`.
    pub fn params<T: Copy + 'static>(
        &self,
        buffer: &SymmetricBuffer<T>,
        i: usize,
    ) -> Result<(DevComm, Window)> {
        let comm = DevComm::for_rank(&self.dev, i)?;
        let window = Window::for_rank(buffer, i).ok_or("the buffer has no window")?;
        Ok((comm, window))
    }

    /// Runs `launch` for every local rank before waiting on any (the barriers span GPUs),
    /// then waits for all.
    pub fn launch_all(
        &self,
        mut launch: impl FnMut(usize, &Arc<CudaStream>) -> Result<()>,
    ) -> Result<()> {
        for (i, stream) in self.streams.iter().enumerate() {
            launch(i, stream)?;
        }
        for stream in &self.streams {
            stream.synchronize()?;
        }
        Ok(())
    }

    pub fn close(self) -> Result<()> {
        self.dev.close()?;
        self.comm.close()?;
        Ok(())
    }
}

/// One CTA per LSA barrier: `ctas` blocks of `threads`.
pub fn config(ctas: u32, threads: u32) -> LaunchConfig {
    LaunchConfig::new(ctas, threads)
}

/// One checked run of a collective: every rank's input, the window layout, and the output
/// each rank must end with.
pub struct Case<'a, T> {
    /// What runs, for the report (e.g. "two-shot").
    pub name: &'a str,
    /// Input elements per rank, at byte 0 of the window.
    pub input_len: usize,
    /// Output elements per rank, at `out_offset` (the input rounded up to 4096 bytes).
    pub output_len: usize,
    /// Element `k` of world rank `rank`'s input.
    pub input: &'a dyn Fn(i32, usize) -> T,
    /// Element `k` of world rank `rank`'s output.
    pub expected: &'a dyn Fn(i32, usize) -> T,
}

/// Where the output starts: the input's bytes rounded up to 4096 (window offsets must).
pub fn out_offset<T>(input_len: usize) -> usize {
    (input_len * std::mem::size_of::<T>()).div_ceil(4096) * 4096
}

/// Fills every rank's window with its input, runs `launch(local rank, stream, comm,
/// window, out_offset)` on every rank, and compares every rank's output with
/// `case.expected`.
pub fn check_case<T>(
    world: &World,
    case: &Case<'_, T>,
    mut launch: impl FnMut(usize, &Arc<CudaStream>, DevComm, Window, usize) -> Result<()>,
) -> Result<()>
where
    T: cudajit::DeviceScalar + PartialEq + std::fmt::Debug,
{
    let elem = std::mem::size_of::<T>();
    let out_offset = out_offset::<T>(case.input_len);
    let len = out_offset / elem + case.output_len;
    let buffer = world.comm.alloc_symmetric::<T>(len)?;
    for i in 0..world.local() {
        let data: Vec<T> = (0..case.input_len)
            .map(|k| (case.input)(world.rank(i), k))
            .collect();
        buffer.copy_from_host(i, &data)?;
    }
    world.launch_all(|i, stream| {
        let (comm, window) = world.params(&buffer, i)?;
        launch(i, stream, comm, window, out_offset)
    })?;
    let mut all = vec![(case.input)(0, 0); len];
    for i in 0..world.local() {
        buffer.copy_to_host(i, &mut all)?;
        let rank = world.rank(i);
        let got = &all[out_offset / elem..];
        let wrong: Vec<usize> = (0..case.output_len)
            .filter(|&k| got[k] != (case.expected)(rank, k))
            .collect();
        if let Some(&k) = wrong.first() {
            return Err(format!(
                "{} on rank {rank}: {} of {} elements wrong, the first at {k}: {:?}, expected {:?}",
                case.name,
                wrong.len(),
                case.output_len,
                got[k],
                (case.expected)(rank, k)
            )
            .into());
        }
    }
    println!(
        "{:>12} bytes in {:>4} {:<10}: correct on {} local rank(s)",
        case.input_len * elem,
        cudajit::core::Scalar::rust_name(T::SCALAR),
        case.name,
        world.local()
    );
    buffer.close()?;
    Ok(())
}

/// Input sizes in bytes from 4 KB to `MAX_BYTES` (default `default_max`), by 4.
pub fn sizes(default_max: usize) -> Vec<usize> {
    let max: usize = std::env::var("MAX_BYTES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default_max);
    std::iter::successors(Some(4096usize), |b| Some(b * 4))
        .take_while(|&b| b <= max)
        .collect()
}
