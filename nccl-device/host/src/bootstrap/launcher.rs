//! Starts one process per GPU of this host with the bootstrap variables set, and waits for
//! them: a rank that fails gives the others a grace period, then they are killed. A job
//! over several hosts runs one launcher per host, each with its node rank, as torchrun's
//! `--nnodes`/`--node-rank` do.

use std::ffi::OsString;
use std::net::TcpListener;
use std::process::{Child, Command, ExitStatus};
use std::time::{Duration, Instant};

use super::env::{BootstrapEnv, JobLauncher, DEFAULT_MASTER_ADDR, DEFAULT_MASTER_PORT};
use crate::error::{NcclError, Result};

/// A free TCP port on loopback (bound and released; a small race is possible).
pub fn free_port() -> Result<u16> {
    let l = TcpListener::bind((DEFAULT_MASTER_ADDR, 0))
        .map_err(|e| NcclError::Bootstrap(format!("no free port on loopback: {e}")))?;
    l.local_addr()
        .map(|a| a.port())
        .map_err(|e| NcclError::Bootstrap(format!("no free port on loopback: {e}")))
}

/// What to start on this host: `nproc` copies of `program args`, local rank `i` on GPU
/// `i`, global ranks `node_rank * nproc + i` of `nnodes * nproc`.
#[derive(Debug, Clone)]
pub struct Launcher {
    /// Processes (ranks) to start on this host.
    pub nproc: usize,
    /// Hosts in the job (each runs a launcher with the same `nproc`).
    pub nnodes: usize,
    /// This host's index, `0..nnodes`; rank 0 runs on node 0.
    pub node_rank: usize,
    /// The program.
    pub program: OsString,
    /// Its arguments.
    pub args: Vec<OsString>,
    /// `MASTER_ADDR` (default loopback).
    pub master_addr: String,
    /// `MASTER_PORT`; `None` picks a free port on one host, and takes torchrun's default
    /// (29500) on several, where every launcher must name the same.
    pub master_port: Option<u16>,
    /// Extra variables for every rank.
    pub env: Vec<(String, String)>,
}

impl Launcher {
    /// `nproc` copies of `program` with no arguments, on one host, on loopback and a free
    /// port.
    pub fn new(nproc: usize, program: impl Into<OsString>) -> Self {
        Launcher {
            nproc,
            nnodes: 1,
            node_rank: 0,
            program: program.into(),
            args: Vec::new(),
            master_addr: DEFAULT_MASTER_ADDR.to_owned(),
            master_port: None,
            env: Vec::new(),
        }
    }

    /// Starts every rank.
    pub fn spawn(&self) -> Result<Job> {
        if self.nnodes == 0 || self.node_rank >= self.nnodes {
            return Err(NcclError::Bootstrap(format!(
                "the node rank {} must be below the number of nodes {}",
                self.node_rank, self.nnodes
            )));
        }
        let port = match self.master_port {
            Some(p) => p,
            None if self.nnodes > 1 => DEFAULT_MASTER_PORT,
            None => free_port()?,
        };
        let world_size = self.nnodes * self.nproc;
        let mut children = Vec::with_capacity(self.nproc);
        for local_rank in 0..self.nproc {
            let rank = self.node_rank * self.nproc + local_rank;
            let vars = BootstrapEnv {
                rank,
                world_size,
                local_rank,
                local_world_size: Some(self.nproc),
                node_rank: Some(self.node_rank),
                master_addr: self.master_addr.clone(),
                master_port: port,
                launcher: JobLauncher::Torchrun,
            }
            .to_vars();
            let mut cmd = Command::new(&self.program);
            cmd.args(&self.args)
                .envs(vars)
                .envs(self.env.iter().cloned());
            match cmd.spawn() {
                Ok(child) => children.push(child),
                Err(e) => {
                    let mut job = Job { children };
                    job.kill_all();
                    return Err(NcclError::Bootstrap(format!(
                        "cannot start rank {rank} ({:?}): {e}",
                        self.program
                    )));
                }
            }
        }
        Ok(Job { children })
    }
}

/// Running ranks.
#[derive(Debug)]
pub struct Job {
    /// The processes, by rank.
    pub children: Vec<Child>,
}

impl Job {
    /// Waits for every rank, at most `timeout` overall; after the first failure the
    /// others get `grace` to finish (they should fail on their own through NCCL's
    /// timeout) before they are killed. Returns each rank's exit status (a killed rank
    /// shows a signal).
    pub fn wait(&mut self, timeout: Duration, grace: Duration) -> Result<Vec<ExitStatus>> {
        let start = Instant::now();
        let mut status: Vec<Option<ExitStatus>> = vec![None; self.children.len()];
        let mut failed_at: Option<Instant> = None;
        loop {
            for (i, c) in self.children.iter_mut().enumerate() {
                if status[i].is_none() {
                    let s = c
                        .try_wait()
                        .map_err(|e| NcclError::Bootstrap(format!("waiting for rank {i}: {e}")))?;
                    if let Some(s) = s {
                        if !s.success() && failed_at.is_none() {
                            failed_at = Some(Instant::now());
                        }
                        status[i] = Some(s);
                    }
                }
            }
            if status.iter().all(Option::is_some) {
                return Ok(status.into_iter().flatten().collect());
            }
            let overdue =
                start.elapsed() >= timeout || failed_at.is_some_and(|t| t.elapsed() >= grace);
            if overdue {
                self.kill_all();
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Kills every rank still running.
    pub fn kill_all(&mut self) {
        for c in &mut self.children {
            if let Ok(None) = c.try_wait() {
                let _ = c.kill();
                let _ = c.wait();
            }
        }
    }
}

impl Drop for Job {
    fn drop(&mut self) {
        self.kill_all();
    }
}
