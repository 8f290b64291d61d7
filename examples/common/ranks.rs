//! The ranks the device-API module examples run on (`#[path]`-included by examples/moe.rs
//! and examples/m2n.rs): every GPU of this machine in one process, or simulated ranks.

use cudajit::nccl::sim::SimWorld;
use cudajit::nccl::{Communicator, DevComm, DevCommRequirements, LoadedNccl};

type Result<T> = std::result::Result<T, Box<dyn std::error::Error>>;

/// The ranks of this process: every GPU, or simulated ones.
pub enum Ranks {
    Gpu {
        comm: Communicator,
        dev_comm: DevComm,
    },
    Sim(SimWorld),
}

/// Whether to simulate: `CUDAJIT_BACKEND=sim`, or fewer than two GPUs.
pub fn simulate() -> bool {
    std::env::var("CUDAJIT_BACKEND").is_ok_and(|b| b == "sim")
        || cudajit::gpu_count().unwrap_or(0) < 2
}

impl Ranks {
    /// `SIM_RANKS` (default 4) simulated ranks when `simulate`, else every GPU, with a
    /// device communicator of `requirements`.
    pub fn new(simulate: bool, requirements: &DevCommRequirements) -> Result<Ranks> {
        let gpus = cudajit::gpu_count().unwrap_or(0);
        if simulate {
            let n = std::env::var("SIM_RANKS")
                .ok()
                .and_then(|v| v.parse().ok())
                .unwrap_or(4);
            println!("{n} simulated ranks on the CPU simulator ({gpus} GPU(s) here)");
            return Ok(Ranks::Sim(SimWorld::new(n)?));
        }
        if std::env::var_os("NCCL_NVLS_ENABLE").is_none() {
            // SAFETY: set before NCCL is loaded and before any other thread starts.
            unsafe { std::env::set_var("NCCL_NVLS_ENABLE", "0") };
        }
        let nccl = LoadedNccl::global()?;
        let comm = Communicator::init_all(&nccl, &(0..gpus).collect::<Vec<_>>())?;
        let dev_comm = comm.create_dev_comm(requirements)?;
        println!("{gpus} GPUs in one process");
        Ok(Ranks::Gpu { comm, dev_comm })
    }
}
