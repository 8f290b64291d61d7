//! `cudajit-nccl-launch --nproc N [--master-addr A] [--master-port P] [--timeout S] -- PROGRAM ARGS...`
//!
//! Starts N copies of PROGRAM, rank i on GPU i, with RANK, WORLD_SIZE, LOCAL_RANK,
//! MASTER_ADDR and MASTER_PORT set (as torchrun does), waits for all of them, and exits
//! with the first non-zero status. A rank that fails gives the others 60 s (or
//! `--grace S`) before they are killed.

use std::process::ExitCode;
use std::time::Duration;

use cudajit_nccl::bootstrap::Launcher;

const USAGE: &str = "usage: cudajit-nccl-launch --nproc N [--master-addr A] [--master-port P] \
                     [--timeout SECONDS] [--grace SECONDS] -- PROGRAM [ARGS...]";

fn main() -> ExitCode {
    match run() {
        Ok(code) => code,
        Err(msg) => {
            eprintln!("cudajit-nccl-launch: {msg}\n{USAGE}");
            ExitCode::from(2)
        }
    }
}

fn run() -> Result<ExitCode, String> {
    let mut args = std::env::args_os().skip(1);
    let mut launcher = Launcher::new(0, "");
    let mut timeout = Duration::from_secs(24 * 3600);
    let mut grace = Duration::from_secs(60);
    let mut program = None;
    while let Some(arg) = args.next() {
        let arg = arg.to_string_lossy().into_owned();
        let mut value = |name: &str| -> Result<String, String> {
            args.next()
                .map(|v| v.to_string_lossy().into_owned())
                .ok_or(format!("{name} needs a value"))
        };
        match arg.as_str() {
            "--nproc" => launcher.nproc = parse(&value("--nproc")?)?,
            "--master-addr" => launcher.master_addr = value("--master-addr")?,
            "--master-port" => launcher.master_port = Some(parse(&value("--master-port")?)?),
            "--timeout" => timeout = Duration::from_secs(parse(&value("--timeout")?)?),
            "--grace" => grace = Duration::from_secs(parse(&value("--grace")?)?),
            "--" => {
                program = args.next();
                break;
            }
            other => return Err(format!("unknown argument {other:?}")),
        }
    }
    let Some(program) = program else {
        return Err("no program after --".into());
    };
    if launcher.nproc == 0 {
        return Err("--nproc must be at least 1".into());
    }
    launcher.program = program;
    launcher.args = args.collect();
    let mut job = launcher.spawn().map_err(|e| e.to_string())?;
    let statuses = job.wait(timeout, grace).map_err(|e| e.to_string())?;
    for (rank, s) in statuses.iter().enumerate() {
        eprintln!("cudajit-nccl-launch: rank {rank}: {s}");
    }
    let failed = statuses.iter().find(|s| !s.success());
    Ok(match failed.and_then(|s| s.code()) {
        None if failed.is_none() => ExitCode::SUCCESS,
        Some(code) => ExitCode::from(u8::try_from(code).unwrap_or(1)),
        None => ExitCode::from(1),
    })
}

fn parse<T: std::str::FromStr>(s: &str) -> Result<T, String> {
    s.parse()
        .map_err(|_| format!("{s:?} is not a valid number"))
}
