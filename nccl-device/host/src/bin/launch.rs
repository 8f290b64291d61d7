//! `cudajit-nccl-launch`: starts one process per GPU of this host with torchrun's
//! variables set (`RANK`, `WORLD_SIZE`, `LOCAL_RANK`, `LOCAL_WORLD_SIZE`, `GROUP_RANK`,
//! `MASTER_ADDR`, `MASTER_PORT`), waits for all of them, and exits with the first non-zero
//! status. A rank that fails gives the others 60 s (or `--grace S`) before they are
//! killed. Its options are torchrun's, so a job over several hosts runs one launcher per
//! host with the same `--nnodes`, `--nproc-per-node`, `--master-addr` and
//! `--master-port`, and its own `--node-rank`.

use std::ffi::OsString;
use std::process::ExitCode;
use std::time::Duration;

use clap::Parser;
use cudajit_nccl::bootstrap::Launcher;

/// Runs PROGRAM once per GPU of this host, as ranks of one NCCL job.
#[derive(Debug, Parser)]
#[command(name = "cudajit-nccl-launch", version, about, long_about = None)]
struct Args {
    /// Processes (GPUs) on this host.
    #[arg(long = "nproc-per-node", alias = "nproc_per_node", visible_alias = "nproc", value_parser = clap::value_parser!(u32).range(1..))]
    nproc_per_node: u32,
    /// Hosts in the job.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..))]
    nnodes: u32,
    /// This host's index in the job, 0..NNODES (rank 0 runs on node 0).
    #[arg(long = "node-rank", alias = "node_rank", default_value_t = 0)]
    node_rank: u32,
    /// Address of node 0, where rank 0 listens.
    #[arg(
        long = "master-addr",
        alias = "master_addr",
        default_value = "127.0.0.1"
    )]
    master_addr: String,
    /// Port rank 0 listens on (default: a free port on one host, 29500 on several).
    #[arg(long = "master-port", alias = "master_port")]
    master_port: Option<u16>,
    /// Seconds the whole job may take before every rank is killed.
    #[arg(long, default_value_t = 24 * 3600)]
    timeout: u64,
    /// Seconds the other ranks get after one fails, before they are killed.
    #[arg(long, default_value_t = 60)]
    grace: u64,
    /// The program each rank runs, and its arguments (after `--`).
    #[arg(required = true, last = true, num_args = 1..)]
    program: Vec<OsString>,
}

fn main() -> ExitCode {
    let args = Args::parse();
    match run(args) {
        Ok(code) => code,
        Err(msg) => {
            eprintln!("cudajit-nccl-launch: {msg}");
            ExitCode::from(2)
        }
    }
}

fn run(args: Args) -> Result<ExitCode, String> {
    if args.node_rank >= args.nnodes {
        return Err(format!(
            "--node-rank {} must be below --nnodes {}",
            args.node_rank, args.nnodes
        ));
    }
    let mut program = args.program.into_iter();
    let mut launcher = Launcher::new(
        args.nproc_per_node as usize,
        program.next().unwrap_or_default(),
    );
    launcher.args = program.collect();
    launcher.nnodes = args.nnodes as usize;
    launcher.node_rank = args.node_rank as usize;
    launcher.master_addr = args.master_addr;
    launcher.master_port = args.master_port;
    let mut job = launcher.spawn().map_err(|e| e.to_string())?;
    let statuses = job
        .wait(
            Duration::from_secs(args.timeout),
            Duration::from_secs(args.grace),
        )
        .map_err(|e| e.to_string())?;
    let first_rank = launcher.node_rank * launcher.nproc;
    for (local, s) in statuses.iter().enumerate() {
        eprintln!("cudajit-nccl-launch: rank {}: {s}", first_rank + local);
    }
    let failed = statuses.iter().find(|s| !s.success());
    Ok(match failed.and_then(|s| s.code()) {
        None if failed.is_none() => ExitCode::SUCCESS,
        Some(code) => ExitCode::from(u8::try_from(code).unwrap_or(1)),
        None => ExitCode::from(1),
    })
}
