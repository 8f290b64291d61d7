//! The torchrun-style variables that describe one process of a job.

use crate::discover::SearchEnv;
use crate::error::{NcclError, Result};

/// Default `MASTER_ADDR`: loopback (a single-host job).
pub const DEFAULT_MASTER_ADDR: &str = "127.0.0.1";
/// Default `MASTER_PORT` (torchrun's).
pub const DEFAULT_MASTER_PORT: u16 = 29500;

/// One process's place in a job.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BootstrapEnv {
    /// `RANK`: this process's rank, `0..world_size`.
    pub rank: usize,
    /// `WORLD_SIZE`: processes in the job.
    pub world_size: usize,
    /// `LOCAL_RANK`: the GPU to use on this host (default `RANK`).
    pub local_rank: usize,
    /// `MASTER_ADDR`: where rank 0 listens (default 127.0.0.1).
    pub master_addr: String,
    /// `MASTER_PORT` (default 29500).
    pub master_port: u16,
}

impl BootstrapEnv {
    /// Reads the variables; a missing `RANK`/`WORLD_SIZE` or a malformed value is an
    /// error naming the variable.
    pub fn from_env(env: &SearchEnv) -> Result<Self> {
        let rank: usize = required(env, "RANK")?;
        let world_size: usize = required(env, "WORLD_SIZE")?;
        let local_rank = optional(env, "LOCAL_RANK")?.unwrap_or(rank);
        let master_port = optional(env, "MASTER_PORT")?.unwrap_or(DEFAULT_MASTER_PORT);
        let master_addr = env
            .var_str("MASTER_ADDR")
            .unwrap_or(DEFAULT_MASTER_ADDR)
            .to_owned();
        if world_size == 0 || rank >= world_size {
            return Err(NcclError::Bootstrap(format!(
                "RANK={rank} must be below WORLD_SIZE={world_size}"
            )));
        }
        Ok(BootstrapEnv {
            rank,
            world_size,
            local_rank,
            master_addr,
            master_port,
        })
    }

    /// The variables that describe `rank` of a job, for a launcher.
    pub fn to_vars(&self) -> Vec<(&'static str, String)> {
        vec![
            ("RANK", self.rank.to_string()),
            ("WORLD_SIZE", self.world_size.to_string()),
            ("LOCAL_RANK", self.local_rank.to_string()),
            ("MASTER_ADDR", self.master_addr.clone()),
            ("MASTER_PORT", self.master_port.to_string()),
        ]
    }
}

fn required<T: std::str::FromStr>(env: &SearchEnv, var: &str) -> Result<T> {
    optional(env, var)?.ok_or_else(|| {
        NcclError::Bootstrap(format!(
            "{var} is not set; launch with cudajit-nccl-launch or set RANK, WORLD_SIZE (and \
             LOCAL_RANK, MASTER_ADDR, MASTER_PORT) as torchrun does"
        ))
    })
}

fn optional<T: std::str::FromStr>(env: &SearchEnv, var: &str) -> Result<Option<T>> {
    match env.var_str(var) {
        None => Ok(None),
        Some(text) => text
            .trim()
            .parse()
            .map(Some)
            .map_err(|_| NcclError::Bootstrap(format!("{var}={text:?} is not a valid number"))),
    }
}
