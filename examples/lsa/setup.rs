//! What the LSA examples share: a communicator over the GPUs of this process (all visible
//! GPUs in one process, or the one GPU of this rank under `cudajit-nccl-launch`/torchrun),
//! a symmetric buffer, and the device communicator with one LSA barrier per CTA.

use std::error::Error;
use std::sync::Arc;

use cudajit::nccl::device::{DevComm, Window};
use cudajit::nccl::{Communicator, Nccl, SymmetricBuffer};
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
    // One LSA barrier per CTA: what the launch check of the kernels asks for.
    let dev = comm.create_dev_comm(&cudajit::nccl::device::requirements_for(&config(ctas, 1)))?;
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
