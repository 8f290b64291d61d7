//! Jobs started by the launchers people use, and jobs over several hosts, without GPUs:
//! each launcher's variables and their precedence, the errors that replace guesses, and
//! two `cudajit-nccl-launch` processes (node ranks 0 and 1, loopback) forming one job
//! through the bootstrap exchange.

use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use cudajit_nccl::bootstrap::{
    exchange, free_port, slurm_first_host, BootstrapEnv, JobLauncher, DEFAULT_MASTER_PORT,
};
use cudajit_nccl::discover::SearchEnv;
use cudajit_nccl::UniqueId;

fn env_of(pairs: &[(&str, &str)]) -> SearchEnv {
    SearchEnv::isolated(pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())))
}

fn read(pairs: &[(&str, &str)]) -> BootstrapEnv {
    BootstrapEnv::from_env(&env_of(pairs)).unwrap_or_else(|e| panic!("{pairs:?}: {e}"))
}

fn error(pairs: &[(&str, &str)]) -> String {
    match BootstrapEnv::from_env(&env_of(pairs)) {
        Ok(env) => panic!("{pairs:?} was accepted: {env:?}"),
        Err(e) => e.to_string(),
    }
}

/// (rank, world, local rank, local world, node, launcher)
fn place(
    e: &BootstrapEnv,
) -> (
    usize,
    usize,
    usize,
    Option<usize>,
    Option<usize>,
    JobLauncher,
) {
    (
        e.rank,
        e.world_size,
        e.local_rank,
        e.local_world_size,
        e.node_rank,
        e.launcher,
    )
}

#[test]
fn each_launchers_variables_describe_the_job() {
    let torchrun = read(&[
        ("RANK", "5"),
        ("WORLD_SIZE", "16"),
        ("LOCAL_RANK", "5"),
        ("LOCAL_WORLD_SIZE", "8"),
        ("GROUP_RANK", "0"),
        ("MASTER_ADDR", "node0"),
    ]);
    assert_eq!(
        place(&torchrun),
        (5, 16, 5, Some(8), Some(0), JobLauncher::Torchrun)
    );
    let open_mpi = read(&[
        ("OMPI_COMM_WORLD_RANK", "9"),
        ("OMPI_COMM_WORLD_SIZE", "16"),
        ("OMPI_COMM_WORLD_LOCAL_RANK", "1"),
        ("OMPI_COMM_WORLD_LOCAL_SIZE", "8"),
        ("OMPI_COMM_WORLD_NODE_RANK", "1"),
        ("MASTER_ADDR", "10.1.0.7"),
    ]);
    assert_eq!(
        place(&open_mpi),
        (9, 16, 1, Some(8), None, JobLauncher::OpenMpi)
    );
    assert_eq!(open_mpi.master_addr, "10.1.0.7");
    // What Open MPI 4.1.4 sets for rank 1 of `mpirun -np 2` on one host: its
    // OMPI_COMM_WORLD_NODE_RANK is a rank on the host, not a host index, so the job is
    // on one host and needs no MASTER_ADDR.
    let one_host_mpirun = read(&[
        ("OMPI_COMM_WORLD_RANK", "1"),
        ("OMPI_COMM_WORLD_SIZE", "2"),
        ("OMPI_COMM_WORLD_LOCAL_RANK", "1"),
        ("OMPI_COMM_WORLD_LOCAL_SIZE", "2"),
        ("OMPI_COMM_WORLD_NODE_RANK", "1"),
        ("PMIX_RANK", "1"),
    ]);
    assert_eq!(
        place(&one_host_mpirun),
        (1, 2, 1, Some(2), None, JobLauncher::OpenMpi)
    );
    assert_eq!(one_host_mpirun.master_addr, "127.0.0.1");
    let mpich = read(&[
        ("PMI_RANK", "3"),
        ("PMI_SIZE", "4"),
        ("MPI_LOCALRANKID", "3"),
        ("MPI_LOCALNRANKS", "4"),
    ]);
    assert_eq!(place(&mpich), (3, 4, 3, Some(4), None, JobLauncher::Mpich));
    let slurm = read(&[
        ("SLURM_PROCID", "6"),
        ("SLURM_NTASKS", "8"),
        ("SLURM_LOCALID", "2"),
        ("SLURM_NODEID", "1"),
        ("SLURM_JOB_NODELIST", "gpu[07-08]"),
    ]);
    assert_eq!(place(&slurm), (6, 8, 2, None, Some(1), JobLauncher::Slurm));
    assert_eq!(
        slurm.master_addr, "gpu07",
        "rank 0's host is the list's first"
    );
    // PMIx gives a rank only; torchrun's names complete it.
    let pmix = read(&[("PMIX_RANK", "1"), ("WORLD_SIZE", "2")]);
    assert_eq!(place(&pmix), (1, 2, 1, None, None, JobLauncher::Pmix));
    assert!(
        error(&[("PMIX_RANK", "1")]).contains("WORLD_SIZE is not set (PMIx did not set it)"),
        "{}",
        error(&[("PMIX_RANK", "1")])
    );
}

#[test]
fn precedence_is_torchrun_then_mpi_then_slurm_then_pmix() {
    // mpirun inside a Slurm allocation: Open MPI's variables describe the task.
    let inside_allocation = read(&[
        ("OMPI_COMM_WORLD_RANK", "3"),
        ("OMPI_COMM_WORLD_SIZE", "4"),
        ("OMPI_COMM_WORLD_LOCAL_RANK", "3"),
        ("OMPI_COMM_WORLD_LOCAL_SIZE", "4"),
        ("SLURM_PROCID", "0"),
        ("SLURM_NTASKS", "1"),
        ("SLURM_LOCALID", "0"),
        ("PMIX_RANK", "3"),
    ]);
    assert_eq!(inside_allocation.launcher, JobLauncher::OpenMpi);
    assert_eq!(inside_allocation.rank, 3);
    // Explicit torchrun variables win over everything.
    let explicit = read(&[
        ("RANK", "1"),
        ("WORLD_SIZE", "2"),
        ("OMPI_COMM_WORLD_RANK", "0"),
        ("OMPI_COMM_WORLD_SIZE", "4"),
    ]);
    assert_eq!(
        (explicit.launcher, explicit.rank),
        (JobLauncher::Torchrun, 1)
    );
    // srun --mpi=pmix sets both: Slurm's complete row wins over PMIx's rank.
    let srun_pmix = read(&[
        ("PMIX_RANK", "1"),
        ("SLURM_PROCID", "1"),
        ("SLURM_NTASKS", "2"),
        ("SLURM_LOCALID", "1"),
    ]);
    assert_eq!(srun_pmix.launcher, JobLauncher::Slurm);
    let none = error(&[]);
    assert!(none.contains("RANK is not set"), "{none}");
    assert!(none.contains("mpirun or srun"), "{none}");
}

#[test]
fn a_job_over_several_hosts_never_guesses_the_gpu() {
    // The example: rank 9 of 16 on 8-GPU hosts must not take GPU 9.
    let no_local = error(&[
        ("RANK", "9"),
        ("WORLD_SIZE", "16"),
        ("MASTER_ADDR", "10.0.0.1"),
    ]);
    assert!(no_local.contains("set LOCAL_RANK"), "{no_local}");
    assert!(no_local.contains("rank 0 at 10.0.0.1"), "{no_local}");
    let no_addr = error(&[
        ("RANK", "9"),
        ("WORLD_SIZE", "16"),
        ("LOCAL_RANK", "1"),
        ("LOCAL_WORLD_SIZE", "8"),
    ]);
    assert!(no_addr.contains("MASTER_ADDR is not set"), "{no_addr}");
    let beyond_host = error(&[
        ("RANK", "3"),
        ("WORLD_SIZE", "4"),
        ("LOCAL_RANK", "3"),
        ("LOCAL_WORLD_SIZE", "2"),
        ("MASTER_ADDR", "node0"),
    ]);
    assert!(
        beyond_host.contains("local rank 3 must be below LOCAL_WORLD_SIZE=2"),
        "{beyond_host}"
    );
    // One host, said or implied: the rank is the GPU.
    let one_host = read(&[("RANK", "1"), ("WORLD_SIZE", "2")]);
    assert_eq!(one_host.local_rank, 1);
    let loopback = read(&[
        ("RANK", "1"),
        ("WORLD_SIZE", "2"),
        ("MASTER_ADDR", "localhost"),
    ]);
    assert_eq!(loopback.local_rank, 1);
    let malformed = error(&[
        ("SLURM_PROCID", "0"),
        ("SLURM_NTASKS", "2"),
        ("SLURM_LOCALID", "0"),
        ("SLURM_JOB_NODELIST", "gpu[a-b]"),
    ]);
    assert!(malformed.contains("set MASTER_ADDR"), "{malformed}");
}

#[test]
fn the_port_leaves_torchruns_store_alone() {
    let plain = read(&[("RANK", "0"), ("WORLD_SIZE", "1"), ("MASTER_PORT", "4000")]);
    assert_eq!(plain.master_port, 4000);
    let under_agent = read(&[
        ("RANK", "0"),
        ("WORLD_SIZE", "1"),
        ("MASTER_PORT", "4000"),
        ("TORCHELASTIC_RUN_ID", "none"),
    ]);
    assert_eq!(under_agent.master_port, 4001);
    let chosen = read(&[
        ("RANK", "0"),
        ("WORLD_SIZE", "1"),
        ("MASTER_PORT", "4000"),
        ("TORCHELASTIC_RUN_ID", "none"),
        ("CUDAJIT_BOOTSTRAP_PORT", "5555"),
    ]);
    assert_eq!(chosen.master_port, 5555);
    assert_eq!(
        read(&[("RANK", "0"), ("WORLD_SIZE", "1")]).master_port,
        DEFAULT_MASTER_PORT
    );
}

#[test]
fn slurm_host_lists_give_rank_zeros_host() {
    assert_eq!(slurm_first_host("node[01-16]").as_deref(), Some("node01"));
    assert_eq!(slurm_first_host("a1,b[2-3]").as_deref(), Some("a1"));
}

const CHILD: &str = "CUDAJIT_BOOTSTRAP_TEST_OUT";

/// Not a test of its own: the program every rank of
/// `two_launchers_on_loopback_form_one_job` runs (this binary, filtered to this
/// function). It joins the job its launcher describes and writes what it learnt.
#[test]
fn rank_of_a_launched_job() {
    let Some(out) = std::env::var_os(CHILD).map(PathBuf::from) else {
        return;
    };
    let env = BootstrapEnv::from_env(&SearchEnv::from_process()).expect("launcher's variables");
    let got = exchange(
        &env,
        env.local_rank,
        || Ok(UniqueId([42; 128])),
        Duration::from_secs(60),
    )
    .expect("exchange");
    let devices: Vec<String> = got.peers.iter().map(|p| p.device.to_string()).collect();
    let line = format!(
        "rank={} world={} local={} local_world={:?} node={:?} id_ok={} devices={}",
        env.rank,
        env.world_size,
        env.local_rank,
        env.local_world_size,
        env.node_rank,
        got.unique_id == UniqueId([42; 128]),
        devices.join(",")
    );
    std::fs::write(out.join(format!("rank{}", env.rank)), line).expect("write the result");
}

#[test]
fn two_launchers_on_loopback_form_one_job() {
    let launcher = env!("CARGO_BIN_EXE_cudajit-nccl-launch");
    let me = std::env::current_exe().expect("the test binary");
    let out = std::env::temp_dir().join(format!("cudajit-two-nodes-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&out);
    std::fs::create_dir_all(&out).expect("a scratch directory");
    let port = free_port().expect("a free port").to_string();
    // Node 1 first: its ranks must wait for rank 0, which node 0 starts.
    let nodes: Vec<_> = [1, 0]
        .into_iter()
        .map(|node| {
            Command::new(launcher)
                .args(["--nnodes", "2", "--node-rank", &node.to_string()])
                .args(["--nproc-per-node", "2", "--master-addr", "127.0.0.1"])
                .args(["--master-port", &port, "--timeout", "60", "--"])
                .arg(&me)
                .args(["--exact", "rank_of_a_launched_job", "--test-threads=1"])
                .env(CHILD, &out)
                .stdout(Stdio::null())
                .spawn()
                .expect("cudajit-nccl-launch starts")
        })
        .collect();
    let started = Instant::now();
    for mut node in nodes {
        let status = node.wait().expect("the launcher exits");
        assert!(status.success(), "a launcher failed: {status}");
    }
    assert!(started.elapsed() < Duration::from_secs(60));
    let mut lines = Vec::new();
    for rank in 0..4 {
        let line = std::fs::read_to_string(out.join(format!("rank{rank}")))
            .unwrap_or_else(|e| panic!("rank {rank} wrote nothing: {e}"));
        lines.push(line);
    }
    let _ = std::fs::remove_dir_all(&out);
    for (rank, line) in lines.iter().enumerate() {
        let expected = format!(
            "rank={rank} world=4 local={} local_world=Some(2) node=Some({}) id_ok=true devices=0,1,0,1",
            rank % 2,
            rank / 2
        );
        assert_eq!(line, &expected);
    }
}

#[test]
fn the_launcher_speaks_torchruns_options() {
    let launcher = env!("CARGO_BIN_EXE_cudajit-nccl-launch");
    let help = Command::new(launcher).arg("--help").output().expect("runs");
    assert!(help.status.success());
    let text = String::from_utf8_lossy(&help.stdout);
    for option in [
        "--nproc-per-node",
        "--nnodes",
        "--node-rank",
        "--master-addr",
        "--master-port",
    ] {
        assert!(
            text.contains(option),
            "`{option}` missing from --help:\n{text}"
        );
    }
    let bad = Command::new(launcher)
        .args([
            "--nproc-per-node",
            "2",
            "--nnodes",
            "2",
            "--node-rank",
            "2",
            "--",
            "true",
        ])
        .output()
        .expect("runs");
    assert_eq!(bad.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&bad.stderr).contains("--node-rank 2 must be below --nnodes 2"),
        "{}",
        String::from_utf8_lossy(&bad.stderr)
    );
    // torchrun's spelling with underscores, and the short --nproc, are accepted.
    let underscores = Command::new(launcher)
        .args(["--nproc_per_node", "1", "--", "true"])
        .status()
        .expect("runs");
    assert!(underscores.success());
    let nproc = Command::new(launcher)
        .args(["--nproc", "1", "--", "true"])
        .status()
        .expect("runs");
    assert!(nproc.success());
}
