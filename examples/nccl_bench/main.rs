//! NCCL device-API collectives against NCCL's own: one process drives every visible GPU
//! (`ncclCommInitAll`, at least 2), and for each size measures
//!
//! | collective | contenders |
//! | --- | --- |
//! | all-reduce (sum) | `ncclAllReduce`; reference one-shot and two-shot LSA kernels |
//! | all-gather | `ncclAllGather`; reference LSA all-gather (push) |
//! | peer read | `cuMemcpyPeerAsync`; reference LSA peer read (pull) |
//!
//! The reference kernels are CUDA C++ over NCCL 2.28's `nccl_device.h`
//! (`examples/nccl_reference/lsa_collectives.cu`, built by nvcc into a cubin against the
//! headers of the loaded libnccl); their window convention is documented at the top of
//! that file and followed here for every contender: input at offset 0 of one symmetric
//! window, output at `round_up(bytes, 4096)`. NCCL's collectives therefore run on
//! registered symmetric memory too.
//!
//! Every contender is checked at each size up to `--verify-max` against a host reference
//! (all-reduce inputs are small integers, so every contender, NCCL included, must be
//! bit-exact), with the output poisoned before the checked run; f32, bf16 and i32 are
//! also checked at odd sizes that exercise the scalar tails. Times are CUDA-event medians
//! of `--samples` samples after `--warmup` launches; a sample is a batch of back-to-back
//! launches (up to 20 for small sizes, so launch skew between GPUs is amortised), timed
//! on every GPU, the slowest GPU counting. Bandwidths (GB/s = 1e9 B/s), with `bytes` the
//! input per rank and `n` ranks, as nccl-tests defines them:
//! all-reduce busbw = 2(n-1)/n * bytes/t; all-gather busbw = (n-1)/n * n*bytes/t;
//! peer read = bytes/t.
//!
//! ```text
//! nvcc -O3 -arch=sm_90 -cubin -std=c++17 [-I<nccl include>] -o lsa_collectives.cubin \
//!     examples/nccl_reference/lsa_collectives.cu
//! NCCL_NVLS_ENABLE=0 cargo run --release --example nccl_bench -- \
//!     --reference lsa_collectives.cubin --max-bytes 1G --out bench-out
//! ```
//!
//! Writes `nccl_bench.csv` and `nccl_bench.svg` (bandwidth and latency against size)
//! to `--out` (default `$OUT`, else `target/nccl_bench`). Exit status 1 when any check
//! failed. `scripts/nccl-bench-stage.sh` stages it for the GPU machine.
//!
//! cudajit's own kernels (`examples/lsa/kernels.rs`) are the contenders of
//! `nccl_bench/cudajit_contenders.rs`.

mod contenders;
mod cudajit_contenders;
mod elem;
#[path = "../lsa/kernels.rs"]
mod lsa;
mod measure;
mod options;
mod pass;
#[path = "../bench/peer.rs"]
mod peer;
mod report;
mod setup;
mod svg;

use std::error::Error;

use cudajit::bf16;
use cudajit::nccl::{Communicator, LoadedNccl};
use cudajit::CudaContext;
use cudarc::driver::sys::{self, CUevent_flags};

use contenders::*;
use elem::*;
use measure::*;
use options::*;
use pass::*;
use report::*;
use setup::*;

type BenchResult<T> = Result<T, Box<dyn Error>>;

/// Where the output region starts (the .cu file's `output_offset`, offset 0).
const OUTPUT_ALIGN: usize = 4096;
/// Byte pattern written over outputs before a checked run: 0x7f7f7f7f is no sum of the
/// inputs in f32, bf16 or i32.
const POISON: u8 = 0x7f;
/// The most back-to-back launches in one timing sample.
const MAX_BATCH: usize = 20;
/// Bytes a timing sample should move at least (fewer launches per sample above it).
const BATCH_BYTES: usize = 64 << 20;

fn main() -> std::process::ExitCode {
    match run() {
        Ok(true) => std::process::ExitCode::SUCCESS,
        Ok(false) => {
            eprintln!("nccl_bench: some results were WRONG (see above)");
            std::process::ExitCode::FAILURE
        }
        Err(e) => {
            eprintln!("nccl_bench: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}

fn gpu_count() -> Result<usize, String> {
    // SAFETY: only probes whether libcuda can be opened (cudarc panics otherwise).
    if !unsafe { sys::is_culib_present() } {
        return Err("no CUDA driver (libcuda.so.1)".into());
    }
    CudaContext::device_count()
        .map(|n| n.max(0) as usize)
        .map_err(|e| format!("CUDA driver: {e}"))
}

fn run() -> BenchResult<bool> {
    let opts = Options::parse()?;
    let visible = match gpu_count() {
        Ok(n) => n,
        Err(e) => {
            println!("SKIPPED: {e}");
            return Ok(true);
        }
    };
    let devices = opts
        .devices
        .clone()
        .unwrap_or_else(|| (0..visible).collect());
    if devices.len() < 2 {
        println!(
            "SKIPPED: {} GPU(s) selected of {visible} visible; the benchmark needs at least 2",
            devices.len()
        );
        return Ok(true);
    }
    // NVLink multicast stays off on shared machines; set before NCCL reads it.
    if std::env::var("NCCL_NVLS_ENABLE").as_deref() != Ok("0") {
        std::env::set_var("NCCL_NVLS_ENABLE", "0");
    }
    let nccl = LoadedNccl::global()?;
    print!("{}", nccl.report());
    let comm = Communicator::init_all(&nccl, &devices)?;
    let n = devices.len();
    let mut streams = Vec::new();
    let mut events = Vec::new();
    for (i, device) in devices.iter().enumerate() {
        let ctx = comm.context(i).ok_or("no context")?;
        println!("rank {i}: GPU {device} {}", ctx.name()?);
        streams.push(ctx.new_stream()?);
        let flags = Some(CUevent_flags::CU_EVENT_DEFAULT);
        events.push((ctx.new_event(flags)?, ctx.new_event(flags)?));
    }
    let reference = match &opts.reference {
        Some(path) => {
            let size = nccl.layouts().generation.dev_comm.size;
            Some(load_reference(&comm, path, size)?)
        }
        None => {
            println!("no --reference cubin: NCCL and cuMemcpyPeer only");
            None
        }
    };
    let setup = Setup {
        comm,
        streams,
        events,
        reference,
    };

    println!("\nchecking f32, bf16 and i32 at sizes with scalar tails");
    let mut checks = check_tails::<f32>(&setup, &opts)?;
    checks.extend(check_tails::<bf16>(&setup, &opts)?);
    checks.extend(check_tails::<i32>(&setup, &opts)?);
    let dtype = match opts.dtype {
        DType::F32 => "f32",
        DType::Bf16 => "bf16",
        DType::I32 => "i32",
    };
    println!(
        "\nmeasuring {dtype}, {} to {} bytes per rank, median of {} samples",
        opts.min_bytes, opts.max_bytes, opts.samples
    );
    let rows = match opts.dtype {
        DType::F32 => sweep::<f32>(&setup, &opts)?,
        DType::Bf16 => sweep::<bf16>(&setup, &opts)?,
        DType::I32 => sweep::<i32>(&setup, &opts)?,
    };
    print!("{}", table(&rows, n));

    let all_ok = checks.iter().chain(&rows).all(|r| r.correct != Some(false));
    let checked = checks
        .iter()
        .chain(&rows)
        .filter(|r| r.correct.is_some())
        .count();
    println!(
        "checks: {checked} run, {}",
        if all_ok { "all correct" } else { "SOME WRONG" }
    );
    std::fs::create_dir_all(&opts.out)?;
    let mut all = checks;
    all.extend(rows.iter().cloned());
    let csv_path = opts.out.join("nccl_bench.csv");
    std::fs::write(&csv_path, csv(&all, n))?;
    let title = format!(
        "NCCL {} on {n} GPUs ({}): cudajit kernels, CUDA C++ reference kernels and NCCL",
        nccl.version(),
        dtype
    );
    let svg_path = opts.out.join("nccl_bench.svg");
    std::fs::write(&svg_path, plot(&rows, n, &title))?;
    println!("wrote {} and {}", csv_path.display(), svg_path.display());
    drop(setup);
    Ok(all_ok)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse_and_step() {
        assert_eq!(parse_bytes("4K").unwrap(), 4096);
        assert_eq!(parse_bytes("1g").unwrap(), 1 << 30);
        assert!(parse_bytes("x").is_err());
        let args = ["--max-bytes", "1M", "--factor", "4"].map(String::from);
        let o = Options::parse_from(args.into_iter()).unwrap();
        assert_eq!(o.sizes(), vec![4096, 1 << 14, 1 << 16, 1 << 18, 1 << 20]);
        assert_eq!(Size::of::<f32>(1).output_offset, 4096);
        assert_eq!(Size::of::<f32>(1024).output_offset, 4096);
        assert_eq!(Size::of::<f32>(1025).output_offset, 8192);
    }

    #[test]
    fn host_sums_are_exact_in_every_type() {
        for n in [2, 8, 16] {
            for k in 0..200 {
                let exact: i32 = (0..n).map(|r| input_value::<i32>(r, k)).sum();
                assert_eq!(f32::sum((0..n).map(|r| input_value(r, k))), exact as f32);
                assert_eq!(
                    bf16::sum((0..n).map(|r| input_value(r, k))).to_f32(),
                    exact as f32
                );
            }
        }
    }

    #[test]
    fn reports_render() {
        let rows: Vec<Row> = [4096usize, 1 << 20]
            .iter()
            .flat_map(|&bytes| {
                ["ncclAllReduce", "reference one-shot"].map(|name| Row {
                    collective: Collective::AllReduce,
                    contender: name.into(),
                    dtype: "f32",
                    bytes,
                    count: bytes / 4,
                    time_us: Some(bytes as f64 / 1e4 + 5.0),
                    correct: Some(true),
                })
            })
            .collect();
        assert!(table(&rows, 2).contains("reference one-shot"));
        assert_eq!(csv(&rows, 2).lines().count(), 5);
        let doc = plot(&rows, 2, "t <&>");
        assert!(doc.starts_with("<svg") && doc.trim_end().ends_with("</svg>"));
        assert!(doc.contains("t &lt;&amp;&gt;") && doc.contains("polyline"));
        assert!(doc.contains("no data"), "all-gather has no rows");
        std::fs::write(std::env::temp_dir().join("nccl_bench_test.svg"), doc).unwrap();
    }
}
