//! cuBLAS (dynamically loaded through cudarc) as the reference: `cublasGemmEx` with bf16
//! inputs, f32 compute and f32 or bf16 output, on row-major matrices.

use std::sync::Arc;

use cudajit::{bf16, CudaSlice, CudaStream};
use cudarc::cublas::sys::{cublasComputeType_t, cublasGemmAlgo_t, cublasOperation_t, cudaDataType};
use cudarc::cublas::CudaBlas;
use cudarc::driver::{DevicePtr, DevicePtrMut};

use super::options::Layout;
use super::Result;

/// An element type cuBLAS writes C in.
pub trait BlasOutput {
    const DATA_TYPE: cudaDataType;
}

impl BlasOutput for f32 {
    const DATA_TYPE: cudaDataType = cudaDataType::CUDA_R_32F;
}

impl BlasOutput for bf16 {
    const DATA_TYPE: cudaDataType = cudaDataType::CUDA_R_16BF;
}

pub struct Blas {
    blas: CudaBlas,
    stream: Arc<CudaStream>,
}

impl Blas {
    pub fn new(stream: Arc<CudaStream>) -> Result<Blas> {
        Ok(Blas {
            blas: CudaBlas::new(stream.clone())?,
            stream,
        })
    }

    /// `c = a · b` for row-major `a` (M×K) and `c` (M×N), and `b` as `layout` says. cuBLAS
    /// is column-major, so it computes `cᵀ = bᵀ · aᵀ` (N×M): the stored `a` is the K×M
    /// column-major `aᵀ` (`op = N`, leading dimension K); B row by row is the N×K
    /// column-major `bᵀ` (`op = N`, leading dimension N), B column by column is the K×N
    /// column-major `b`, whose transpose is wanted (`op = T`, leading dimension K).
    #[allow(clippy::too_many_arguments)]
    pub fn gemm<C: BlasOutput>(
        &self,
        layout: Layout,
        m: usize,
        n: usize,
        k: usize,
        a: &CudaSlice<bf16>,
        b: &CudaSlice<bf16>,
        c: &mut CudaSlice<C>,
    ) -> Result<()> {
        let alpha = 1.0f32;
        let beta = 0.0f32;
        let (b_op, ldb) = match layout {
            Layout::Tn => (cublasOperation_t::CUBLAS_OP_T, k),
            Layout::Nn => (cublasOperation_t::CUBLAS_OP_N, n),
        };
        let (a_ptr, _a) = a.device_ptr(&self.stream);
        let (b_ptr, _b) = b.device_ptr(&self.stream);
        let (c_ptr, _c) = c.device_ptr_mut(&self.stream);
        // SAFETY: the pointers are live allocations of at least M·K, N·K and M·N elements of
        // the types named, on the handle's stream.
        unsafe {
            cudarc::cublas::result::gemm_ex(
                *self.blas.handle(),
                b_op,
                cublasOperation_t::CUBLAS_OP_N,
                n as i32,
                m as i32,
                k as i32,
                (&alpha as *const f32).cast(),
                b_ptr as *const _,
                cudaDataType::CUDA_R_16BF,
                ldb as i32,
                a_ptr as *const _,
                cudaDataType::CUDA_R_16BF,
                k as i32,
                (&beta as *const f32).cast(),
                c_ptr as *mut _,
                C::DATA_TYPE,
                n as i32,
                cublasComputeType_t::CUBLAS_COMPUTE_32F,
                cublasGemmAlgo_t::CUBLAS_GEMM_DEFAULT,
            )?;
        }
        Ok(())
    }
}
