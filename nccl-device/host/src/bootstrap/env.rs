//! Which process of which job this is, read from the variables of the launcher that
//! started it.
//!
//! The first launcher whose rank variable is set describes the job:
//!
//! | launcher | rank | world size | local rank | local world size | node |
//! | --- | --- | --- | --- | --- | --- |
//! | torchrun, `cudajit-nccl-launch` | `RANK` | `WORLD_SIZE` | `LOCAL_RANK` | `LOCAL_WORLD_SIZE` | `GROUP_RANK` |
//! | Open MPI (`mpirun`) | `OMPI_COMM_WORLD_RANK` | `OMPI_COMM_WORLD_SIZE` | `OMPI_COMM_WORLD_LOCAL_RANK` | `OMPI_COMM_WORLD_LOCAL_SIZE` | — |
//! | MPICH, Intel MPI (Hydra, PMI) | `PMI_RANK` | `PMI_SIZE` | `MPI_LOCALRANKID` | `MPI_LOCALNRANKS` | — |
//! | Slurm (`srun`) | `SLURM_PROCID` | `SLURM_NTASKS` | `SLURM_LOCALID` | `SLURM_NTASKS_PER_NODE` | `SLURM_NODEID` |
//! | PMIx | `PMIX_RANK` | — | — | — | — |
//!
//! torchrun's variables come first because they are an explicit choice (and what
//! `cudajit-nccl-launch` sets); the MPI launchers come before Slurm because `mpirun` runs
//! inside Slurm allocations, where `SLURM_*` describe the allocation, not the MPI task;
//! PMIx exports only a rank, so it comes last. Open MPI exports no host index
//! (`OMPI_COMM_WORLD_NODE_RANK` is a rank on the host, across jobs). What the chosen launcher does not give is
//! taken from torchrun's names (`WORLD_SIZE`, `LOCAL_RANK`, `LOCAL_WORLD_SIZE`), so a user
//! can complete it.
//!
//! Rank 0's address is `MASTER_ADDR`, else under Slurm the first host of
//! `SLURM_JOB_NODELIST`, else loopback — which only a job on one host may use, so a job
//! that spans hosts without it is an error. The port is `CUDAJIT_BOOTSTRAP_PORT`, else
//! `MASTER_PORT` (plus one under torchrun's elastic agent, whose own store already listens
//! on `MASTER_PORT` on rank 0's host), else 29500. A local rank that cannot be known (a
//! job that may span hosts and names none) is an error naming `LOCAL_RANK`, never a guess.

use std::fmt;

use super::nodelist;
use crate::discover::SearchEnv;
use crate::error::{NcclError, Result};

/// Default `MASTER_ADDR`: loopback (a single-host job).
pub const DEFAULT_MASTER_ADDR: &str = "127.0.0.1";
/// Default `MASTER_PORT` (torchrun's).
pub const DEFAULT_MASTER_PORT: u16 = 29500;
/// The variable that sets the bootstrap's port outright.
pub const BOOTSTRAP_PORT_VAR: &str = "CUDAJIT_BOOTSTRAP_PORT";

/// The launcher whose variables described the job.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum JobLauncher {
    /// torchrun, `cudajit-nccl-launch`, or the variables set by hand.
    Torchrun,
    /// Open MPI's `mpirun`.
    OpenMpi,
    /// MPICH's or Intel MPI's Hydra (`mpiexec`), through PMI.
    Mpich,
    /// Slurm's `srun`.
    Slurm,
    /// A PMIx launcher (`prterun`, `srun --mpi=pmix`).
    Pmix,
}

impl fmt::Display for JobLauncher {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            JobLauncher::Torchrun => "torchrun",
            JobLauncher::OpenMpi => "Open MPI",
            JobLauncher::Mpich => "MPICH (PMI)",
            JobLauncher::Slurm => "Slurm",
            JobLauncher::Pmix => "PMIx",
        })
    }
}

/// The variables one launcher sets (`None`: it has none for that).
struct LauncherVars {
    launcher: JobLauncher,
    rank: &'static str,
    world_size: Option<&'static str>,
    local_rank: Option<&'static str>,
    local_world_size: Option<&'static str>,
    node_rank: Option<&'static str>,
}

/// In precedence order (see the module's table).
const LAUNCHERS: [LauncherVars; 5] = [
    LauncherVars {
        launcher: JobLauncher::Torchrun,
        rank: "RANK",
        world_size: Some("WORLD_SIZE"),
        local_rank: Some("LOCAL_RANK"),
        local_world_size: Some("LOCAL_WORLD_SIZE"),
        node_rank: Some("GROUP_RANK"),
    },
    LauncherVars {
        launcher: JobLauncher::OpenMpi,
        rank: "OMPI_COMM_WORLD_RANK",
        world_size: Some("OMPI_COMM_WORLD_SIZE"),
        local_rank: Some("OMPI_COMM_WORLD_LOCAL_RANK"),
        local_world_size: Some("OMPI_COMM_WORLD_LOCAL_SIZE"),
        // Not OMPI_COMM_WORLD_NODE_RANK: that is the process's rank among every job's
        // processes on its host (1 for rank 1 of `mpirun -np 2` on one host), not the
        // host's index; Open MPI exports none.
        node_rank: None,
    },
    LauncherVars {
        launcher: JobLauncher::Mpich,
        rank: "PMI_RANK",
        world_size: Some("PMI_SIZE"),
        local_rank: Some("MPI_LOCALRANKID"),
        local_world_size: Some("MPI_LOCALNRANKS"),
        node_rank: None,
    },
    LauncherVars {
        launcher: JobLauncher::Slurm,
        rank: "SLURM_PROCID",
        world_size: Some("SLURM_NTASKS"),
        local_rank: Some("SLURM_LOCALID"),
        local_world_size: Some("SLURM_NTASKS_PER_NODE"),
        node_rank: Some("SLURM_NODEID"),
    },
    LauncherVars {
        launcher: JobLauncher::Pmix,
        rank: "PMIX_RANK",
        world_size: None,
        local_rank: None,
        local_world_size: None,
        node_rank: None,
    },
];

/// One process's place in a job.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BootstrapEnv {
    /// This process's rank, `0..world_size`.
    pub rank: usize,
    /// Processes in the job.
    pub world_size: usize,
    /// The GPU to use on this host.
    pub local_rank: usize,
    /// Processes on this host, when the launcher says.
    pub local_world_size: Option<usize>,
    /// This host's index in the job, when the launcher says.
    pub node_rank: Option<usize>,
    /// Where rank 0 listens.
    pub master_addr: String,
    /// The port rank 0 listens on.
    pub master_port: u16,
    /// Whose variables these were.
    pub launcher: JobLauncher,
}

impl BootstrapEnv {
    /// A job on one host, as `cudajit-nccl-launch` describes its ranks: `rank` on GPU
    /// `rank`, rank 0 on loopback at `port`.
    pub fn single_host(rank: usize, world_size: usize, port: u16) -> Self {
        BootstrapEnv {
            rank,
            world_size,
            local_rank: rank,
            local_world_size: Some(world_size),
            node_rank: Some(0),
            master_addr: DEFAULT_MASTER_ADDR.to_owned(),
            master_port: port,
            launcher: JobLauncher::Torchrun,
        }
    }

    /// Reads the variables of the launcher that started this process (see the module's
    /// table); a missing or malformed value is an error naming the variable and the fix.
    pub fn from_env(env: &SearchEnv) -> Result<Self> {
        let Some(vars) = LAUNCHERS.iter().find(|l| env.var_str(l.rank).is_some()) else {
            return Err(not_set("RANK", None));
        };
        let launcher = vars.launcher;
        let rank: usize = required(env, vars.rank, launcher)?;
        // What the launcher lacks, torchrun's names may supply.
        let field = |own: Option<&'static str>, torchrun: &'static str| -> Result<_> {
            match own.filter(|v| env.var_str(v).is_some()) {
                Some(var) => Ok(Some((var, number::<usize>(env, var)?))),
                None => Ok(number_opt(env, torchrun)?.map(|n| (torchrun, n))),
            }
        };
        let (_, world_size) = field(vars.world_size, "WORLD_SIZE")?
            .ok_or_else(|| not_set(vars.world_size.unwrap_or("WORLD_SIZE"), Some(launcher)))?;
        let local_rank = field(vars.local_rank, "LOCAL_RANK")?;
        let local_world_size = field(vars.local_world_size, "LOCAL_WORLD_SIZE")?;
        let node_rank = match vars.node_rank {
            Some(var) => number_opt(env, var)?,
            None => None,
        };
        if world_size == 0 || rank >= world_size {
            return Err(NcclError::Bootstrap(format!(
                "{}={rank} must be below {}={world_size}",
                vars.rank,
                vars.world_size.unwrap_or("WORLD_SIZE")
            )));
        }
        let master_addr = master_addr(env, launcher)?;
        let spans_hosts = local_world_size.is_some_and(|(_, n)| n < world_size)
            || node_rank.is_some_and(|n| n > 0);
        if spans_hosts && master_addr.is_none() {
            return Err(NcclError::Bootstrap(format!(
                "the job spans hosts ({launcher}: {world_size} ranks, not all on this host) \
                 and MASTER_ADDR is not set: set it to the address of rank 0's host"
            )));
        }
        // Without a local rank, the rank is the GPU only when every rank is on this host.
        let one_host = world_size == 1
            || local_world_size.is_some_and(|(_, n)| n == world_size)
            || (!spans_hosts
                && master_addr
                    .as_ref()
                    .is_none_or(|(_, addr)| is_loopback(addr)));
        let local_rank = match local_rank {
            Some((_, local)) => local,
            None if one_host => rank,
            None => {
                return Err(NcclError::Bootstrap(format!(
                    "{launcher} gives no local rank and the job may span hosts (rank 0 at {}): \
                     set LOCAL_RANK to this process's GPU on its host",
                    master_addr.as_ref().map_or("?", |(_, addr)| addr.as_str())
                )))
            }
        };
        if let Some((var, local_size)) = local_world_size {
            if local_rank >= local_size {
                return Err(NcclError::Bootstrap(format!(
                    "the local rank {local_rank} must be below {var}={local_size}"
                )));
            }
        }
        Ok(BootstrapEnv {
            rank,
            world_size,
            local_rank,
            local_world_size: local_world_size.map(|(_, n)| n),
            node_rank,
            master_addr: master_addr.map_or_else(|| DEFAULT_MASTER_ADDR.to_owned(), |(_, a)| a),
            master_port: master_port(env)?,
            launcher,
        })
    }

    /// The torchrun variables that describe this rank, for a launcher starting it.
    pub fn to_vars(&self) -> Vec<(&'static str, String)> {
        let mut vars = vec![
            ("RANK", self.rank.to_string()),
            ("WORLD_SIZE", self.world_size.to_string()),
            ("LOCAL_RANK", self.local_rank.to_string()),
            ("MASTER_ADDR", self.master_addr.clone()),
            ("MASTER_PORT", self.master_port.to_string()),
        ];
        if let Some(n) = self.local_world_size {
            vars.push(("LOCAL_WORLD_SIZE", n.to_string()));
        }
        if let Some(n) = self.node_rank {
            vars.push(("GROUP_RANK", n.to_string()));
        }
        vars
    }
}

/// The rank and world size a launcher's variables declare, without the checks
/// [`BootstrapEnv::from_env`] makes for the TCP exchange (an address for rank 0, a local
/// rank): what another bootstrap (MPI's) compares its own numbers with.
#[cfg_attr(not(feature = "mpi"), allow(dead_code))]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct DeclaredPlace {
    pub launcher: JobLauncher,
    pub rank_var: &'static str,
    pub rank: usize,
    /// The variable and its value, when the launcher (or torchrun's name) gives one.
    pub world_size: Option<(&'static str, usize)>,
}

/// The first launcher's rank and world size (the module's precedence), `None` when no
/// launcher's rank variable is set.
#[cfg_attr(not(feature = "mpi"), allow(dead_code))]
pub(super) fn declared_place(env: &SearchEnv) -> Result<Option<DeclaredPlace>> {
    let Some(vars) = LAUNCHERS.iter().find(|l| env.var_str(l.rank).is_some()) else {
        return Ok(None);
    };
    let world_var = vars
        .world_size
        .filter(|v| env.var_str(v).is_some())
        .unwrap_or("WORLD_SIZE");
    Ok(Some(DeclaredPlace {
        launcher: vars.launcher,
        rank_var: vars.rank,
        rank: number(env, vars.rank)?,
        world_size: number_opt(env, world_var)?.map(|n| (world_var, n)),
    }))
}

/// `MASTER_ADDR`, or under Slurm the first host of the job's node list, with the variable
/// it came from; `None` when neither says.
fn master_addr(env: &SearchEnv, launcher: JobLauncher) -> Result<Option<(&'static str, String)>> {
    if let Some(addr) = env.var_str("MASTER_ADDR").map(str::trim) {
        if addr.is_empty() {
            return Err(NcclError::Bootstrap(
                "MASTER_ADDR is empty: set it to the address of rank 0's host".into(),
            ));
        }
        return Ok(Some(("MASTER_ADDR", addr.to_owned())));
    }
    if launcher == JobLauncher::Slurm {
        for var in ["SLURM_JOB_NODELIST", "SLURM_NODELIST"] {
            if let Some(list) = env.var_str(var) {
                let host = nodelist::first_host(list).ok_or_else(|| {
                    NcclError::Bootstrap(format!(
                        "{var}={list:?} is not a host list Slurm writes; set MASTER_ADDR to \
                         the address of rank 0's host"
                    ))
                })?;
                return Ok(Some((var, host)));
            }
        }
    }
    Ok(None)
}

/// The bootstrap's port: `CUDAJIT_BOOTSTRAP_PORT`, else `MASTER_PORT` (the next port under
/// torchrun's elastic agent, whose store listens on `MASTER_PORT`), else the default.
fn master_port(env: &SearchEnv) -> Result<u16> {
    if let Some(port) = port_opt(env, BOOTSTRAP_PORT_VAR)? {
        return Ok(port);
    }
    let under_agent = env.var_str("TORCHELASTIC_RUN_ID").is_some();
    match port_opt(env, "MASTER_PORT")? {
        Some(port) if under_agent => port.checked_add(1).ok_or_else(|| {
            NcclError::Bootstrap(format!(
                "MASTER_PORT={port} leaves no port for cudajit beside torchrun's store: set \
                 {BOOTSTRAP_PORT_VAR}"
            ))
        }),
        Some(port) => Ok(port),
        None => Ok(DEFAULT_MASTER_PORT),
    }
}

/// Whether `addr` names this host's loopback interface.
fn is_loopback(addr: &str) -> bool {
    addr == "localhost"
        || addr
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

fn not_set(var: &str, launcher: Option<JobLauncher>) -> NcclError {
    let whose = launcher.map_or(String::new(), |l| format!(" ({l} did not set it)"));
    NcclError::Bootstrap(format!(
        "{var} is not set{whose}; launch with cudajit-nccl-launch, torchrun, mpirun or srun, \
         or set RANK, WORLD_SIZE (and LOCAL_RANK, MASTER_ADDR, MASTER_PORT) as torchrun does"
    ))
}

fn required<T: std::str::FromStr>(
    env: &SearchEnv,
    var: &'static str,
    launcher: JobLauncher,
) -> Result<T> {
    number_opt(env, var)?.ok_or_else(|| not_set(var, Some(launcher)))
}

fn number<T: std::str::FromStr>(env: &SearchEnv, var: &'static str) -> Result<T> {
    number_opt(env, var)?.ok_or_else(|| not_set(var, None))
}

/// A rank or a size, through cudajit's one reader of variables
/// ([`cudajit_core::EnvVar`]): a value that is not one is an error naming the variable.
fn number_opt<T: std::str::FromStr>(env: &SearchEnv, var: &'static str) -> Result<Option<T>> {
    parsed(env, var, "a whole number, 0 or more")
}

/// A port, likewise.
fn port_opt(env: &SearchEnv, var: &'static str) -> Result<Option<u16>> {
    parsed(env, var, "a port number, 0 to 65535")
}

fn parsed<T: std::str::FromStr>(
    env: &SearchEnv,
    var: &'static str,
    accepts: &str,
) -> Result<Option<T>> {
    Ok(cudajit_core::EnvVar::given(var, env.var(var)).parse(accepts, |text| text.parse().ok())?)
}
