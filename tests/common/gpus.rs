//! Every GPU of this machine in one communicator, one test at a time: what the GPU tests
//! of the device-API modules share (tests/moe_gpu.rs, tests/m2n_gpu.rs).

use std::sync::{Arc, Mutex, MutexGuard};

use cudajit::nccl::{Communicator, LoadedNccl};

/// One test at a time owns the GPUs.
static GPUS: Mutex<()> = Mutex::new(());

/// The GPUs for one test: hold the guard while any communicator over them lives.
pub fn lock() -> MutexGuard<'static, ()> {
    GPUS.lock().unwrap_or_else(|p| p.into_inner())
}

/// Every GPU in one communicator, or `None` after saying why the tests skip: NCCL 2.28's
/// device API needs at least two local ranks.
pub fn gpus_or_skip() -> Option<Communicator> {
    let gpus = match cudajit::gpu_count() {
        Ok(n) => n,
        Err(e) => {
            eprintln!("skipped: {e}");
            return None;
        }
    };
    if gpus < 2 {
        eprintln!("skipped: NCCL's device API needs 2 local ranks, this machine has {gpus} GPU(s)");
        return None;
    }
    if std::env::var_os("NCCL_NVLS_ENABLE").is_none() {
        // SAFETY: set before NCCL is loaded, by the first test to get here; the tests of
        // a binary run one at a time (the communicator is behind [`lock`]).
        unsafe { std::env::set_var("NCCL_NVLS_ENABLE", "0") };
    }
    let nccl: Arc<LoadedNccl> = LoadedNccl::global().expect("NCCL on a machine with 2 GPUs");
    let devices: Vec<usize> = (0..gpus).collect();
    Some(Communicator::init_all(&nccl, &devices).expect("ncclCommInitAll"))
}
