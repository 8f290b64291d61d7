//! Creates a device communicator over 2 GPUs and prints its LSA rank and size on each.
//!
//!     cargo run --release --example nccl_setup                           # one process, 2 GPUs
//!     cudajit-nccl-launch --nproc 2 -- target/release/examples/nccl_setup   # one process per GPU
//!
//!     cargo build --release --features mpi --example nccl_setup            # under MPI
//!     mpirun -np 2 target/release/examples/nccl_setup                       # no launcher
//!
//! Built with the `mpi` feature and started by mpirun or srun, each process takes its
//! place from MPI and the unique id arrives by MPI broadcast (`Communicator::from_mpi`).
//! Otherwise, with RANK/WORLD_SIZE set (the launcher or torchrun), each process takes GPU
//! LOCAL_RANK and the id comes over TCP; otherwise one process drives GPUs 0 and 1 through
//! ncclCommInitAll.

use cudajit::nccl::{Communicator, DevCommRequirements, LoadedNccl, NcclError};

fn main() -> std::process::ExitCode {
    match run() {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("nccl_setup: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}

fn run() -> Result<(), NcclError> {
    let nccl = LoadedNccl::global()?;
    print!("{}", nccl.report());
    #[cfg(feature = "mpi")]
    if let Some(universe) = cudajit::nccl::bootstrap::mpi::mpi::initialize() {
        use cudajit::nccl::bootstrap::mpi::mpi::traits::Communicator as _;
        // Under mpirun every process is one of MPI_COMM_WORLD's ranks; a program started
        // without it (or by torchrun) is a world of one, MPI's singleton, and goes on below.
        let world = universe.world();
        if world.size() > 1 {
            // The Universe outlives the communicator: MPI is finalised when it drops.
            return show(Communicator::from_mpi(&nccl, &world)?);
        }
    }
    let comm = if std::env::var_os("RANK").is_some() {
        Communicator::from_env(&nccl)?
    } else {
        Communicator::init_all(&nccl, &[0, 1])?
    };
    show(comm)
}

/// Each local rank's LSA rank and size in a device communicator over a symmetric window.
fn show(comm: Communicator) -> Result<(), NcclError> {
    let buffer = comm.alloc_symmetric::<f32>(1 << 20)?;
    let dev = comm.create_dev_comm(&DevCommRequirements::lsa_barriers(64))?;
    for (i, r) in comm.local_ranks().iter().enumerate() {
        println!(
            "rank {} on GPU {}: LSA rank {} of LSA size {} (ncclDevComm {} bytes, align {}; window {:?})",
            r.rank,
            r.device,
            dev.lsa_rank(i).unwrap_or(-1),
            dev.lsa_size(i).unwrap_or(-1),
            dev.layout().size,
            dev.layout().align,
            buffer.window(i).unwrap_or(std::ptr::null_mut()),
        );
    }
    dev.close()?;
    buffer.close()?;
    comm.close()
}
