//! A bf16 GEMM on the H200's tensor cores written in cudajit (`kernels.rs`, `tiles.rs`:
//! mma.sync, ldmatrix, cp.async through `cudajit::tensor`), checked against cuBLAS and
//! timed beside it and beside the same algorithm in CUDA C++ (`benches/cuda/gemm_mma.cu`,
//! built by nvcc), in the same process.
//!
//! ```text
//! cargo run --release --example gemm                      # every size, table on stdout
//! cargo run --release --example gemm -- --layout nn --output bf16 --sizes 4096,8192
//! nvcc -O3 -arch=sm_90 -cubin -o gemm_mma.cubin benches/cuda/gemm_mma.cu
//! cargo run --release --example gemm -- --cuda-cubin gemm_mma.cubin --markdown gemm.md
//! cargo run --release --example gemm -- --cpu-check       # no GPU: compile both sides for sm_90
//! ```
//! (`scripts/gemm-stage.sh` and `scripts/gemm-run.sh` do all of it on the GPU machine.)
//!
//! Method: C = A·B, A M×K row-major bf16, B K×N bf16 column by column (`--layout tn`) or
//! row by row (`nn`), C M×N row-major in f32 or bf16 (`--output`); every result compared
//! with cuBLAS's (`cublasGemmEx`, bf16 in, f32 compute, the same output type) within
//! `1e-3 · max|C|` plus, for bf16, one bf16 spacing of the element; times are CUDA-event
//! medians of `--runs` (default 20) after 5 warm-ups, cudajit, nvcc and cuBLAS interleaved,
//! each after a 256 MiB read that leaves nothing in L2. TFLOP/s = 2·M·N·K / time.

pub(crate) mod cpu_check;
pub(crate) mod cublas;
pub(crate) mod fp8;
pub(crate) mod hopper;
pub(crate) mod kernels;
pub(crate) mod measure;
pub(crate) mod options;
pub(crate) mod startup;
pub(crate) mod tiles;
pub(crate) mod twin;

use cudajit::bf16;

use measure::{Bench, Row, L2_FLUSH_BYTES, WARMUPS};
use options::{Options, Output};

type Result<T> = std::result::Result<T, Box<dyn std::error::Error>>;

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
    if startup::is_child() {
        return startup::child();
    }
    let options = options::options()?;
    if let Some(runs) = options.startup {
        return startup::startup(runs);
    }
    if options.cpu_check {
        return cpu_check::cpu_check();
    }
    let context = cudajit::default_context()?;
    let stream = context.default_stream();
    let twin = match &options.cubin {
        Some(path) => Some(twin::Twin::load(
            &context,
            stream.clone(),
            path,
            options.algorithm,
            options.layout,
            options.output,
        )?),
        None => None,
    };
    let name = context.name()?;
    println!("GPU: {name}");
    println!(
        "method: median of {} CUDA-event-timed runs after {WARMUPS} warm-ups, contenders interleaved, {} MiB read before each run",
        options.runs,
        L2_FLUSH_BYTES >> 20
    );
    match &options.cubin {
        Some(path) => println!("nvcc twin: {}", path.display()),
        None => println!(
            "no nvcc twin (--cuda-cubin PATH, built with `{}`)",
            match options.algorithm {
                options::Algorithm::Mma => twin::BUILD,
                options::Algorithm::Wgmma | options::Algorithm::Fp8 => twin::BUILD_HOPPER,
            }
        ),
    }
    if options.algorithm == options::Algorithm::Fp8 {
        return run_fp8(
            Bench::new(
                stream,
                None,
                options.layout,
                options.algorithm,
                options.runs,
            )?,
            &name,
            &options,
        );
    }
    let mut bench = Bench::new(
        stream,
        twin,
        options.layout,
        options.algorithm,
        options.runs,
    )?;
    bench.cluster = options.cluster;
    bench.persistent = options.persistent;
    let mut rows = Vec::new();
    let mut all_correct = true;
    for &(m, n, k) in &options.sizes {
        let row = match options.output {
            Output::F32 => bench.measure::<f32>(m, n, k)?,
            Output::Bf16 => bench.measure::<bf16>(m, n, k)?,
        };
        println!("{}", line(&row));
        all_correct &= row.correct();
        rows.push(row);
    }
    let table = table(&name, &options, &rows);
    println!("\n{table}");
    if let Some(path) = &options.markdown {
        std::fs::write(path, &table)?;
    }
    Ok(all_correct)
}

/// `--kernel fp8`: cudajit's e4m3 wgmma GEMM against cuBLASLt at every size.
fn run_fp8(bench: Bench, gpu: &str, options: &Options) -> Result<bool> {
    let lt = fp8::Lt::new(bench.stream.clone())?;
    let mut rows = Vec::new();
    for &dims in &options.sizes {
        let row = fp8::measure(&bench, &lt, dims)?;
        println!(
            "{:>6} x {:>6} x {:>6}: cudajit {:.1} TFLOP/s, cuBLASLt {:.1} TFLOP/s, cudajit/cuBLASLt {:.3}; max error {:.2e} of {:.2e}: {}",
            dims.0,
            dims.1,
            dims.2,
            row.tflops(row.cudajit_ms),
            row.tflops(row.cublaslt_ms),
            row.cublaslt_ms / row.cudajit_ms,
            row.check.max_error,
            row.check.max_value,
            verdict(row.check.correct)
        );
        rows.push(row);
    }
    let table = fp8::table(gpu, options.runs, &rows);
    println!("\n{table}");
    if let Some(path) = &options.markdown {
        std::fs::write(path, &table)?;
    }
    Ok(rows.iter().all(|row| row.check.correct))
}

fn verdict(correct: bool) -> &'static str {
    if correct {
        "correct"
    } else {
        "WRONG"
    }
}

/// One size, as printed while the benchmark runs.
fn line(row: &Row) -> String {
    let mut out = format!(
        "{:>6} x {:>6} x {:>6}: cudajit {:.1} TFLOP/s ({:.3} ms), cuBLAS {:.1} TFLOP/s ({:.3} ms), cudajit/cuBLAS {:.3}",
        row.m,
        row.n,
        row.k,
        row.tflops(row.cudajit_ms),
        row.cudajit_ms,
        row.tflops(row.cublas_ms),
        row.cublas_ms,
        row.cublas_ms / row.cudajit_ms,
    );
    if let Some(ms) = row.nvcc_ms {
        out.push_str(&format!(
            ", nvcc {:.1} TFLOP/s ({ms:.3} ms), cudajit/nvcc {:.3}",
            row.tflops(ms),
            ms / row.cudajit_ms
        ));
    }
    out.push_str(&format!(
        "; cudajit max error {:.2e} of max |C| {:.2e}: {}",
        row.cudajit.max_error,
        row.cudajit.max_value,
        verdict(row.cudajit.correct)
    ));
    if let Some(check) = row.nvcc {
        out.push_str(&format!(
            ", nvcc max error {:.2e}: {}",
            check.max_error,
            verdict(check.correct)
        ));
    }
    out
}

/// The markdown table: speeds as ratios of times (higher is better for cudajit).
fn table(gpu: &str, options: &Options, rows: &[Row]) -> String {
    let b = match options.layout {
        options::Layout::Tn => "B column by column (TN)",
        options::Layout::Nn => "B row by row (NN)",
    };
    let twin = options.cubin.is_some();
    let kernel_name = if options.cluster {
        format!("{} (2-block clusters)", options.algorithm.name())
    } else if options.persistent {
        format!("{} (persistent)", options.algorithm.name())
    } else {
        options.algorithm.name().to_owned()
    };
    let mut out = format!(
        "GPU: {gpu}. C = A·B, bf16 inputs, f32 accumulate, {} output; {b}. Median of {} runs, CUDA events, L2 flushed before each run; every result checked against cuBLAS.\n\n",
        options.output.name(),
        options.runs
    );
    if twin {
        out.push_str(&format!("| M × N × K | cudajit {} TFLOP/s | nvcc twin TFLOP/s | cuBLAS TFLOP/s | cudajit / nvcc | cudajit / cuBLAS | max error / max \\|C\\| |\n| --- | ---: | ---: | ---: | ---: | ---: | ---: |\n", kernel_name));
    } else {
        out.push_str(&format!("| M × N × K | cudajit {} TFLOP/s | cuBLAS TFLOP/s | cudajit / cuBLAS | max error / max \\|C\\| |\n| --- | ---: | ---: | ---: | ---: |\n", kernel_name));
    }
    for row in rows {
        let wrong = if row.correct() { "" } else { " **WRONG**" };
        let error = row.cudajit.max_error / row.cudajit.max_value.max(1e-30);
        match row.nvcc_ms {
            Some(nvcc) => out.push_str(&format!(
                "| {} × {} × {} | {:.1} | {:.1} | {:.1} | **{:.3}** | {:.3} | {error:.1e}{wrong} |\n",
                row.m,
                row.n,
                row.k,
                row.tflops(row.cudajit_ms),
                row.tflops(nvcc),
                row.tflops(row.cublas_ms),
                nvcc / row.cudajit_ms,
                row.cublas_ms / row.cudajit_ms,
            )),
            None => out.push_str(&format!(
                "| {} × {} × {} | {:.1} | {:.1} | **{:.3}** | {error:.1e}{wrong} |\n",
                row.m,
                row.n,
                row.k,
                row.tflops(row.cudajit_ms),
                row.tflops(row.cublas_ms),
                row.cublas_ms / row.cudajit_ms,
            )),
        }
    }
    out
}
