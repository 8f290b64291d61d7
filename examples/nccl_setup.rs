//! Creates a device communicator over 2 GPUs and prints its LSA rank and size on each.
//!
//!     cargo run --release --example nccl_setup                           # one process, 2 GPUs
//!     cudajit-nccl-launch --nproc 2 -- target/release/examples/nccl_setup   # one process per GPU
//!
//! With RANK/WORLD_SIZE set (the launcher or torchrun), each process takes GPU
//! LOCAL_RANK; otherwise one process drives GPUs 0 and 1 through ncclCommInitAll.

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
    let comm = if std::env::var_os("RANK").is_some() {
        Communicator::from_env(&nccl)?
    } else {
        Communicator::init_all(&nccl, &[0, 1])?
    };
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
