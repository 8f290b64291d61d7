//! cuBLAS (dynamically loaded through cudarc) as the reference: `cublasGemmEx` with bf16
//! inputs, f32 output and f32 compute, on row-major matrices.

use std::sync::Arc;

use cudajit::{bf16, CudaSlice, CudaStream};
use cudarc::cublas::sys::{cublasComputeType_t, cublasGemmAlgo_t, cublasOperation_t, cudaDataType};
use cudarc::cublas::CudaBlas;
use cudarc::driver::{DevicePtr, DevicePtrMut};

use super::Result;

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

    /// `c = a · b` for row-major `a` (M×K), `b` given column by column (`b[n * K + k]`)
    /// and row-major `c` (M×N). In cuBLAS's column-major terms `cᵀ = bᵀ · aᵀ`, where the
    /// stored `b` is the K×N column-major matrix `bᵀ`'s transpose (so `op = T`) and `a` is
    /// the K×M column-major `aᵀ`.
    pub fn gemm_tn(
        &self,
        m: usize,
        n: usize,
        k: usize,
        a: &CudaSlice<bf16>,
        b: &CudaSlice<bf16>,
        c: &mut CudaSlice<f32>,
    ) -> Result<()> {
        let alpha = 1.0f32;
        let beta = 0.0f32;
        let (a_ptr, _a) = a.device_ptr(&self.stream);
        let (b_ptr, _b) = b.device_ptr(&self.stream);
        let (c_ptr, _c) = c.device_ptr_mut(&self.stream);
        // SAFETY: the pointers are live allocations of at least M·K, N·K and M·N elements of
        // the types named, on the handle's stream.
        unsafe {
            cudarc::cublas::result::gemm_ex(
                *self.blas.handle(),
                cublasOperation_t::CUBLAS_OP_T,
                cublasOperation_t::CUBLAS_OP_N,
                n as i32,
                m as i32,
                k as i32,
                (&alpha as *const f32).cast(),
                b_ptr as *const _,
                cudaDataType::CUDA_R_16BF,
                k as i32,
                a_ptr as *const _,
                cudaDataType::CUDA_R_16BF,
                k as i32,
                (&beta as *const f32).cast(),
                c_ptr as *mut _,
                cudaDataType::CUDA_R_32F,
                n as i32,
                cublasComputeType_t::CUBLAS_COMPUTE_32F,
                cublasGemmAlgo_t::CUBLAS_GEMM_DEFAULT,
            )?;
        }
        Ok(())
    }
}
