//! Multi-process jobs, one process per GPU: where this process is in its job, from the
//! variables of torchrun, Open MPI, MPICH, Slurm or PMIx ([`BootstrapEnv`]), the exchange
//! of NCCL's unique id over TCP ([`exchange`]) and a small launcher ([`Launcher`], also
//! the `cudajit-nccl-launch` binary), on one host or several. With the `mpi` feature,
//! `bootstrap::mpi` exchanges the id over an MPI communicator instead
//! (`Communicator::from_mpi`).

mod env;
mod exchange;
mod launcher;
#[cfg(feature = "mpi")]
pub mod mpi;
mod nodelist;

use std::sync::Arc;

pub use env::{
    BootstrapEnv, JobLauncher, BOOTSTRAP_PORT_VAR, DEFAULT_MASTER_ADDR, DEFAULT_MASTER_PORT,
};
pub use exchange::{exchange, Exchanged};
pub use launcher::{free_port, Job, Launcher};
pub use nodelist::first_host as slurm_first_host;

use crate::error::Result;
use crate::loaded::LoadedNccl;
pub use crate::safe::host_name;
use crate::safe::{Communicator, InitRank};

impl Communicator {
    /// Joins the job the environment describes (torchrun's `RANK`, `WORLD_SIZE`,
    /// `LOCAL_RANK`, `MASTER_ADDR`, `MASTER_PORT`, or Open MPI's, MPICH's, Slurm's or
    /// PMIx's variables: see [`BootstrapEnv::from_env`]): exchanges the unique id over TCP
    /// and initialises this rank on its local GPU. Every step is bounded by `CUDAJIT_NCCL_TIMEOUT_S`
    /// (default 120 s).
    pub fn from_env(nccl: &Arc<LoadedNccl>) -> Result<Communicator> {
        let env = BootstrapEnv::from_env(&crate::discover::SearchEnv::from_process())?;
        Communicator::from_bootstrap(nccl, &env)
    }

    /// Like [`Communicator::from_env`] with an explicit environment.
    pub fn from_bootstrap(nccl: &Arc<LoadedNccl>, env: &BootstrapEnv) -> Result<Communicator> {
        let timeout = crate::safe::communicator_timeout()?;
        let Exchanged { unique_id, peers } =
            exchange(env, env.local_rank, || nccl.unique_id(), timeout)?;
        Communicator::init_rank(
            nccl,
            InitRank {
                unique_id,
                rank: env.rank as i32,
                n_ranks: env.world_size as i32,
                device: env.local_rank,
                timeout,
                peers: Some(peers),
            },
        )
    }
}
