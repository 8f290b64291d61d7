//! A bf16 GEMM on the H200's tensor cores written in cudajit (`kernels.rs`: mma.sync,
//! ldmatrix, cp.async through `cudajit::tensor`), checked against cuBLAS and timed beside
//! it in the same process.
//!
//! ```text
//! cargo run --release --example gemm                      # every size, table on stdout
//! cargo run --release --example gemm -- --sizes 4096,8192 --markdown gemm.md
//! cargo run --release --example gemm -- --cpu-check       # no GPU: compile for sm_90, show the PTX's shape
//! ```
//!
//! Method: C = A·B, A M×K row-major bf16, B as the kernel takes it, C f32 row-major; every
//! result compared with cuBLAS's (`cublasGemmEx`, bf16 in, f32 out, f32 compute) within
//! `1e-3 · max|C|`; times are CUDA-event medians of `--runs` (default 20) after 5 warm-ups,
//! cudajit and cuBLAS interleaved, each after a 256 MiB read that leaves nothing in L2.
//! TFLOP/s = 2·M·N·K / time.

mod cublas;
mod kernels;

use std::sync::Arc;

use cudajit::codegen::compile::{linked_ptx, CompileOptions};
use cudajit::prelude::*;
use cudajit::{bf16, Arch, CudaSlice, CudaStream, LaunchConfig, Specialization};
use cudarc::driver::sys::CUevent_flags;

type Result<T> = std::result::Result<T, Box<dyn std::error::Error>>;

/// Bytes read between timed runs so that neither side finds its operands in L2 (50 MB).
const L2_FLUSH_BYTES: usize = 256 << 20;

/// Reads `x` (and writes nothing unless a value is exactly `sentinel`, which it never is):
/// the L2 flush between timed runs.
#[kernel]
fn read_all(x: &[u32], sentinel: u32, out: &mut [u32]) {
    let mut v = 0u32;
    let mut i = global_index();
    while i < x.len() {
        v ^= x[i];
        i += grid_dim().x as usize * block_dim().x as usize;
    }
    if v == sentinel {
        out[0] = v;
    }
}

struct Options {
    sizes: Vec<(usize, usize, usize)>,
    runs: usize,
    markdown: Option<String>,
    cpu_check: bool,
}

/// Squares 1024..16384 and the LLM shapes M ∈ {512, 4096, 16384} × (N, K).
fn default_sizes() -> Vec<(usize, usize, usize)> {
    let mut sizes: Vec<_> = [1024, 2048, 4096, 8192, 16384]
        .iter()
        .map(|&s| (s, s, s))
        .collect();
    for m in [512, 4096, 16384] {
        for (n, k) in [(4096, 4096), (14336, 4096), (4096, 14336), (8192, 8192)] {
            sizes.push((m, n, k));
        }
    }
    sizes
}

fn options() -> Result<Options> {
    let mut options = Options {
        sizes: default_sizes(),
        runs: 20,
        markdown: None,
        cpu_check: false,
    };
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--sizes" => {
                let list = args
                    .next()
                    .ok_or("--sizes needs a list: 4096,8192 or 512x4096x4096")?;
                options.sizes = list
                    .split(',')
                    .map(|s| {
                        let dims: Vec<usize> = s
                            .split('x')
                            .map(str::parse)
                            .collect::<std::result::Result<_, _>>()?;
                        Ok(match dims[..] {
                            [s] => (s, s, s),
                            [m, n, k] => (m, n, k),
                            _ => return Err(format!("`{s}`: a size is S or MxNxK").into()),
                        })
                    })
                    .collect::<Result<_>>()?;
            }
            "--runs" => options.runs = args.next().ok_or("--runs needs a number")?.parse()?,
            "--markdown" => options.markdown = Some(args.next().ok_or("--markdown needs a file")?),
            "--cpu-check" => options.cpu_check = true,
            "--help" | "-h" => {
                println!(
                    "usage: gemm [--sizes S,MxNxK,..] [--runs N] [--markdown FILE] [--cpu-check]"
                );
                std::process::exit(0);
            }
            other => return Err(format!("unknown argument `{other}` (see --help)").into()),
        }
    }
    for &(m, n, k) in &options.sizes {
        if m % kernels::TILE_M != 0 || n % kernels::TILE_N != 0 || k % kernels::TILE_K != 0 {
            return Err(format!(
                "{m}x{n}x{k}: M must be a multiple of {}, N of {}, K of {}",
                kernels::TILE_M,
                kernels::TILE_N,
                kernels::TILE_K
            )
            .into());
        }
    }
    Ok(options)
}

fn main() -> std::process::ExitCode {
    match run() {
        Ok(true) => std::process::ExitCode::SUCCESS,
        Ok(false) => std::process::ExitCode::FAILURE,
        Err(error) => {
            eprintln!("gemm: {error}");
            std::process::ExitCode::FAILURE
        }
    }
}

fn run() -> Result<bool> {
    let options = options()?;
    if options.cpu_check {
        return cpu_check();
    }
    let context = cudajit::default_context()?;
    let stream = context.default_stream();
    let blas = cublas::Blas::new(stream.clone())?;
    let flush = stream.alloc_zeros::<u32>(L2_FLUSH_BYTES / 4)?;
    let mut flush_out = stream.alloc_zeros::<u32>(1)?;
    let name = context.name()?;
    println!("GPU: {name}");
    println!(
        "method: median of {} CUDA-event-timed runs after 5 warm-ups, cudajit and cuBLAS interleaved, 256 MiB read before each run",
        options.runs
    );
    let mut rows = Vec::new();
    let mut all_correct = true;
    for &(m, n, k) in &options.sizes {
        let row = measure(
            &stream,
            &blas,
            &flush,
            &mut flush_out,
            m,
            n,
            k,
            options.runs,
        )?;
        println!(
            "{m:>6} x {n:>6} x {k:>6}: cudajit {:.1} TFLOP/s ({:.3} ms), cuBLAS {:.1} TFLOP/s ({:.3} ms), ratio {:.3}, max error {:.2e} of max |C| {:.2e}: {}",
            row.cudajit_tflops(), row.cudajit_ms, row.cublas_tflops(), row.cublas_ms,
            row.cublas_ms / row.cudajit_ms, row.max_error, row.max_value,
            if row.correct { "correct" } else { "WRONG" }
        );
        all_correct &= row.correct;
        rows.push(row);
    }
    let table = table(&name, &rows, options.runs);
    println!("\n{table}");
    if let Some(path) = &options.markdown {
        std::fs::write(path, &table)?;
    }
    Ok(all_correct)
}

struct Row {
    m: usize,
    n: usize,
    k: usize,
    cudajit_ms: f64,
    cublas_ms: f64,
    max_error: f32,
    max_value: f32,
    correct: bool,
}

impl Row {
    fn flops(&self) -> f64 {
        2.0 * self.m as f64 * self.n as f64 * self.k as f64
    }
    fn cudajit_tflops(&self) -> f64 {
        self.flops() / self.cudajit_ms / 1e9
    }
    fn cublas_tflops(&self) -> f64 {
        self.flops() / self.cublas_ms / 1e9
    }
}

/// Deterministic values in [-1, 1), as bf16.
fn random_bf16(seed: u64, count: usize) -> Vec<bf16> {
    let mut state = seed.max(1);
    (0..count)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            bf16::from_f32(((state >> 40) as f32 / (1u64 << 24) as f32) * 2.0 - 1.0)
        })
        .collect()
}

#[allow(clippy::too_many_arguments)]
fn measure(
    stream: &Arc<CudaStream>,
    blas: &cublas::Blas,
    flush: &CudaSlice<u32>,
    flush_out: &mut CudaSlice<u32>,
    m: usize,
    n: usize,
    k: usize,
    runs: usize,
) -> Result<Row> {
    let a = stream.clone_htod(&random_bf16(m as u64 * 31 + k as u64, m * k))?;
    let b = stream.clone_htod(&random_bf16(n as u64 * 17 + k as u64 + 1, n * k))?;
    let mut c = stream.alloc_zeros::<f32>(m * n)?;
    let mut reference = stream.alloc_zeros::<f32>(m * n)?;
    let config = LaunchConfig::new(
        (
            (n / kernels::TILE_N) as u32,
            (m / kernels::TILE_M) as u32,
            1,
        ),
        kernels::THREADS,
    )
    .with_shared_mem(kernels::SHARED_BYTES);
    let (mu, nu, ku) = (m as u32, n as u32, k as u32);
    let launch_cudajit = |c: &mut CudaSlice<f32>| -> Result<()> {
        kernels::gemm_bf16_tn::launch(stream, config, mu, nu, ku, &a, &b, c)?;
        Ok(())
    };
    launch_cudajit(&mut c)?;
    blas.gemm_tn(m, n, k, &a, &b, &mut reference)?;
    let got = stream.clone_dtoh(&c)?;
    let want = stream.clone_dtoh(&reference)?;
    let max_value = want.iter().fold(0.0f32, |acc, v| acc.max(v.abs()));
    let max_error = got
        .iter()
        .zip(&want)
        .fold(0.0f32, |acc, (g, w)| acc.max((g - w).abs()));
    let correct = max_error <= 1e-3 * max_value.max(1.0) && got.iter().all(|v| v.is_finite());

    let flush_config = LaunchConfig::new(1056, 256);
    let mut time = |side: usize, c: &mut CudaSlice<f32>, r: &mut CudaSlice<f32>| -> Result<f64> {
        read_all::launch(stream, flush_config, flush, 1, flush_out)?;
        let start = stream.record_event(Some(CUevent_flags::CU_EVENT_DEFAULT))?;
        if side == 0 {
            launch_cudajit(c)?;
        } else {
            blas.gemm_tn(m, n, k, &a, &b, r)?;
        }
        let end = stream.record_event(Some(CUevent_flags::CU_EVENT_DEFAULT))?;
        end.synchronize()?;
        Ok(f64::from(start.elapsed_ms(&end)?))
    };
    for _ in 0..5 {
        time(0, &mut c, &mut reference)?;
        time(1, &mut c, &mut reference)?;
    }
    let mut ours = Vec::with_capacity(runs);
    let mut theirs = Vec::with_capacity(runs);
    for _ in 0..runs {
        ours.push(time(0, &mut c, &mut reference)?);
        theirs.push(time(1, &mut c, &mut reference)?);
    }
    Ok(Row {
        m,
        n,
        k,
        cudajit_ms: median(&mut ours),
        cublas_ms: median(&mut theirs),
        max_error,
        max_value,
        correct,
    })
}

fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    let mid = values.len() / 2;
    if values.len().is_multiple_of(2) {
        (values[mid - 1] + values[mid]) / 2.0
    } else {
        values[mid]
    }
}

fn table(gpu: &str, rows: &[Row], runs: usize) -> String {
    let mut out = format!(
        "GPU: {gpu}. C = A·B, bf16 inputs, f32 accumulate and output; B column by column (TN). Median of {runs} runs, CUDA events, L2 flushed before each run; every result checked against cuBLAS.\n\n\
         | M × N × K | cudajit mma.sync TFLOP/s | cuBLAS TFLOP/s | cudajit / cuBLAS | max error / max \\|C\\| |\n| --- | ---: | ---: | ---: | ---: |\n"
    );
    for row in rows {
        out.push_str(&format!(
            "| {} × {} × {} | {:.1} | {:.1} | **{:.3}** | {:.1e}{} |\n",
            row.m,
            row.n,
            row.k,
            row.cudajit_tflops(),
            row.cublas_tflops(),
            row.cublas_ms / row.cudajit_ms,
            row.max_error / row.max_value.max(1e-30),
            if row.correct { "" } else { " **WRONG**" }
        ));
    }
    out
}

/// Without a GPU: the kernel compiled for sm_90, and what its PTX holds.
fn cpu_check() -> Result<bool> {
    let ptx = linked_ptx(
        kernels::gemm_bf16_tn::KERNEL.captured(),
        &Specialization::default(),
        Arch::SM_90,
        &CompileOptions::default(),
    )?;
    let count = |needle: &str| ptx.matches(needle).count();
    println!(
        "gemm_bf16_tn for sm_90: {} mma.sync, {} ldmatrix, {} cp.async, {} .local",
        count("mma.sync.aligned.m16n8k16"),
        count("ldmatrix.sync.aligned"),
        count("cp.async.cg.shared.global"),
        count(".local")
    );
    Ok(count(".local") == 0)
}
