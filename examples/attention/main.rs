//! A fused attention forward pass (FlashAttention-2's structure) on the H200's tensor
//! cores, written in cudajit (`kernels.rs`), checked against a straightforward host
//! implementation and timed.
//!
//! ```text
//! cargo run --release --example attention                  # checks, then the benchmark table
//! cargo run --release --example attention -- --cpu-check   # no GPU: compile for sm_90, the PTX's shape
//! python3 examples/attention/sdpa_bench.py                 # PyTorch's SDPA (flash, cuDNN) on the same shapes
//! ```
//!
//! Shapes (issue 20): batch 16 × heads 16, head dim 128, sequence 512 … 16384, causal and
//! not. TFLOP/s counts FlashAttention's way: 4·B·H·S²·D, halved for causal. Times are
//! CUDA-event medians of 20 runs after 5 warm-ups.

mod hopper;
mod kernels;

use cudajit::codegen::compile::{linked_ptx, CompileOptions};
use cudajit::core::ir::Literal;
use cudajit::core::Scalar;
use cudajit::{bf16, Arch, CudaSlice, LaunchConfig, Specialization};
use cudarc::driver::sys::CUevent_flags;

type Result<T> = std::result::Result<T, Box<dyn std::error::Error>>;

fn main() -> std::process::ExitCode {
    match run() {
        Ok(true) => std::process::ExitCode::SUCCESS,
        Ok(false) => std::process::ExitCode::FAILURE,
        Err(error) => {
            eprintln!("attention: {error}");
            std::process::ExitCode::FAILURE
        }
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

struct Shape {
    dim: usize,
    batch: usize,
    heads: usize,
    kv_heads: usize,
    seq: usize,
    causal: bool,
}

impl Shape {
    fn flops(&self) -> f64 {
        let full =
            4.0 * (self.batch * self.heads) as f64 * (self.seq as f64).powi(2) * self.dim as f64;
        if self.causal {
            full / 2.0
        } else {
            full
        }
    }
}

struct Inputs {
    q: CudaSlice<bf16>,
    k: CudaSlice<bf16>,
    v: CudaSlice<bf16>,
    o: CudaSlice<bf16>,
    lse: CudaSlice<f32>,
    host: (Vec<bf16>, Vec<bf16>, Vec<bf16>),
}

fn inputs(stream: &std::sync::Arc<cudajit::CudaStream>, shape: &Shape) -> Result<Inputs> {
    let q_len = shape.batch * shape.heads * shape.seq * shape.dim;
    let kv_len = shape.batch * shape.kv_heads * shape.seq * shape.dim;
    let hq = random_bf16(shape.seq as u64 * 3 + 1, q_len);
    let hk = random_bf16(shape.seq as u64 * 5 + 2, kv_len);
    let hv = random_bf16(shape.seq as u64 * 7 + 3, kv_len);
    Ok(Inputs {
        q: stream.clone_htod(&hq)?,
        k: stream.clone_htod(&hk)?,
        v: stream.clone_htod(&hv)?,
        o: stream.alloc_zeros::<bf16>(q_len)?,
        lse: stream.alloc_zeros::<f32>(shape.batch * shape.heads * shape.seq)?,
        host: (hq, hk, hv),
    })
}

/// `--kernel wgmma`: the FlashAttention-3-style kernel (`hopper.rs`).
fn wgmma_selected() -> bool {
    let args: Vec<String> = std::env::args().collect();
    args.windows(2)
        .any(|w| w[0] == "--kernel" && w[1] == "wgmma")
}

fn launch(
    stream: &std::sync::Arc<cudajit::CudaStream>,
    shape: &Shape,
    x: &mut Inputs,
) -> Result<()> {
    if wgmma_selected() {
        let dims = (
            shape.batch,
            shape.heads,
            shape.kv_heads,
            shape.seq,
            shape.dim,
        );
        return hopper::launch(
            stream,
            dims,
            shape.causal,
            &x.q,
            &x.k,
            &x.v,
            &mut x.o,
            &mut x.lse,
        );
    }
    let config = LaunchConfig::new(
        (
            shape.seq.div_ceil(kernels::BLOCK_Q) as u32,
            shape.heads as u32,
            shape.batch as u32,
        ),
        kernels::THREADS,
    )
    .with_shared_mem(kernels::shared_bytes(shape.dim));
    let args = (
        shape.seq as u32,
        shape.heads as u32,
        shape.kv_heads as u32,
        1.0 / (shape.dim as f32).sqrt(),
        shape.causal,
    );
    match shape.dim {
        64 => kernels::attention_fwd::launch::<64>(
            stream, config, &x.q, &x.k, &x.v, &mut x.o, &mut x.lse, args.0, args.1, args.2, args.3,
            args.4,
        )?,
        128 => kernels::attention_fwd::launch::<128>(
            stream, config, &x.q, &x.k, &x.v, &mut x.o, &mut x.lse, args.0, args.1, args.2, args.3,
            args.4,
        )?,
        other => return Err(format!("head dimension {other}: the kernel takes 64 or 128").into()),
    }
    Ok(())
}

/// The host's attention of one (batch, head): output rows and log-sum-exps, in f64.
fn reference(shape: &Shape, x: &Inputs, b: usize, h: usize) -> (Vec<f64>, Vec<f64>) {
    let (q, k, v) = &x.host;
    let s = shape.seq;
    let kvh = h / (shape.heads / shape.kv_heads);
    let dim = shape.dim;
    let qo = (b * shape.heads + h) * s * dim;
    let ko = (b * shape.kv_heads + kvh) * s * dim;
    let scale = 1.0 / (dim as f64).sqrt();
    let mut out = vec![0.0; s * dim];
    let mut lse = vec![0.0; s];
    for i in 0..s {
        let keys = if shape.causal { i + 1 } else { s };
        let scores: Vec<f64> = (0..keys)
            .map(|j| {
                (0..dim)
                    .map(|d| {
                        f64::from(q[qo + i * dim + d].to_f32())
                            * f64::from(k[ko + j * dim + d].to_f32())
                    })
                    .sum::<f64>()
                    * scale
            })
            .collect();
        let m = scores.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
        let sum: f64 = scores.iter().map(|s| (s - m).exp()).sum();
        lse[i] = m + sum.ln();
        for (j, score) in scores.iter().enumerate() {
            let p = (score - m).exp() / sum;
            for d in 0..dim {
                out[i * dim + d] += p * f64::from(v[ko + j * dim + d].to_f32());
            }
        }
    }
    (out, lse)
}

/// Runs a small shape and compares every output with the host's: the error bound of bf16
/// P and output (8 bits of mantissa): 2e-2 absolute on outputs of magnitude below 1.
fn check(stream: &std::sync::Arc<cudajit::CudaStream>, shape: &Shape) -> Result<bool> {
    let mut x = inputs(stream, shape)?;
    launch(stream, shape, &mut x)?;
    let o = stream.clone_dtoh(&x.o)?;
    let lse = stream.clone_dtoh(&x.lse)?;
    let (mut worst_o, mut worst_lse) = (0.0f64, 0.0f64);
    for b in 0..shape.batch {
        for h in 0..shape.heads {
            let (want_o, want_lse) = reference(shape, &x, b, h);
            let first = (b * shape.heads + h) * shape.seq;
            for (i, w) in want_o.iter().enumerate() {
                worst_o = worst_o.max((f64::from(o[first * shape.dim + i].to_f32()) - w).abs());
            }
            for (i, w) in want_lse.iter().enumerate() {
                worst_lse = worst_lse.max((f64::from(lse[first + i]) - w).abs());
            }
        }
    }
    let ok = worst_o <= 2e-2 && worst_lse <= 1e-3;
    println!(
        "check d={} b={} h={} kv_h={} s={} causal={}: max |o - ref| {worst_o:.2e}, max |lse - ref| {worst_lse:.2e}: {}",
        shape.dim, shape.batch, shape.heads, shape.kv_heads, shape.seq, shape.causal,
        if ok { "correct" } else { "WRONG" }
    );
    Ok(ok)
}

fn time(stream: &std::sync::Arc<cudajit::CudaStream>, shape: &Shape) -> Result<f64> {
    let mut x = inputs(stream, shape)?;
    let mut times = Vec::new();
    for run in 0..25 {
        let start = stream.record_event(Some(CUevent_flags::CU_EVENT_DEFAULT))?;
        launch(stream, shape, &mut x)?;
        let end = stream.record_event(Some(CUevent_flags::CU_EVENT_DEFAULT))?;
        end.synchronize()?;
        if run >= 5 {
            times.push(f64::from(start.elapsed_ms(&end)?));
        }
    }
    times.sort_by(f64::total_cmp);
    Ok(times[times.len() / 2])
}

fn run() -> Result<bool> {
    if std::env::args().any(|a| a == "--cpu-check") {
        let mut ok = true;
        for dim in [64u64, 128] {
            let spec = Specialization {
                types: vec![],
                consts: vec![(
                    "D".to_owned(),
                    Literal::Int {
                        bits: dim,
                        ty: Scalar::Usize,
                    },
                )],
            };
            let ptx = linked_ptx(
                kernels::attention_fwd::KERNEL.captured(),
                &spec,
                Arch::SM_90,
                &CompileOptions::default(),
            )?;
            let count = |needle: &str| ptx.matches(needle).count();
            println!(
                "attention_fwd<{dim}> for sm_90: {} mma.sync, {} ldmatrix, {} cp.async, {} ex2.approx, {} .local",
                count("mma.sync.aligned.m16n8k16"),
                count("ldmatrix.sync.aligned"),
                count("cp.async.cg.shared.global"),
                count("ex2.approx"),
                count(".local")
            );
            ok &= count(".local") == 0;
        }
        for (dim, half) in [(64u64, false), (128, false), (128, true)] {
            let spec = Specialization {
                types: vec![(
                    "T".to_owned(),
                    if half { Scalar::F16 } else { Scalar::BF16 },
                )],
                consts: vec![
                    (
                        "D".to_owned(),
                        Literal::Int {
                            bits: dim,
                            ty: Scalar::Usize,
                        },
                    ),
                    ("HALF".to_owned(), Literal::Bool(half)),
                    (
                        "O_REGS".to_owned(),
                        Literal::Int {
                            bits: dim / 2,
                            ty: Scalar::Usize,
                        },
                    ),
                ],
            };
            let ptx = linked_ptx(
                hopper::attention_wgmma::KERNEL.captured(),
                &spec,
                Arch::SM_90A,
                &CompileOptions::default(),
            )?;
            if let Ok(dir) = std::env::var("ATTENTION_PTX") {
                std::fs::write(format!("{dir}/attention_wgmma_{dim}_{half}.ptx"), &ptx)?;
            }
            let count = |needle: &str| ptx.matches(needle).count();
            println!(
                "attention_wgmma<D = {dim}, f16 = {half}> for sm_90a: {} wgmma.mma_async, {} cp.async.bulk.tensor, {} ex2.approx, {} .local",
                count("wgmma.mma_async"),
                count("cp.async.bulk.tensor"),
                count("ex2.approx"),
                count(".local")
            );
            ok &= count(".local") == 0;
        }
        return Ok(ok);
    }
    let context = cudajit::default_context()?;
    let stream = context.default_stream();
    println!("GPU: {}", context.name()?);
    let mut all = true;
    // Both head dimensions, GQA (1 and 2 KV heads), causal and not, sequence lengths that
    // are and are not multiples of the 64-row tiles.
    for (dim, batch, heads, kv_heads, seq, causal) in [
        (128, 1, 2, 2, 128, false),
        (128, 1, 2, 2, 192, true),
        (128, 2, 4, 1, 256, false),
        (128, 1, 4, 2, 320, true),
        (128, 1, 2, 1, 100, false),
        (128, 1, 2, 2, 257, true),
        (64, 1, 2, 2, 128, false),
        (64, 2, 4, 2, 200, true),
        (64, 1, 4, 1, 77, false),
    ] {
        all &= check(
            &stream,
            &Shape {
                dim,
                batch,
                heads,
                kv_heads,
                seq,
                causal,
            },
        )?;
    }
    println!(
        "\n| head dim | batch × heads | seq | causal | cudajit ms | cudajit TFLOP/s |\n| ---: | --- | ---: | --- | ---: | ---: |"
    );
    // `--dim N` times one head dimension only.
    let args: Vec<String> = std::env::args().collect();
    let only_dim = args
        .windows(2)
        .find(|w| w[0] == "--dim")
        .and_then(|w| w[1].parse::<usize>().ok());
    for (dim, batch, heads) in [(128, 16, 16), (64, 32, 32)] {
        if only_dim.is_some_and(|d| d != dim) {
            continue;
        }
        for causal in [false, true] {
            for seq in [512, 1024, 2048, 4096, 8192, 16384] {
                let shape = Shape {
                    dim,
                    batch,
                    heads,
                    kv_heads: heads,
                    seq,
                    causal,
                };
                let ms = time(&stream, &shape)?;
                println!(
                    "| {dim} | {batch} × {heads} | {seq} | {causal} | {ms:.3} | {:.1} |",
                    shape.flops() / ms / 1e9
                );
            }
        }
    }
    Ok(all)
}
