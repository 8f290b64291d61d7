//! Finding a GPU without panicking when there is none.

use std::sync::Arc;

use cudarc::driver::CudaContext;

use crate::Error;

/// The number of CUDA devices, or [`Error::NoGpu`] naming why there are none usable.
pub fn gpu_count() -> Result<usize, Error> {
    // SAFETY: only probes whether the driver library can be opened.
    if !unsafe { cudarc::driver::sys::is_culib_present() } {
        return Err(Error::NoGpu(
            "the CUDA driver library (libcuda.so.1) is not installed on this machine".into(),
        ));
    }
    match CudaContext::device_count() {
        Ok(n) if n > 0 => Ok(n as usize),
        Ok(_) => Err(Error::NoGpu("the CUDA driver reports no device".into())),
        Err(e) => Err(Error::NoGpu(format!("the CUDA driver reports {e}"))),
    }
}

/// A context on GPU 0 (its primary context), or [`Error::NoGpu`].
pub fn default_context() -> Result<Arc<CudaContext>, Error> {
    gpu_count()?;
    CudaContext::new(0).map_err(|e| Error::NoGpu(format!("cannot create a context on GPU 0: {e}")))
}
