//! Set-up shared by every pass: the communicator, streams, timing events and the
//! reference cubin.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

use cudajit::nccl::Communicator;
use cudajit::{CudaContext, CudaStream};
use cudarc::driver::sys;
use cudarc::driver::{CudaEvent, CudaFunction};
use cudarc::nvrtc::Ptx;

use super::BenchResult;

pub(crate) struct Setup {
    pub(crate) comm: Communicator,
    pub(crate) streams: Vec<Arc<CudaStream>>,
    /// (start, stop) timing events per rank.
    pub(crate) events: Vec<(CudaEvent, CudaEvent)>,
    /// The reference cubin loaded on every rank: kernel name -> function.
    pub(crate) reference: Option<Vec<HashMap<String, CudaFunction>>>,
}

pub(crate) const REFERENCE_KERNELS: [&str; 8] = [
    "lsa_all_reduce_one_shot_f32",
    "lsa_all_reduce_one_shot_bf16",
    "lsa_all_reduce_one_shot_i32",
    "lsa_all_reduce_two_shot_f32",
    "lsa_all_reduce_two_shot_bf16",
    "lsa_all_reduce_two_shot_i32",
    "lsa_all_gather_bytes",
    "lsa_peer_read_bytes",
];

impl Setup {
    pub(crate) fn n(&self) -> usize {
        self.streams.len()
    }

    pub(crate) fn synchronize(&self) -> BenchResult<()> {
        for s in &self.streams {
            s.synchronize()?;
        }
        Ok(())
    }

    pub(crate) fn context(&self, i: usize) -> &Arc<CudaContext> {
        self.streams[i].context()
    }
}

pub(crate) fn load_reference(
    comm: &Communicator,
    path: &Path,
    dev_comm_bytes: usize,
) -> BenchResult<Vec<HashMap<String, CudaFunction>>> {
    let image = std::fs::read(path).map_err(|e| format!("reading {}: {e}", path.display()))?;
    let mut out = Vec::new();
    for i in 0..comm.local_ranks().len() {
        let ctx = comm.context(i).ok_or("no context")?;
        let module = ctx.load_module(Ptx::from_binary(image.clone()))?;
        let mut functions = HashMap::new();
        for name in REFERENCE_KERNELS {
            let f = module
                .load_function(name)
                .map_err(|e| format!("{}: no kernel {name}: {e}", path.display()))?;
            check_dev_comm_param(&f, name, dev_comm_bytes)?;
            functions.insert(name.to_owned(), f);
        }
        out.push(functions);
    }
    Ok(out)
}

/// The kernel's first parameter must be exactly the loaded NCCL's `ncclDevComm`: a cubin
/// built against another release's headers would read garbage.
pub(crate) fn check_dev_comm_param(
    f: &CudaFunction,
    name: &str,
    expected: usize,
) -> BenchResult<()> {
    let (mut offset, mut size) = (0usize, 0usize);
    // SAFETY: a live function handle and valid out-pointers.
    let code = unsafe { sys::cuFuncGetParamInfo(f.cu_function(), 0, &mut offset, &mut size) };
    if code != sys::CUresult::CUDA_SUCCESS {
        eprintln!("note: cuFuncGetParamInfo unavailable ({code:?}); ncclDevComm size unchecked");
        return Ok(());
    }
    if size != expected {
        return Err(format!(
            "{name}: ncclDevComm parameter is {size} bytes in the cubin, {expected} in the loaded \
             NCCL: rebuild lsa_collectives.cu against the headers of the loaded libnccl"
        )
        .into());
    }
    Ok(())
}
