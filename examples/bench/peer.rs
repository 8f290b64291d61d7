//! `cuMemcpyPeerAsync`, the bandwidth bound the multi-GPU benchmarks measure against
//! (`#[path]`-included).

use cudajit::cudarc::driver::{sys, CudaContext, CudaStream, DriverError};

/// `cuMemcpyPeerAsync` on `stream` of `bytes` from device address `src` of `src_ctx`'s GPU
/// to `dst` of the stream's GPU.
///
/// # Safety
/// `src` and `dst` hold `bytes` of live device memory of their contexts, not freed until
/// the stream has run the copy.
pub unsafe fn memcpy_peer_async(
    stream: &CudaStream,
    dst: u64,
    src_ctx: &CudaContext,
    src: u64,
    bytes: usize,
) -> std::result::Result<(), DriverError> {
    let ctx = stream.context();
    ctx.bind_to_thread()?;
    // SAFETY: the caller's contract for both ranges; the stream belongs to `ctx`.
    unsafe {
        sys::cuMemcpyPeerAsync(
            dst,
            ctx.cu_ctx(),
            src,
            src_ctx.cu_ctx(),
            bytes,
            stream.cu_stream(),
        )
    }
    .result()
}
