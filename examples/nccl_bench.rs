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

#[path = "nccl_bench/cudajit_contenders.rs"]
mod cudajit_contenders;
#[path = "lsa/kernels.rs"]
mod lsa;
#[path = "nccl_bench/svg.rs"]
mod svg;

use std::collections::HashMap;
use std::error::Error;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use cudajit::bf16;
use cudajit::nccl::{
    Communicator, DevComm, DevCommRequirements, LoadedNccl, NcclType, ReduceOp, SymmetricBuffer,
};
use cudajit::{CudaContext, CudaStream};
use cudarc::driver::sys::{self, CUevent_flags};
use cudarc::driver::{CudaEvent, CudaFunction, LaunchConfig, PushKernelArg};
use cudarc::nvrtc::Ptx;

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

// ---------------------------------------------------------------------------------------
// Options

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum DType {
    F32,
    Bf16,
    I32,
}

#[derive(Debug, Clone)]
struct Options {
    reference: Option<PathBuf>,
    devices: Option<Vec<usize>>,
    min_bytes: usize,
    max_bytes: usize,
    factor: usize,
    samples: usize,
    warmup: usize,
    max_ctas: u32,
    threads: u32,
    /// Bytes per thread that size the grid: CTAs = bytes / (threads * this), at most `--ctas`.
    /// `None`: 16 for bf16 (whose kernels convert every element to f32 and back: four times
    /// the CTAs take 1.5-2.0x NCCL's latency at 32 KB-1 MB where 64 gave 1.4-1.5x), 64 for
    /// the 32-bit types.
    thread_bytes: Option<usize>,
    dtype: DType,
    verify_max: usize,
    out: PathBuf,
}

const USAGE: &str = "usage: nccl_bench [--reference CUBIN] [--devices 0,1,..] [--min-bytes 4K] \
[--max-bytes 1G] [--factor 2|4] [--samples 25] [--warmup 5] [--ctas 64] [--threads 512] \
[--thread-bytes 64 (16 for bf16)] \
[--dtype f32|bf16|i32] [--verify-max 64M] [--out DIR]
  --reference defaults to $CUDAJIT_NCCL_REFERENCE; without it only NCCL and cuMemcpyPeer run.";

impl Options {
    fn parse() -> BenchResult<Options> {
        Options::parse_from(std::env::args().skip(1))
    }

    fn parse_from(mut args: impl Iterator<Item = String>) -> BenchResult<Options> {
        let mut o = Options {
            reference: std::env::var_os("CUDAJIT_NCCL_REFERENCE").map(PathBuf::from),
            devices: None,
            min_bytes: 4 << 10,
            max_bytes: 1 << 30,
            factor: 2,
            samples: 25,
            warmup: 5,
            max_ctas: 64,
            thread_bytes: None,
            threads: 512,
            dtype: DType::F32,
            verify_max: 64 << 20,
            out: std::env::var_os("OUT")
                .map(PathBuf::from)
                .unwrap_or_else(|| PathBuf::from("target/nccl_bench")),
        };
        while let Some(flag) = args.next() {
            if flag == "-h" || flag == "--help" {
                println!("{USAGE}");
                std::process::exit(0);
            }
            let value = args
                .next()
                .ok_or_else(|| format!("{flag} needs a value\n{USAGE}"))?;
            match flag.as_str() {
                "--reference" => o.reference = Some(PathBuf::from(value)),
                "--devices" => {
                    let list = value
                        .split(',')
                        .map(|d| d.trim().parse::<usize>())
                        .collect::<Result<Vec<_>, _>>()
                        .map_err(|e| format!("--devices {value}: {e}"))?;
                    o.devices = Some(list);
                }
                "--min-bytes" => o.min_bytes = parse_bytes(&value)?,
                "--max-bytes" => o.max_bytes = parse_bytes(&value)?,
                "--factor" => o.factor = parse_number(&flag, &value)?,
                "--samples" => o.samples = parse_number(&flag, &value)?,
                "--warmup" => o.warmup = parse_number(&flag, &value)?,
                "--ctas" => o.max_ctas = parse_number(&flag, &value)?,
                "--thread-bytes" => o.thread_bytes = Some(parse_number(&flag, &value)?),
                "--threads" => o.threads = parse_number(&flag, &value)?,
                "--verify-max" => o.verify_max = parse_bytes(&value)?,
                "--out" => o.out = PathBuf::from(value),
                "--dtype" => {
                    o.dtype = match value.as_str() {
                        "f32" => DType::F32,
                        "bf16" => DType::Bf16,
                        "i32" => DType::I32,
                        _ => return Err(format!("--dtype {value}: f32, bf16 or i32").into()),
                    }
                }
                _ => return Err(format!("unknown option {flag}\n{USAGE}").into()),
            }
        }
        if o.factor < 2 || o.min_bytes == 0 || o.min_bytes > o.max_bytes {
            return Err(
                format!("need --factor >= 2 and 0 < --min-bytes <= --max-bytes\n{USAGE}").into(),
            );
        }
        if o.samples == 0
            || o.max_ctas == 0
            || o.threads == 0
            || o.thread_bytes == Some(0)
            || !o.threads.is_multiple_of(32)
        {
            return Err("--samples, --ctas > 0 and --threads a positive multiple of 32".into());
        }
        Ok(o)
    }

    /// min, min*factor, ... up to max.
    fn sizes(&self) -> Vec<usize> {
        let mut out = Vec::new();
        let mut b = self.min_bytes;
        while b <= self.max_bytes {
            out.push(b);
            match b.checked_mul(self.factor) {
                Some(next) => b = next,
                None => break,
            }
        }
        out
    }
}

fn parse_number<N: std::str::FromStr>(flag: &str, value: &str) -> BenchResult<N>
where
    N::Err: std::fmt::Display,
{
    value
        .parse()
        .map_err(|e| format!("{flag} {value}: {e}").into())
}

/// `4096`, `4K`, `64M`, `1G` (binary units).
fn parse_bytes(value: &str) -> BenchResult<usize> {
    let v = value.trim();
    let (digits, shift) = match v.chars().last().map(|c| c.to_ascii_uppercase()) {
        Some('K') => (&v[..v.len() - 1], 10),
        Some('M') => (&v[..v.len() - 1], 20),
        Some('G') => (&v[..v.len() - 1], 30),
        _ => (v, 0),
    };
    let n: usize = digits.parse().map_err(|e| format!("size {value}: {e}"))?;
    n.checked_shl(shift)
        .filter(|b| b >> shift == n)
        .ok_or_else(|| format!("size {value} overflows").into())
}

// ---------------------------------------------------------------------------------------
// Element types

/// An element type of the benchmark: NCCL's, the reference kernels' (`NAME` is their
/// suffix), and the host reference of a sum.
trait Elem:
    NcclType + PartialEq + std::fmt::Debug + cudajit::DeviceScalar + core::ops::Add<Output = Self>
{
    fn from_i32(v: i32) -> Self;
    /// The sum in rank order, accumulated as the kernels do (f32 for floats).
    fn sum(values: impl Iterator<Item = Self>) -> Self;
}

impl Elem for f32 {
    fn from_i32(v: i32) -> Self {
        v as f32
    }
    fn sum(values: impl Iterator<Item = Self>) -> Self {
        values.fold(0.0, |a, v| a + v)
    }
}

impl Elem for bf16 {
    fn from_i32(v: i32) -> Self {
        bf16::from_f32(v as f32)
    }
    fn sum(values: impl Iterator<Item = Self>) -> Self {
        bf16::from_f32(values.fold(0.0f32, |a, v| a + v.to_f32()))
    }
}

impl Elem for i32 {
    fn from_i32(v: i32) -> Self {
        v
    }
    fn sum(values: impl Iterator<Item = Self>) -> Self {
        values.fold(0i32, |a, v| a.wrapping_add(v))
    }
}

/// Rank `rank`'s input element `k`: small integers, so sums of up to 16 ranks are exact
/// even in bf16 whatever the order NCCL adds them in.
fn input_value<T: Elem>(rank: usize, k: usize) -> T {
    T::from_i32(((k % 31) * 7 % 31 + rank * 13 % 31) as i32 % 31 - 15)
}

// ---------------------------------------------------------------------------------------
// Collectives, sizes and contenders

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Collective {
    AllReduce,
    AllGather,
    PeerRead,
}

impl Collective {
    const ALL: [Collective; 3] = [
        Collective::AllReduce,
        Collective::AllGather,
        Collective::PeerRead,
    ];

    fn name(self) -> &'static str {
        match self {
            Collective::AllReduce => "all-reduce",
            Collective::AllGather => "all-gather",
            Collective::PeerRead => "peer-read",
        }
    }

    /// Bus bandwidth per algorithm bandwidth (`bytes / t`, bytes = input per rank).
    fn bus_factor(self, n: usize) -> f64 {
        let n = n as f64;
        match self {
            Collective::AllReduce => 2.0 * (n - 1.0) / n,
            Collective::AllGather => n - 1.0,
            Collective::PeerRead => 1.0,
        }
    }
}

/// One problem size, with the window convention of `lsa_collectives.cu`.
#[derive(Debug, Clone, Copy)]
struct Size {
    /// Elements of input per rank.
    count: usize,
    /// Bytes of input per rank.
    bytes: usize,
    /// Where the output starts in the window, in bytes (`round_up(bytes, 4096)`).
    output_offset: usize,
}

impl Size {
    fn of<T>(count: usize) -> Size {
        let bytes = count * std::mem::size_of::<T>();
        Size {
            count,
            bytes,
            output_offset: bytes.div_ceil(OUTPUT_ALIGN).max(1) * OUTPUT_ALIGN,
        }
    }
}

/// Starts one operation on one local rank: `(rank index, its stream, size)`.
type RankLaunch<'a> = Box<dyn Fn(usize, &Arc<CudaStream>, &Size) -> BenchResult<()> + 'a>;
/// Starts one operation on every local rank at once (NCCL's grouped collectives).
type GroupLaunch<'a> = Box<dyn Fn(&[Arc<CudaStream>], &Size) -> BenchResult<()> + 'a>;

/// How a contender is started.
enum Launch<'a> {
    /// Called for every local rank in turn, all before any stream is waited on (device-API
    /// kernels: their barriers span GPUs).
    PerRank(RankLaunch<'a>),
    /// Called once for all ranks.
    Group(GroupLaunch<'a>),
}

/// Something measured: a name, the collective it computes (which decides its check and
/// bandwidth formula) and how to start it. It reads its input from, and writes its output
/// to, the pass's symmetric window as `Size` says.
struct Contender<'a> {
    name: String,
    collective: Collective,
    launch: Launch<'a>,
}

impl<'a> Contender<'a> {
    fn per_rank(
        name: impl Into<String>,
        collective: Collective,
        launch: impl Fn(usize, &Arc<CudaStream>, &Size) -> BenchResult<()> + 'a,
    ) -> Self {
        Contender {
            name: name.into(),
            collective,
            launch: Launch::PerRank(Box::new(launch)),
        }
    }

    fn group(
        name: impl Into<String>,
        collective: Collective,
        launch: impl Fn(&[Arc<CudaStream>], &Size) -> BenchResult<()> + 'a,
    ) -> Self {
        Contender {
            name: name.into(),
            collective,
            launch: Launch::Group(Box::new(launch)),
        }
    }

    fn start(&self, streams: &[Arc<CudaStream>], size: &Size) -> BenchResult<()> {
        match &self.launch {
            Launch::PerRank(f) => streams
                .iter()
                .enumerate()
                .try_for_each(|(i, s)| f(i, s, size)),
            Launch::Group(f) => f(streams, size),
        }
    }
}

// ---------------------------------------------------------------------------------------
// Set-up shared by every pass

struct Setup {
    comm: Communicator,
    streams: Vec<Arc<CudaStream>>,
    /// (start, stop) timing events per rank.
    events: Vec<(CudaEvent, CudaEvent)>,
    /// The reference cubin loaded on every rank: kernel name -> function.
    reference: Option<Vec<HashMap<String, CudaFunction>>>,
}

const REFERENCE_KERNELS: [&str; 8] = [
    "lsa_all_reduce_one_shot_f32",
    "lsa_all_reduce_one_shot_bf16",
    "lsa_all_reduce_one_shot_i32",
    "lsa_all_reduce_two_shot_f32",
    "lsa_all_reduce_two_shot_bf16",
    "lsa_all_reduce_two_shot_i32",
    "lsa_all_gather_bytes",
    "lsa_peer_read_bytes",
];

impl Setup {
    fn n(&self) -> usize {
        self.streams.len()
    }

    fn synchronize(&self) -> BenchResult<()> {
        for s in &self.streams {
            s.synchronize()?;
        }
        Ok(())
    }

    fn context(&self, i: usize) -> &Arc<CudaContext> {
        self.streams[i].context()
    }
}

fn load_reference(
    comm: &Communicator,
    path: &Path,
    dev_comm_bytes: usize,
) -> BenchResult<Vec<HashMap<String, CudaFunction>>> {
    let image = std::fs::read(path).map_err(|e| format!("reading {}: {e}", path.display()))?;
    let mut out = Vec::new();
    for i in 0..comm.local_ranks().len() {
        let ctx = comm.context(i).ok_or("no context")?;
        let module = ctx.load_module(Ptx::from_binary(image.clone()))?;
        let mut functions = HashMap::new();
        for name in REFERENCE_KERNELS {
            let f = module
                .load_function(name)
                .map_err(|e| format!("{}: no kernel {name}: {e}", path.display()))?;
            check_dev_comm_param(&f, name, dev_comm_bytes)?;
            functions.insert(name.to_owned(), f);
        }
        out.push(functions);
    }
    Ok(out)
}

/// The kernel's first parameter must be exactly the loaded NCCL's `ncclDevComm`: a cubin
/// built against another release's headers would read garbage.
fn check_dev_comm_param(f: &CudaFunction, name: &str, expected: usize) -> BenchResult<()> {
    let (mut offset, mut size) = (0usize, 0usize);
    // SAFETY: a live function handle and valid out-pointers.
    let code = unsafe { sys::cuFuncGetParamInfo(f.cu_function(), 0, &mut offset, &mut size) };
    if code != sys::CUresult::CUDA_SUCCESS {
        eprintln!("note: cuFuncGetParamInfo unavailable ({code:?}); ncclDevComm size unchecked");
        return Ok(());
    }
    if size != expected {
        return Err(format!(
            "{name}: ncclDevComm parameter is {size} bytes in the cubin, {expected} in the loaded \
             NCCL: rebuild lsa_collectives.cu against the headers of the loaded libnccl"
        )
        .into());
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------
// One pass: an element type, a window, a dev comm, the contenders

/// The resources of one element type's run.
struct Pass<'s, T> {
    setup: &'s Setup,
    /// The symmetric window: input at 0, output at `Size::output_offset`.
    buffer: SymmetricBuffer<T>,
    /// Its device communicator (`lsaBarrierCount` = `--ctas`), when the device API runs.
    dev: Option<DevComm>,
    /// Every rank's `ncclDevComm` as a kernel argument (`cudarc` copies the kernel's
    /// declared parameter size, checked against the host layout when the cubin loads).
    dev_args: Vec<cudajit::nccl::device::DevComm>,
    max_ctas: u32,
    threads: u32,
    thread_bytes: usize,
}

impl<T: Elem> Pass<'_, T> {
    /// Rank `i`'s `ncclDevComm`, ready to pass by value.
    fn dev_comm_arg(&self, i: usize) -> &cudajit::nccl::device::DevComm {
        &self.dev_args[i]
    }

    /// The same grid on every rank: enough CTAs for one unrolled 4 x 16-byte step per
    /// thread, at most `--ctas` (= the dev comm's barriers).
    fn config(&self, bytes: usize) -> LaunchConfig {
        let per_cta = self.threads as usize * self.thread_bytes;
        let ctas = bytes.div_ceil(per_cta).clamp(1, self.max_ctas as usize) as u32;
        LaunchConfig {
            grid_dim: (ctas, 1, 1),
            block_dim: (self.threads, 1, 1),
            shared_mem_bytes: 0,
        }
    }

    fn launch_reference(
        &self,
        kernel: &str,
        i: usize,
        stream: &Arc<CudaStream>,
        count: usize,
        bytes: usize,
    ) -> BenchResult<()> {
        let f = self
            .setup
            .reference
            .as_ref()
            .and_then(|r| r[i].get(kernel))
            .ok_or_else(|| format!("no reference kernel {kernel}"))?;
        let window = self.buffer.window(i).ok_or("no window")? as u64;
        let offset = 0usize;
        let mut b = stream.launch_builder(f);
        b.arg(self.dev_comm_arg(i))
            .arg(&window)
            .arg(&offset)
            .arg(&count);
        // SAFETY: the parameters match the kernel's (ncclDevComm checked at load, a
        // window handle, two size_t); the window holds input and output for `count`
        // elements (the pass sizes it for the largest size); gridDim <= lsaBarrierCount.
        unsafe { b.launch(self.config(bytes)) }?;
        Ok(())
    }

    fn contenders(&self) -> Vec<Contender<'_>> {
        let comm = &self.setup.comm;
        let elem = std::mem::size_of::<T>();
        let mut out = vec![
            Contender::group("ncclAllReduce", Collective::AllReduce, move |streams, s| {
                let recv = self.buffer.at(s.output_offset / elem);
                comm.all_reduce(self.buffer.at(0), recv, s.count, ReduceOp::Sum, streams)?;
                Ok(())
            }),
            Contender::group("ncclAllGather", Collective::AllGather, move |streams, s| {
                let recv = self.buffer.at(s.output_offset / elem);
                comm.all_gather(self.buffer.at(0), recv, s.count, streams)?;
                Ok(())
            }),
            Contender::per_rank(
                "cuMemcpyPeerAsync",
                Collective::PeerRead,
                move |i, stream, s| {
                    let peer = (i + 1) % self.setup.n();
                    let src = self.buffer.device_ptr(peer).ok_or("no peer buffer")?;
                    let dst =
                        self.buffer.device_ptr(i).ok_or("no buffer")? + s.output_offset as u64;
                    let (ctx, peer_ctx) = (self.setup.context(i), self.setup.context(peer));
                    ctx.bind_to_thread()?;
                    // SAFETY: both ranges lie in live window allocations of `s.bytes` (input)
                    // and `s.bytes` from the output offset; the stream belongs to `ctx`.
                    unsafe {
                        sys::cuMemcpyPeerAsync(
                            dst,
                            ctx.cu_ctx(),
                            src,
                            peer_ctx.cu_ctx(),
                            s.bytes,
                            stream.cu_stream(),
                        )
                    }
                    .result()?;
                    Ok(())
                },
            ),
        ];
        if self.dev.is_some() && self.setup.reference.is_some() {
            let t = T::NAME;
            for (label, shot) in [("reference one-shot", "one"), ("reference two-shot", "two")] {
                let kernel = format!("lsa_all_reduce_{shot}_shot_{t}");
                out.push(Contender::per_rank(
                    label,
                    Collective::AllReduce,
                    move |i, st, s| self.launch_reference(&kernel, i, st, s.count, s.bytes),
                ));
            }
            out.push(Contender::per_rank(
                "reference all-gather",
                Collective::AllGather,
                move |i, st, s| {
                    self.launch_reference("lsa_all_gather_bytes", i, st, s.bytes, s.bytes)
                },
            ));
            out.push(Contender::per_rank(
                "reference peer read",
                Collective::PeerRead,
                move |i, st, s| {
                    self.launch_reference("lsa_peer_read_bytes", i, st, s.bytes, s.bytes)
                },
            ));
        }
        match cudajit_contenders::contenders(self) {
            Ok(extra) => out.extend(extra),
            Err(e) => eprintln!("cudajit contenders skipped: {e}"),
        }
        out
    }

    /// Writes every rank's input (`count` elements).
    fn write_inputs(&self, count: usize) -> BenchResult<()> {
        for i in 0..self.setup.n() {
            let data: Vec<T> = (0..count).map(|k| input_value(i, k)).collect();
            self.buffer.copy_from_host(i, &data)?;
        }
        Ok(())
    }

    /// Fills every rank's output region with the poison pattern.
    fn poison_outputs(&self, size: &Size) -> BenchResult<()> {
        let n = self.setup.n();
        let bytes = size.bytes * n;
        for i in 0..n {
            let ptr = self.buffer.device_ptr(i).ok_or("no buffer")? + size.output_offset as u64;
            self.setup.context(i).bind_to_thread()?;
            // SAFETY: the output region (n * bytes) lies inside the window allocation.
            unsafe {
                cudarc::driver::result::memset_d8_async(
                    ptr,
                    POISON,
                    bytes,
                    self.setup.streams[i].cu_stream(),
                )
            }?;
        }
        self.setup.synchronize()
    }

    /// `len` elements of rank `i`'s window from byte `offset`.
    fn read(&self, i: usize, offset: usize, len: usize) -> BenchResult<Vec<T>> {
        let mut out = vec![T::from_i32(0); len];
        let ptr = self.buffer.device_ptr(i).ok_or("no buffer")? + offset as u64;
        self.setup.context(i).bind_to_thread()?;
        // SAFETY: the range lies inside the window allocation; `out` has `len` elements.
        unsafe { cudarc::driver::result::memcpy_dtoh_sync(&mut out, ptr) }?;
        Ok(out)
    }

    /// Checks the outputs of `collective` for `size`; the first mismatch, if any.
    fn check(&self, collective: Collective, size: &Size) -> BenchResult<Option<String>> {
        let n = self.setup.n();
        let expected_at = |i: usize, k: usize| -> T {
            match collective {
                Collective::AllReduce => T::sum((0..n).map(|r| input_value::<T>(r, k))),
                Collective::AllGather => input_value((k / size.count) % n, k % size.count),
                Collective::PeerRead => input_value((i + 1) % n, k),
            }
        };
        let len = match collective {
            Collective::AllGather => size.count * n,
            _ => size.count,
        };
        for i in 0..n {
            let got = self.read(i, size.output_offset, len)?;
            if let Some(k) = (0..len).find(|&k| got[k] != expected_at(i, k)) {
                return Ok(Some(format!(
                    "rank {i} element {k}: got {:?}, expected {:?}",
                    got[k],
                    expected_at(i, k)
                )));
            }
        }
        Ok(None)
    }
}

/// Allocates the window for `max_count` elements (input + an all-gather output) and
/// creates the dev comm when the reference kernels will run.
fn open_pass<'s, T: Elem>(
    setup: &'s Setup,
    opts: &Options,
    max_count: usize,
) -> BenchResult<Pass<'s, T>> {
    let n = setup.n();
    let size = Size::of::<T>(max_count);
    let total = (size.output_offset + n * size.bytes).div_ceil(std::mem::size_of::<T>());
    let buffer = setup.comm.alloc_symmetric::<T>(total)?;
    let (dev, dev_args) = if setup.reference.is_some() {
        let dev = setup
            .comm
            .create_dev_comm(&DevCommRequirements::lsa_barriers(opts.max_ctas))?;
        for i in 0..n {
            if dev.lsa_size(i) != Some(n as i32) {
                return Err(format!(
                    "rank {i}: LSA team of {:?} ranks, not all {n}: the reference kernels need \
                     one NVLink domain",
                    dev.lsa_size(i)
                )
                .into());
            }
        }
        let args = (0..n)
            .map(|i| cudajit::nccl::device::DevComm::for_rank(&dev, i))
            .collect::<Result<Vec<_>, _>>()?;
        (Some(dev), args)
    } else {
        (None, Vec::new())
    };
    Ok(Pass {
        setup,
        buffer,
        dev,
        dev_args,
        max_ctas: opts.max_ctas,
        thread_bytes: opts
            .thread_bytes
            .unwrap_or(if T::SCALAR == cudajit::core::Scalar::BF16 {
                16
            } else {
                64
            }),
        threads: opts.threads,
    })
}

// ---------------------------------------------------------------------------------------
// Measuring

/// One measured (or only checked) contender at one size.
#[derive(Debug, Clone)]
struct Row {
    collective: Collective,
    contender: String,
    dtype: &'static str,
    bytes: usize,
    count: usize,
    /// Median microseconds per operation; `None` when only checked.
    time_us: Option<f64>,
    /// `None`: above `--verify-max`, not checked.
    correct: Option<bool>,
}

impl Row {
    fn algbw(&self) -> Option<f64> {
        self.time_us.map(|t| self.bytes as f64 / (t * 1e3))
    }
    fn busbw(&self, n: usize) -> Option<f64> {
        self.algbw().map(|a| a * self.collective.bus_factor(n))
    }
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    let m = v.len() / 2;
    if v.len() % 2 == 1 {
        v[m]
    } else {
        (v[m - 1] + v[m]) / 2.0
    }
}

/// Median microseconds per operation (see the module docs).
fn time(setup: &Setup, c: &Contender<'_>, size: &Size, opts: &Options) -> BenchResult<f64> {
    let batch = (BATCH_BYTES / size.bytes.max(1)).clamp(1, MAX_BATCH);
    for _ in 0..opts.warmup {
        c.start(&setup.streams, size)?;
    }
    setup.synchronize()?;
    let mut samples = Vec::with_capacity(opts.samples);
    for _ in 0..opts.samples {
        for (s, (start, _)) in setup.streams.iter().zip(&setup.events) {
            start.record(s)?;
        }
        for _ in 0..batch {
            c.start(&setup.streams, size)?;
        }
        for (s, (_, stop)) in setup.streams.iter().zip(&setup.events) {
            stop.record(s)?;
        }
        let mut slowest = 0f64;
        for (start, stop) in &setup.events {
            slowest = slowest.max(f64::from(start.elapsed_ms(stop)?));
        }
        samples.push(slowest * 1e3 / batch as f64);
    }
    Ok(median(samples))
}

/// Runs every contender of `pass` at every size: checked up to `--verify-max`, timed
/// when `measure`.
fn run_pass<T: Elem>(
    pass: &Pass<'_, T>,
    counts: &[usize],
    opts: &Options,
    measure: bool,
) -> BenchResult<Vec<Row>> {
    let contenders = pass.contenders();
    let mut rows = Vec::new();
    for &count in counts {
        let size = Size::of::<T>(count);
        for c in &contenders {
            let correct = if size.bytes <= opts.verify_max {
                pass.poison_outputs(&size)?;
                // A smaller size's output region overlaps a larger size's input, and a
                // timed run may have overwritten it: write this size's input again.
                pass.write_inputs(count)?;
                c.start(&pass.setup.streams, &size)?;
                pass.setup.synchronize()?;
                let problem = pass.check(c.collective, &size)?;
                if let Some(p) = &problem {
                    eprintln!(
                        "WRONG: {} {} {} bytes ({} {}): {p}",
                        c.collective.name(),
                        c.name,
                        size.bytes,
                        count,
                        T::NAME
                    );
                }
                Some(problem.is_none())
            } else {
                None
            };
            let time_us = if measure {
                Some(time(pass.setup, c, &size, opts)?)
            } else {
                None
            };
            let row = Row {
                collective: c.collective,
                contender: c.name.clone(),
                dtype: T::NAME,
                bytes: size.bytes,
                count,
                time_us,
                correct,
            };
            if measure {
                print_progress(&row, pass.setup.n());
            }
            rows.push(row);
        }
    }
    Ok(rows)
}

fn print_progress(row: &Row, n: usize) {
    eprintln!(
        "  {:<10} {:<22} {:>10} B  {:>10.2} us  {:>8.1} GB/s bus",
        row.collective.name(),
        row.contender,
        row.bytes,
        row.time_us.unwrap_or(f64::NAN),
        row.busbw(n).unwrap_or(f64::NAN)
    );
}

/// The check-only pass of an element type at sizes with scalar tails.
fn check_tails<T: Elem>(setup: &Setup, opts: &Options) -> BenchResult<Vec<Row>> {
    let counts = [1, 37, (1 << 16) + 3, (1 << 20) + 13];
    let pass = open_pass::<T>(setup, opts, *counts.iter().max().unwrap_or(&1))?;
    pass.write_inputs(pass.buffer.len().min(*counts.iter().max().unwrap_or(&1)))?;
    run_pass(&pass, &counts, opts, false)
}

/// The measured sweep of an element type.
fn sweep<T: Elem>(setup: &Setup, opts: &Options) -> BenchResult<Vec<Row>> {
    let elem = std::mem::size_of::<T>();
    let counts: Vec<usize> = opts
        .sizes()
        .into_iter()
        .map(|b| (b / elem).max(1))
        .collect();
    let max_count = counts.iter().copied().max().unwrap_or(1);
    let pass = open_pass::<T>(setup, opts, max_count)?;
    pass.write_inputs(max_count)?;
    run_pass(&pass, &counts, opts, true)
}

// ---------------------------------------------------------------------------------------
// Reports

fn table(rows: &[Row], n: usize) -> String {
    let mut s = String::new();
    for collective in Collective::ALL {
        let mine: Vec<&Row> = rows
            .iter()
            .filter(|r| r.collective == collective && r.time_us.is_some())
            .collect();
        if mine.is_empty() {
            continue;
        }
        let _ = writeln!(
            s,
            "\n{} ({} ranks, {}): latency us / bus bandwidth GB/s",
            collective.name(),
            n,
            mine[0].dtype
        );
        let mut names: Vec<&str> = Vec::new();
        for r in &mine {
            if !names.contains(&r.contender.as_str()) {
                names.push(&r.contender);
            }
        }
        let _ = write!(s, "{:>10}", "bytes");
        for name in &names {
            let _ = write!(s, " | {name:>24}");
        }
        s.push('\n');
        let mut sizes: Vec<usize> = mine.iter().map(|r| r.bytes).collect();
        sizes.dedup();
        for bytes in sizes {
            let _ = write!(s, "{:>10}", svg::bytes_label(bytes as f64));
            for name in &names {
                match mine
                    .iter()
                    .find(|r| r.bytes == bytes && r.contender == *name)
                {
                    Some(r) => {
                        let flag = if r.correct == Some(false) { "!" } else { " " };
                        let _ = write!(
                            s,
                            " | {:>11.2} {:>10.1}{flag}",
                            r.time_us.unwrap_or(f64::NAN),
                            r.busbw(n).unwrap_or(f64::NAN)
                        );
                    }
                    None => {
                        let _ = write!(s, " | {:>24}", "-");
                    }
                }
            }
            s.push('\n');
        }
    }
    s.push_str("(! = wrong result)\n");
    s
}

fn csv(rows: &[Row], n: usize) -> String {
    let mut s = String::from(
        "collective,contender,dtype,ranks,bytes,count,time_us,algbw_gbps,busbw_gbps,checked\n",
    );
    let opt = |v: Option<f64>| v.map_or(String::new(), |v| format!("{v:.3}"));
    for r in rows {
        let checked = match r.correct {
            Some(true) => "ok",
            Some(false) => "WRONG",
            None => "",
        };
        let _ = writeln!(
            s,
            "{},{},{},{n},{},{},{},{},{},{checked}",
            r.collective.name(),
            r.contender,
            r.dtype,
            r.bytes,
            r.count,
            opt(r.time_us),
            opt(r.algbw()),
            opt(r.busbw(n)),
        );
    }
    s
}

fn plot(rows: &[Row], n: usize, title: &str) -> String {
    let mut charts = Vec::new();
    for collective in Collective::ALL {
        let mine: Vec<&Row> = rows
            .iter()
            .filter(|r| r.collective == collective && r.time_us.is_some())
            .collect();
        let mut names: Vec<&str> = Vec::new();
        for r in &mine {
            if !names.contains(&r.contender.as_str()) {
                names.push(&r.contender);
            }
        }
        let series = |value: &dyn Fn(&Row) -> Option<f64>| -> Vec<svg::Series> {
            names
                .iter()
                .map(|name| svg::Series {
                    name: (*name).to_owned(),
                    points: mine
                        .iter()
                        .filter(|r| r.contender == *name)
                        .filter_map(|r| value(r).map(|v| (r.bytes as f64, v)))
                        .collect(),
                })
                .collect()
        };
        charts.push(svg::Chart {
            title: format!("{}: bus bandwidth", collective.name()),
            y_label: "GB/s".into(),
            log_y: false,
            series: series(&|r| r.busbw(n)),
        });
        charts.push(svg::Chart {
            title: format!("{}: latency", collective.name()),
            y_label: "microseconds".into(),
            log_y: true,
            series: series(&|r| r.time_us),
        });
    }
    svg::render(title, &charts, 2)
}

// ---------------------------------------------------------------------------------------

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
