//! The FP8 GEMM: C (M×N, f32) = A (M×K, e4m3) · B (given N×K, e4m3), f32 accumulate, by
//! cudajit's wgmma kernel (`hopper.rs` with `FP8`) and by cuBLASLt's FP8 matmul
//! (`cublasLtMatmul`, e4m3 in, f32 compute and output, its heuristic's first algorithm),
//! checked against each other and cuBLASLt against the host, timed interleaved as the bf16
//! benchmark times (`--kernel fp8`).

use std::sync::Arc;

use cudajit::{CudaSlice, CudaStream};
use cudarc::cublaslt::result as lt;
use cudarc::cublaslt::sys;
use cudarc::driver::{DevicePtr, DevicePtrMut};

use super::hopper;
use super::measure::{Bench, Check};
use super::Result;

/// cuBLASLt's workspace (its documentation's recommendation for Hopper).
const WORKSPACE_BYTES: usize = 32 << 20;

/// The value of an e4m3 byte (1 sign, 4 exponent bits of bias 7, 3 mantissa bits;
/// 0x7f/0xff are NaN, which [`random_e4m3`] never makes).
pub fn e4m3_to_f32(byte: u8) -> f32 {
    let sign = if byte & 0x80 != 0 { -1.0 } else { 1.0 };
    let exponent = i32::from((byte >> 3) & 0xf);
    let mantissa = f32::from(byte & 7);
    let magnitude = if exponent == 0 {
        mantissa / 8.0 * 2f32.powi(-6)
    } else {
        (1.0 + mantissa / 8.0) * 2f32.powi(exponent - 7)
    };
    sign * magnitude
}

/// `count` e4m3 values of magnitudes 1/8 to 3.75 (exponents 4 to 8), random signs.
pub fn random_e4m3(seed: u64, count: usize) -> Vec<u8> {
    let mut state = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    (0..count)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let bits = (state >> 32) as u32;
            let exponent = 4 + (bits % 5) as u8;
            let mantissa = ((bits >> 8) & 7) as u8;
            let sign = ((bits >> 12) & 1) as u8;
            (sign << 7) | (exponent << 3) | mantissa
        })
        .collect()
}

/// cuBLASLt with its workspace.
pub struct Lt {
    handle: sys::cublasLtHandle_t,
    workspace: CudaSlice<u8>,
    stream: Arc<CudaStream>,
}

/// One M×N×K FP8 problem's descriptors and algorithm, made once so that a timed run is
/// only the matmul call.
pub struct Plan {
    desc: sys::cublasLtMatmulDesc_t,
    layouts: [sys::cublasLtMatrixLayout_t; 3],
    algo: sys::cublasLtMatmulAlgo_t,
}

impl Drop for Plan {
    fn drop(&mut self) {
        // SAFETY: created by `Lt::plan`, destroyed once here.
        unsafe {
            for layout in self.layouts {
                let _ = lt::destroy_matrix_layout(layout);
            }
            let _ = lt::destroy_matmul_desc(self.desc);
        }
    }
}

impl Drop for Lt {
    fn drop(&mut self) {
        // SAFETY: created by `Lt::new`, destroyed once here.
        let _ = unsafe { lt::destroy_handle(self.handle) };
    }
}

impl Lt {
    pub fn new(stream: Arc<CudaStream>) -> Result<Lt> {
        stream.context().bind_to_thread()?;
        Ok(Lt {
            handle: lt::create_handle()?,
            workspace: stream.alloc_zeros::<u8>(WORKSPACE_BYTES)?,
            stream,
        })
    }

    /// Row-major C = A · Bᵀ is, column-major, Cᵀ (N×M) = op(B) · A with B (K×N column-major,
    /// transposed: "T") and A (K×M, "N"): the TN form cuBLASLt's FP8 matmul requires.
    pub fn plan(&self, m: u64, n: u64, k: u64) -> Result<Plan> {
        use sys::cublasLtMatmulDescAttributes_t::*;
        use sys::cudaDataType_t::*;
        let desc =
            lt::create_matmul_desc(sys::cublasComputeType_t::CUBLAS_COMPUTE_32F, CUDA_R_32F)?;
        // `cublasOperation_t` values: 1 is T, 0 is N.
        let (t, nt) = (1i32, 0i32);
        let layouts = [
            lt::create_matrix_layout(CUDA_R_8F_E4M3, k, n, k as i64)?,
            lt::create_matrix_layout(CUDA_R_8F_E4M3, k, m, k as i64)?,
            lt::create_matrix_layout(CUDA_R_32F, n, m, n as i64)?,
        ];
        // SAFETY: live descriptors; the attribute values are the types the attributes hold.
        unsafe {
            let size = std::mem::size_of::<i32>();
            lt::set_matmul_desc_attribute(
                desc,
                CUBLASLT_MATMUL_DESC_TRANSA,
                (&t as *const i32).cast(),
                size,
            )?;
            lt::set_matmul_desc_attribute(
                desc,
                CUBLASLT_MATMUL_DESC_TRANSB,
                (&nt as *const i32).cast(),
                size,
            )?;
            // Products summed in the tensor cores' accumulators over all of K, as cudajit's
            // kernel sums them (no promotion to f32 registers every few k-steps).
            let fast: i8 = 1;
            lt::set_matmul_desc_attribute(
                desc,
                CUBLASLT_MATMUL_DESC_FAST_ACCUM,
                (&fast as *const i8).cast(),
                1,
            )?;
            let pref = lt::create_matmul_pref()?;
            let bytes = WORKSPACE_BYTES as u64;
            lt::set_matmul_pref_attribute(
                pref,
                sys::cublasLtMatmulPreferenceAttributes_t::CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                (&bytes as *const u64).cast(),
                std::mem::size_of::<u64>(),
            )?;
            let heuristic = lt::get_matmul_algo_heuristic(
                self.handle,
                desc,
                layouts[0],
                layouts[1],
                layouts[2],
                layouts[2],
                pref,
            );
            lt::destroy_matmul_pref(pref)?;
            Ok(Plan {
                desc,
                layouts,
                algo: heuristic?.algo,
            })
        }
    }

    /// `c = a · bᵀ` on the stream by `plan` (made for these dimensions).
    pub fn run(
        &self,
        plan: &Plan,
        a: &CudaSlice<u8>,
        b: &CudaSlice<u8>,
        c: &mut CudaSlice<f32>,
    ) -> Result<()> {
        let (alpha, beta) = (1.0f32, 0.0f32);
        let stream = &self.stream;
        let (a, _ra) = a.device_ptr(stream);
        let (b, _rb) = b.device_ptr(stream);
        let (c, _rc) = c.device_ptr_mut(stream);
        let (w, _rw) = self.workspace.device_ptr(stream);
        // SAFETY: the plan's layouts describe these buffers (M·K, N·K bytes, M·N f32), which
        // outlive the call on this stream; the workspace is the size the plan allowed.
        unsafe {
            lt::matmul(
                self.handle,
                plan.desc,
                (&alpha as *const f32).cast(),
                (&beta as *const f32).cast(),
                b as *const _,
                plan.layouts[0],
                a as *const _,
                plan.layouts[1],
                c as *const _,
                plan.layouts[2],
                c as *mut _,
                plan.layouts[2],
                &plan.algo,
                w as *mut _,
                WORKSPACE_BYTES,
                stream.cu_stream() as *mut _,
            )?;
        }
        Ok(())
    }
}

/// One size's result.
pub struct Fp8Row {
    pub dims: (usize, usize, usize),
    pub cudajit_ms: f64,
    pub cublaslt_ms: f64,
    pub check: Check,
}

impl Fp8Row {
    pub fn tflops(&self, ms: f64) -> f64 {
        let (m, n, k) = self.dims;
        2.0 * m as f64 * n as f64 * k as f64 / (ms * 1e9)
    }
}

/// Checks cuBLASLt against the host at sampled entries (within 2e-3 of the sum of the
/// products' magnitudes: the FP8 tensor cores accumulate with fewer bits than f32),
/// cudajit against the host there and against cuBLASLt everywhere, then times both.
pub fn measure(bench: &Bench, lt: &Lt, (m, n, k): (usize, usize, usize)) -> Result<Fp8Row> {
    let stream = bench.stream.clone();
    let a_host = random_e4m3(1 + m as u64, m * k);
    let b_host = random_e4m3(2 + n as u64, n * k);
    let a = stream.clone_htod(&a_host)?;
    let b = stream.clone_htod(&b_host)?;
    let mut ours = stream.alloc_zeros::<f32>(m * n)?;
    let mut reference = stream.alloc_zeros::<f32>(m * n)?;
    let plan = lt.plan(m as u64, n as u64, k as u64)?;
    let dims = (m as u32, n as u32, k as u32);
    hopper::launch_fp8(&stream, bench.persistent, dims, &a, &b, &mut ours)?;
    lt.run(&plan, &a, &b, &mut reference)?;
    let want = stream.clone_dtoh(&reference)?;
    let got = stream.clone_dtoh(&ours)?;
    for sample in 0..64usize {
        let (r, c) = ((sample * 7919) % m, (sample * 104_729) % n);
        let (exact, magnitude) = (0..k)
            .map(|i| {
                f64::from(e4m3_to_f32(a_host[r * k + i]))
                    * f64::from(e4m3_to_f32(b_host[c * k + i]))
            })
            .fold((0.0, 0.0), |(sum, abs): (f64, f64), p| {
                (sum + p, abs + p.abs())
            });
        // Hopper's FP8 MMA adds its products with fewer bits than f32 (measured: up to
        // about 1e-3 of the sum of |products| over K of 16384), so the bound is relative to
        // that sum.
        for (who, values) in [("cuBLASLt", &want), ("cudajit", &got)] {
            let value = f64::from(values[r * n + c]);
            if (value - exact).abs() > 2e-3 * magnitude + 1e-3 {
                return Err(format!("{who} FP8 C[{r}][{c}] = {value}, the host's {exact}").into());
            }
        }
    }
    let check = Check::compare(&got, &want);
    let medians = bench.time_rounds(2, &mut |slot| match slot {
        0 => hopper::launch_fp8(&stream, bench.persistent, dims, &a, &b, &mut ours),
        _ => lt.run(&plan, &a, &b, &mut reference),
    })?;
    Ok(Fp8Row {
        dims: (m, n, k),
        cudajit_ms: medians[0],
        cublaslt_ms: medians[1],
        check,
    })
}

/// The markdown table of the FP8 runs.
pub fn table(gpu: &str, runs: usize, rows: &[Fp8Row]) -> String {
    let mut out = format!(
        "GPU: {gpu}. C = A·B, e4m3 inputs, accumulated in the tensor cores over all of K (cuBLASLt's `FAST_ACCUM`), f32 output, TN. Median of {runs} runs, CUDA events, L2 flushed before each run; cudajit checked against cuBLASLt, cuBLASLt against the host.\n\n| M × N × K | cudajit wgmma e4m3 TFLOP/s | cuBLASLt e4m3 TFLOP/s | cudajit / cuBLASLt | max error / max \\|C\\| |\n| --- | ---: | ---: | ---: | ---: |\n"
    );
    for row in rows {
        let (m, n, k) = row.dims;
        let wrong = if row.check.correct { "" } else { " **WRONG**" };
        out.push_str(&format!(
            "| {m} × {n} × {k} | {:.1} | {:.1} | **{:.3}** | {:.1e}{wrong} |\n",
            row.tflops(row.cudajit_ms),
            row.tflops(row.cublaslt_ms),
            row.cublaslt_ms / row.cudajit_ms,
            row.check.max_error / row.check.max_value.max(1e-30),
        ));
    }
    out
}
