//! Fused attention forward passes on the H200's tensor cores, written in cudajit:
//! FlashAttention-2's structure (`kernels.rs`: mma.sync, ldmatrix, cp.async) and
//! FlashAttention-3's (`hopper.rs`: TMA, wgmma, producer and consumer warpgroups), checked
//! against a straightforward host implementation (`reference.rs`) and timed.
//!
//! ```text
//! cargo run --release --example attention                  # checks, then the benchmark table
//! cargo run --release --example attention -- --checks      # the checks only
//! cargo run --release --example attention -- --csv a.csv   # also write the table as CSV
//! cargo run --release --example attention -- --only bf16:128,f16:64   # time only these
//! cargo run --release --example attention -- --cpu-check   # no GPU: compile every form for sm_90(a), its PTX and registers
//! python3 examples/attention/sdpa_bench.py --csv s.csv     # PyTorch's SDPA (flash, cuDNN) on the same shapes
//! python3 examples/attention/plot.py a.csv s.csv out.png   # the comparison table and plot
//! ```
//!
//! Shapes (issue 20): batch 16 × heads 16 at head dim 128 and batch 32 × heads 32 at head
//! dim 64, plus batch 16 × heads 16 at head dim 256; bf16 and f16; sequence 512 … 16384,
//! causal and not; the wgmma kernel at head dims 64 and 128. TFLOP/s counts FlashAttention's
//! way: 4·B·H·S²·D, halved for causal.
//! Times are CUDA-event medians of 20 runs after 5 warm-ups.

mod hopper;
mod kernels;
mod ptxas;
mod reference;

use cudajit::codegen::compile::{linked_ptx, CompileOptions};
use cudajit::core::ir::Literal;
use cudajit::core::Scalar;
use cudajit::{bf16, f16, Arch, CudaSlice, Specialization};
use cudarc::driver::sys::CUevent_flags;
use kernels::{Element, Problem};
use std::io::Write;
use std::sync::Arc;

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

/// FlashAttention's FLOP count of a problem.
fn flops(p: &Problem) -> f64 {
    let full = 4.0 * (p.batch * p.heads) as f64 * (p.seq as f64).powi(2) * p.dim as f64;
    if p.causal {
        full / 2.0
    } else {
        full
    }
}

/// Which kernel runs: FlashAttention-2's structure (`kernels.rs`, every form) or
/// FlashAttention-3's (`hopper.rs`, head dimensions 64 and 128, 128-key tiles).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kernel {
    Fa2,
    Wgmma,
}

impl Kernel {
    /// The name in tables and CSVs.
    fn name(self) -> &'static str {
        match self {
            Kernel::Fa2 => "cudajit",
            Kernel::Wgmma => "cudajit-wgmma",
        }
    }
}

/// The tensors of a problem on the GPU.
struct Tensors<T: Element> {
    q: CudaSlice<T>,
    k: CudaSlice<T>,
    v: CudaSlice<T>,
    o: CudaSlice<T>,
    lse: CudaSlice<f32>,
}

impl<T: Element> Tensors<T> {
    fn new(
        stream: &Arc<cudajit::CudaStream>,
        p: &Problem,
        host: (&[T], &[T], &[T]),
    ) -> Result<Self> {
        Ok(Tensors {
            q: stream.clone_htod(host.0)?,
            k: stream.clone_htod(host.1)?,
            v: stream.clone_htod(host.2)?,
            o: stream.alloc_zeros::<T>(p.batch * p.heads * p.seq * p.dim)?,
            lse: stream.alloc_zeros::<f32>(p.batch * p.heads * p.seq)?,
        })
    }

    fn launch(
        &mut self,
        stream: &Arc<cudajit::CudaStream>,
        p: &Problem,
        kernel: Kernel,
    ) -> Result<()> {
        if kernel == Kernel::Wgmma {
            let dims = (p.batch, p.heads, p.kv_heads, p.seq, p.dim);
            return hopper::launch(
                stream,
                dims,
                p.causal,
                &self.q,
                &self.k,
                &self.v,
                &mut self.o,
                &mut self.lse,
            );
        }
        kernels::launch(
            stream,
            p,
            &self.q,
            &self.k,
            &self.v,
            &mut self.o,
            &mut self.lse,
        )
    }
}

/// Runs a small problem and compares every output with the host's (bounds of
/// `reference.rs`).
fn check<T: Element>(
    stream: &Arc<cudajit::CudaStream>,
    p: &Problem,
    kernel: Kernel,
) -> Result<bool> {
    let q = reference::random::<T>(p.seq as u64 * 3 + 1, p.batch * p.heads * p.seq * p.dim);
    let k = reference::random::<T>(p.seq as u64 * 5 + 2, p.batch * p.kv_heads * p.seq * p.dim);
    let v = reference::random::<T>(p.seq as u64 * 7 + 3, k.len());
    let mut x = Tensors::new(stream, p, (&q, &k, &v))?;
    x.launch(stream, p, kernel)?;
    let o = stream.clone_dtoh(&x.o)?;
    let lse = stream.clone_dtoh(&x.lse)?;
    let (worst_o, worst_lse, _) = reference::worst_errors(p, (&q, &k, &v), &o, &lse);
    let ok = worst_o <= reference::output_bound::<T>() && worst_lse <= reference::LSE_BOUND;
    println!(
        "check {} {} d={} kv={} b={} h={} kv_h={} s={} causal={}: max |o - ref| {worst_o:.2e}, max |lse - ref| {worst_lse:.2e}: {}",
        kernel.name(), T::NAME, p.dim, p.kv, p.batch, p.heads, p.kv_heads, p.seq, p.causal,
        if ok { "correct" } else { "WRONG" }
    );
    Ok(ok)
}

/// The problems checked on the GPU: every form of both kernels and element type, GQA (1
/// and 2 KV heads), causal and not, sequence lengths that are and are not multiples of the
/// tiles.
fn checks(stream: &Arc<cudajit::CudaStream>) -> Result<bool> {
    let mut all = true;
    let forms = kernels::FORMS.iter().map(|&(d, kv)| (Kernel::Fa2, d, kv));
    let wgmma = [(Kernel::Wgmma, 64, 128), (Kernel::Wgmma, 128, 128)];
    for (kernel, dim, kv) in forms.chain(wgmma) {
        for (batch, heads, kv_heads, seq, causal) in [
            (1, 2, 2, 128, false),
            (1, 2, 2, 192, true),
            (2, 4, 1, 256, false),
            (1, 4, 2, 320, true),
            (1, 2, 1, 100, false),
            (1, 2, 2, 257, true),
            (2, 4, 2, 77, true),
        ] {
            let p = Problem {
                dim,
                kv,
                batch,
                heads,
                kv_heads,
                seq,
                causal,
            };
            all &= check::<bf16>(stream, &p, kernel)?;
            all &= check::<f16>(stream, &p, kernel)?;
        }
    }
    Ok(all)
}

/// The median of 20 launches after 5 warm-ups, in ms.
fn time<T: Element>(
    stream: &Arc<cudajit::CudaStream>,
    p: &Problem,
    kernel: Kernel,
    x: &mut Tensors<T>,
) -> Result<f64> {
    let mut times = Vec::new();
    for run in 0..25 {
        let start = stream.record_event(Some(CUevent_flags::CU_EVENT_DEFAULT))?;
        x.launch(stream, p, kernel)?;
        let end = stream.record_event(Some(CUevent_flags::CU_EVENT_DEFAULT))?;
        end.synchronize()?;
        if run >= 5 {
            times.push(f64::from(start.elapsed_ms(&end)?));
        }
    }
    times.sort_by(f64::total_cmp);
    Ok(times[times.len() / 2])
}

const SEQUENCES: [usize; 6] = [512, 1024, 2048, 4096, 8192, 16384];

/// Times every sequence length, causal and not, for the configuration `(dim, batch,
/// heads)` in `T` with `kernel` and each of `tiles` (keys per KV tile; 128 for the wgmma
/// kernel): one table row (and CSV line) per measurement. The inputs are made once at the
/// longest sequence (for each of Q, K and V its own 1 Mi random values, repeated: the
/// tensor cores' power, and so the clock the power limit allows, depends on the data, so Q,
/// K and V differ as in real attention) and each shorter problem reads their start.
fn bench<T: Element>(
    stream: &Arc<cudajit::CudaStream>,
    kernel: Kernel,
    (dim, batch, heads): (usize, usize, usize),
    tiles: &[usize],
    csv: &mut Option<std::fs::File>,
) -> Result<()> {
    let longest = Problem {
        dim,
        kv: tiles[0],
        batch,
        heads,
        kv_heads: heads,
        seq: SEQUENCES[SEQUENCES.len() - 1],
        causal: false,
    };
    let tensor = |seed: u64| -> Vec<T> {
        let pattern = reference::random::<T>(seed, 1 << 20);
        let len = batch * heads * longest.seq * dim;
        pattern.iter().copied().cycle().take(len).collect()
    };
    let (q, k, v) = (
        tensor(3 * dim as u64),
        tensor(5 * dim as u64),
        tensor(7 * dim as u64),
    );
    let mut x = Tensors::new(stream, &longest, (&q, &k, &v))?;
    drop((q, k, v));
    for &kv in tiles {
        for causal in [false, true] {
            for seq in SEQUENCES {
                let p = Problem {
                    kv,
                    seq,
                    causal,
                    ..longest
                };
                let ms = time(stream, &p, kernel, &mut x)?;
                let tflops = flops(&p) / ms / 1e9;
                println!(
                    "| {} | {} | {dim} | {kv} | {batch} × {heads} | {seq} | {causal} | {ms:.3} | {tflops:.1} |",
                    kernel.name(),
                    T::NAME
                );
                if let Some(file) = csv {
                    writeln!(
                        file,
                        "{},{},{dim},{kv},{batch},{heads},{seq},{causal},{ms:.4},{tflops:.2}",
                        kernel.name(),
                        T::NAME
                    )?;
                }
            }
        }
    }
    Ok(())
}

/// Without a GPU: every form and element type compiled for sm_90, what its PTX holds and
/// what ptxas allocated; `false` if any uses local memory.
fn cpu_check() -> Result<bool> {
    let mut ok = true;
    for (dim, kv) in kernels::FORMS {
        for ty in [Scalar::BF16, Scalar::F16] {
            let spec = kernels::specialization(ty, dim, kv);
            let ptx = linked_ptx(
                kernels::attention_fwd::KERNEL.captured(),
                &spec,
                Arch::SM_90,
                &CompileOptions::default(),
            )?;
            let used = ptxas::resources(kernels::attention_fwd::KERNEL.captured(), &spec)?;
            let count = |needle: &str| ptx.matches(needle).count();
            println!(
                "attention_fwd<{ty:?}, {dim}, {kv}> for sm_90: {} mma.sync, {} ldmatrix, {} cp.async, {} ex2.approx, {} .local; ptxas: {used}",
                count("mma.sync.aligned.m16n8k16"),
                count("ldmatrix.sync.aligned"),
                count("cp.async.cg.shared.global"),
                count("ex2.approx"),
                count(".local"),
            );
            ok &= count(".local") == 0 && used.no_local_memory();
        }
    }
    for (dim, half) in [(64u64, false), (128, false), (64, true), (128, true)] {
        let spec = Specialization {
            types: vec![(
                "T".to_owned(),
                if half { Scalar::F16 } else { Scalar::BF16 },
            )],
            structs: Vec::new(),
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
    Ok(ok)
}

fn run() -> Result<bool> {
    let args: Vec<String> = std::env::args().collect();
    if args.iter().any(|a| a == "--cpu-check") {
        return cpu_check();
    }
    let mut csv = match args.iter().position(|a| a == "--csv") {
        Some(i) => {
            let path = args.get(i + 1).ok_or("--csv takes a file name")?;
            let mut file = std::fs::File::create(path)?;
            writeln!(file, "impl,dtype,dim,kv,batch,heads,seq,causal,ms,tflops")?;
            Some(file)
        }
        None => None,
    };
    let context = cudajit::default_context()?;
    let stream = context.default_stream();
    println!("GPU: {}", context.name()?);
    // `--skip-checks`: time only (the checks ran in an earlier call of the same session).
    let all = args.iter().any(|a| a == "--skip-checks") || checks(&stream)?;
    if args.iter().any(|a| a == "--checks") {
        return Ok(all);
    }
    println!(
        "\n| kernel | dtype | head dim | KV tile | batch × heads | seq | causal | cudajit ms | cudajit TFLOP/s |\n| --- | --- | ---: | ---: | --- | ---: | --- | ---: | ---: |"
    );
    // The tile each head dimension runs with first, then the one it is compared with.
    use kernels::kv_tile;
    use Kernel::{Fa2, Wgmma};
    // `--only bf16:128,..`: time only these (element type, head dimension) configurations.
    let only: Option<Vec<String>> = args
        .iter()
        .position(|a| a == "--only")
        .and_then(|i| args.get(i + 1))
        .map(|list| list.split(',').map(str::to_owned).collect());
    let chosen = |name: &str, dim: usize| {
        only.as_ref()
            .is_none_or(|list| list.iter().any(|o| *o == format!("{name}:{dim}")))
    };
    macro_rules! bench {
        ($t:ty, $kernel:expr, ($dim:expr, $b:expr, $h:expr), $tiles:expr) => {
            if chosen(<$t as Element>::NAME, $dim) {
                bench::<$t>(&stream, $kernel, ($dim, $b, $h), $tiles, &mut csv)?;
            }
        };
    }
    bench!(bf16, Wgmma, (128, 16, 16), &[128]);
    bench!(bf16, Wgmma, (64, 32, 32), &[128]);
    bench!(f16, Wgmma, (128, 16, 16), &[128]);
    bench!(f16, Wgmma, (64, 32, 32), &[128]);
    bench!(bf16, Fa2, (128, 16, 16), &[kv_tile(128), 128]);
    bench!(bf16, Fa2, (64, 32, 32), &[kv_tile(64), 64]);
    bench!(bf16, Fa2, (256, 16, 16), &[kv_tile(256), 64]);
    bench!(f16, Fa2, (128, 16, 16), &[kv_tile(128)]);
    bench!(f16, Fa2, (64, 32, 32), &[kv_tile(64)]);
    bench!(f16, Fa2, (256, 16, 16), &[kv_tile(256)]);
    Ok(all)
}
