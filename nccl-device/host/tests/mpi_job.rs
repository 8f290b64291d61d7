//! The unique id over MPI (feature `mpi`), under a real `mpirun` on this host, without
//! GPUs: jobs of 2 and 4 ranks agree byte for byte on rank 0's id and on the peer table,
//! MPI's rank, size and local rank match Open MPI's variables and the TCP exchange's peer
//! table (run in the same job, `BootstrapEnv::from_env`), a sub-communicator forms
//! a job of its own, a failure on rank 0 reaches every rank, and the mistakes a program
//! can make (MPI not initialised or already finalised, a process MPI did not start with
//! the others) are errors that name the fix.
//!
//! `harness = false`: this binary is both the test (no arguments) and, started by
//! `mpirun` with `RANK_OUT` set, each rank of the job, so MPI runs on the main thread.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};
use std::time::Duration;

use cudajit_nccl::bootstrap::mpi::{self, mpi as rsmpi, MpiPlace};
use cudajit_nccl::bootstrap::{
    exchange as tcp_exchange, free_port, host_name, BootstrapEnv, Exchanged, BOOTSTRAP_PORT_VAR,
};
use cudajit_nccl::discover::SearchEnv;
use cudajit_nccl::{NcclError, UniqueId};
use rsmpi::topology::{Color, SimpleCommunicator};
use rsmpi::traits::Communicator as _;

/// Where a rank writes what it learnt; set for the ranks only.
const RANK_OUT: &str = "CUDAJIT_MPI_TEST_OUT";
/// Which misuse a lone (non-`mpirun`) child process demonstrates.
const MISUSE: &str = "CUDAJIT_MPI_TEST_MISUSE";

fn main() -> ExitCode {
    if let Some(out) = std::env::var_os(RANK_OUT) {
        return rank_of_an_mpi_job(Path::new(&out));
    }
    if let Ok(misuse) = std::env::var(MISUSE) {
        return lone_process(&misuse);
    }
    ranks_agree_under_mpirun(2);
    ranks_agree_under_mpirun(4);
    one_disagreeing_rank_fails_every_rank();
    mpi_must_be_initialised();
    misuse_is_reported("finalised", &[], "MPI is already finalised");
    misuse_is_reported(
        "singleton",
        &[("RANK", "1"), ("WORLD_SIZE", "2")],
        "MPI_COMM_WORLD has 1 rank(s) but WORLD_SIZE=2 (torchrun): start every rank with \
         mpirun or srun",
    );
    println!("test result: ok. 6 MPI checks passed");
    ExitCode::SUCCESS
}

/// 128 bytes no test could predict (so agreeing on them proves the broadcast).
fn fresh_id() -> UniqueId {
    let mut id = [0u8; 128];
    std::fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut id))
        .expect("/dev/urandom");
    UniqueId(id)
}

fn hex(id: &UniqueId) -> String {
    id.0.iter().map(|b| format!("{b:02x}")).collect()
}

fn peers_line(got: &Exchanged) -> String {
    let peers: Vec<String> = got
        .peers
        .iter()
        .map(|p| format!("{}@{}:{}", p.rank, p.host, p.device))
        .collect();
    peers.join(",")
}

/// One rank (started by `mpirun`): its place from MPI and from Open MPI's variables, the
/// world's exchange, an exchange on the even/odd split, and one whose rank 0 fails.
fn rank_of_an_mpi_job(out: &Path) -> ExitCode {
    let universe = rsmpi::initialize().expect("MPI initialises once");
    // A panicking rank must end the job: unwinding would drop the Universe, whose
    // MPI_Finalize waits for the ranks still inside a collective, forever.
    let default_hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        default_hook(info);
        SimpleCommunicator::world().abort(101);
    }));
    let world = universe.world();
    if std::env::var(MISUSE).is_ok_and(|m| m == "disagree") {
        let err = mpi::place(&world).expect_err("a rank's variables disagree with MPI");
        std::fs::write(out.join(format!("rank{}", world.rank())), err.to_string()).expect("write");
        return ExitCode::SUCCESS;
    }
    let place = mpi::place(&world).expect("MPI place");
    let launcher = BootstrapEnv::from_env(&SearchEnv::from_process()).expect("Open MPI's vars");
    let tcp = tcp_exchange(
        &launcher,
        launcher.local_rank,
        || Ok(fresh_id()),
        Duration::from_secs(30),
    )
    .expect("the TCP exchange under mpirun");
    let made = fresh_id();
    let got = mpi::exchange(&world, place.local_rank, || Ok(made)).expect("world exchange");
    if place.rank == 0 {
        std::fs::write(out.join("made"), hex(&made)).expect("write");
    }
    let half = world
        .split_by_color(Color::with_value(world.rank() % 2))
        .expect("every rank has a colour");
    let half_place = mpi::place(&half).expect("place in the half");
    let half_made = fresh_id();
    let half_got = mpi::exchange(&half, half_place.local_rank, || Ok(half_made)).expect("half");
    let failed = mpi::exchange(&world, place.local_rank, || {
        Err(NcclError::Bootstrap("no id today".into()))
    })
    .expect_err("a failed rank 0 fails every rank");
    let lines = [
        format!("place {}", place_line(&place)),
        format!(
            "launcher {} {} {} {:?} {:?}",
            launcher.rank,
            launcher.world_size,
            launcher.local_rank,
            launcher.local_world_size,
            launcher.node_rank
        ),
        format!("id {}", hex(&got.unique_id)),
        format!("peers {}", peers_line(&got)),
        format!("tcp-peers {}", peers_line(&tcp)),
        format!(
            "half {} {}",
            place_line(&half_place),
            hex(&half_got.unique_id)
        ),
        format!("half-made {}", hex(&half_made)),
        format!("half-peers {}", peers_line(&half_got)),
        format!("failed {failed}"),
    ];
    std::fs::write(out.join(format!("rank{}", place.rank)), lines.join("\n")).expect("write");
    ExitCode::SUCCESS
}

fn place_line(p: &MpiPlace) -> String {
    format!(
        "{} {} {} {} {} {}",
        p.rank, p.world_size, p.local_rank, p.local_world_size, p.node_rank, p.nodes
    )
}

fn field<'a>(text: &'a str, key: &str) -> &'a str {
    text.lines()
        .find_map(|l| l.strip_prefix(key).and_then(|l| l.strip_prefix(' ')))
        .unwrap_or_else(|| panic!("no `{key}` in\n{text}"))
}

fn mpirun() -> PathBuf {
    std::env::var_os("PATH")
        .and_then(|path| {
            std::env::split_paths(&path)
                .map(|d| d.join("mpirun"))
                .find(|p| p.is_file())
        })
        .expect("the mpi feature is on but mpirun is not on PATH (apt-get install openmpi-bin)")
}

fn ranks_agree_under_mpirun(n: usize) {
    let out = std::env::temp_dir().join(format!("cudajit-mpi-job-{}-{n}", std::process::id()));
    let _ = std::fs::remove_dir_all(&out);
    std::fs::create_dir_all(&out).expect("a scratch directory");
    let me = std::env::current_exe().expect("the test binary");
    let status = Command::new(mpirun())
        .args([
            "--allow-run-as-root",
            "--oversubscribe",
            "-np",
            &n.to_string(),
        ])
        .args(["--timeout", "120", "-x", RANK_OUT, "-x", BOOTSTRAP_PORT_VAR])
        .arg(&me)
        .env(RANK_OUT, &out)
        .env(
            BOOTSTRAP_PORT_VAR,
            free_port().expect("a free port").to_string(),
        )
        .status()
        .expect("mpirun starts");
    assert!(status.success(), "mpirun -np {n} failed: {status}");
    let ranks: Vec<String> = (0..n)
        .map(|r| {
            std::fs::read_to_string(out.join(format!("rank{r}")))
                .unwrap_or_else(|e| panic!("rank {r} of {n} wrote nothing: {e}"))
        })
        .collect();
    let made = std::fs::read_to_string(out.join("made")).expect("rank 0's id");
    let _ = std::fs::remove_dir_all(&out);
    assert_ne!(made, "00".repeat(128));
    let host = host_name();
    let world_peers: Vec<String> = (0..n).map(|r| format!("{r}@{host}:{r}")).collect();
    for (rank, text) in ranks.iter().enumerate() {
        // One host: the local rank is the rank, one node of n.
        assert_eq!(field(text, "place"), format!("{rank} {n} {rank} {n} 0 1"));
        assert_eq!(
            field(text, "launcher"),
            format!("{rank} {n} {rank} Some({n}) None"),
            "MPI and Open MPI's variables disagree"
        );
        assert_eq!(field(text, "id"), made, "rank {rank}'s id is not rank 0's");
        assert_eq!(field(text, "peers"), world_peers.join(","));
        assert_eq!(
            field(text, "tcp-peers"),
            world_peers.join(","),
            "TCP and MPI disagree"
        );
        // The half of the ranks with this parity: ranks rank/2 of n/2, a job of its own.
        let half_n = n / 2;
        let half_rank = rank / 2;
        let half = field(text, "half");
        assert_eq!(
            half.split_once(' ')
                .map(|(_, rest)| rest.rsplit_once(' ').unwrap().0),
            Some(format!("{half_n} {half_rank} {half_n} 0 1").as_str()),
            "{half}"
        );
        let half_id = half.rsplit_once(' ').unwrap().1;
        let half_zero = &ranks[rank % 2];
        assert_eq!(
            half_id,
            field(half_zero, "half-made"),
            "the half's rank 0 id"
        );
        assert_ne!(half_id, made, "the halves are jobs of their own");
        let half_peers: Vec<String> = (0..half_n).map(|r| format!("{r}@{host}:{r}")).collect();
        assert_eq!(field(text, "half-peers"), half_peers.join(","));
        let failed = field(text, "failed");
        if rank == 0 {
            assert!(failed.contains("no id today"), "{failed}");
        } else {
            assert!(failed.contains("rank 0 could not create"), "{failed}");
        }
    }
    let other_half = field(&ranks[1], "half-made");
    assert_ne!(field(&ranks[0], "half-made"), other_half);
    println!("mpirun -np {n}: the ranks agree on the id, their places and the peers ... ok");
}

/// Rank 1 alone carries torchrun's `RANK=0` (an MPMD job: `mpirun A : env RANK=0 A`); it
/// fails, and rank 0, whose variables are fine, fails too instead of waiting for it.
fn one_disagreeing_rank_fails_every_rank() {
    let out = std::env::temp_dir().join(format!("cudajit-mpi-disagree-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&out);
    std::fs::create_dir_all(&out).expect("a scratch directory");
    let me = std::env::current_exe().expect("the test binary");
    let status = Command::new(mpirun())
        .args(["--allow-run-as-root", "--oversubscribe", "--timeout", "60"])
        .args(["-x", RANK_OUT, "-x", MISUSE, "-np", "1"])
        .arg(&me)
        .args([":", "-np", "1", "env", "RANK=0"])
        .arg(&me)
        .env(RANK_OUT, &out)
        .env(MISUSE, "disagree")
        .status()
        .expect("mpirun starts");
    assert!(
        status.success(),
        "mpirun failed (a rank left waiting?): {status}"
    );
    let read = |r: usize| std::fs::read_to_string(out.join(format!("rank{r}"))).expect("a rank");
    let (zero, one) = (read(0), read(1));
    let _ = std::fs::remove_dir_all(&out);
    assert!(
        one.contains("MPI_COMM_WORLD's rank is 1 but RANK=0 (torchrun)"),
        "{one}"
    );
    assert!(
        zero.contains("rank 1 disagrees with its launcher's variables"),
        "{zero}"
    );
    println!("a rank whose variables disagree with MPI fails every rank ... ok");
}

/// The id exchange refuses to touch MPI before `MPI_Init` (which would abort).
fn mpi_must_be_initialised() {
    let err = mpi::place(&SimpleCommunicator::world()).expect_err("MPI never initialised");
    assert!(
        err.to_string()
            .contains("MPI is not initialised: call mpi::initialize()"),
        "{err}"
    );
    let err = mpi::exchange(&SimpleCommunicator::world(), 0, || unreachable!()).unwrap_err();
    assert!(err.to_string().contains("MPI is not initialised"), "{err}");
    println!("MPI not initialised is an error ... ok");
}

/// A process on its own (MPI's singleton start), demonstrating one misuse; it prints the
/// error and fails.
fn lone_process(misuse: &str) -> ExitCode {
    let universe = rsmpi::initialize().expect("MPI initialises");
    let world = universe.world();
    if misuse == "finalised" {
        drop(universe);
    }
    match mpi::place(&world) {
        Ok(place) => {
            eprintln!("accepted: {place:?}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

fn misuse_is_reported(misuse: &str, vars: &[(&str, &str)], expected: &str) {
    let me = std::env::current_exe().expect("the test binary");
    let run = Command::new(me)
        .env(MISUSE, misuse)
        .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        .envs(vars.iter().copied())
        .output()
        .expect("the child starts");
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(!run.status.success(), "{misuse}: accepted\n{stderr}");
    assert!(stderr.contains(expected), "{misuse}: {stderr}");
    println!("{misuse}: reported ... ok");
}
