//! The command line: sizes, operand layout, output type, the nvcc twin's cubin.

use std::path::PathBuf;

use super::hopper;
use super::kernels::{TILE_K, TILE_M, TILE_N};
use super::Result;

const USAGE: &str = "\
gemm: the cudajit mma.sync GEMM against cuBLAS and its CUDA C++ twin

usage: gemm [options]
  --sizes S,MxNxK,..  the problems (default: squares 1024..16384 and the LLM shapes)
  --kernel mma|wgmma  the cudajit GEMM: mma.sync + ldmatrix + cp.async (default), or the
                      Hopper one, TMA + wgmma (sm_90a; its nvcc twin writes f32), or fp8: the
                      Hopper one on e4m3 operands against cuBLASLt's FP8 matmul (TN)
  --cluster           with --kernel wgmma (TN, M a multiple of 256): clusters of 2 blocks
                      that load B once and multicast it to both
  --persistent        with --kernel wgmma or fp8 (not --cluster): one block per SM walking
                      the tiles, the epilogue overlapping the next tile's loads
  --layout tn|nn      B column by column (tn, default) or row by row (nn); A is row-major
  --output f32|bf16   C's element type (default f32)
  --cuda-cubin PATH   the nvcc build of benches/cuda/gemm_mma.cu (gemm_wgmma.cu with
                      --kernel wgmma; also env CUDAJIT_GEMM_CUBIN): timed and checked
                      beside cudajit and cuBLAS
  --runs N            timed runs per contender (default 20)
  --markdown FILE     also write the result table (markdown) to FILE
  --startup RUNS      the Hopper GEMM's first launch to kernel done in fresh processes:
                      cold (empty cache) and warm (disk cache), RUNS of each
  --cpu-check         no GPU: compile every cudajit GEMM for sm_90 and show its PTX's
                      shape; compile gemm_mma.cu with nvcc when nvcc is found
  --help              this text";

/// How B is stored (A is always row-major, M×K).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Layout {
    /// B column by column, `b[n * K + k]`: both `mma` operands k-contiguous.
    Tn,
    /// B row by row, `b[k * N + n]`: loaded through `ldmatrix.trans`.
    Nn,
}

impl Layout {
    pub const ALL: [Layout; 2] = [Layout::Tn, Layout::Nn];

    /// `tn` / `nn`, as in the kernel names.
    pub fn name(self) -> &'static str {
        match self {
            Layout::Tn => "tn",
            Layout::Nn => "nn",
        }
    }

    pub fn b_row_major(self) -> bool {
        self == Layout::Nn
    }
}

/// C's element type.
/// Which cudajit GEMM runs: the Ampere-style mma.sync one or the Hopper one (TMA + wgmma).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Algorithm {
    Mma,
    Wgmma,
    /// The wgmma GEMM on e4m3 operands, against cuBLASLt's FP8 matmul.
    Fp8,
}

impl Algorithm {
    pub fn name(self) -> &'static str {
        match self {
            Algorithm::Mma => "mma.sync",
            Algorithm::Wgmma => "wgmma",
            Algorithm::Fp8 => "wgmma e4m3",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Output {
    F32,
    Bf16,
}

impl Output {
    pub const ALL: [Output; 2] = [Output::F32, Output::Bf16];

    pub fn name(self) -> &'static str {
        match self {
            Output::F32 => "f32",
            Output::Bf16 => "bf16",
        }
    }

    /// The suffix of the kernel names (`gemm_bf16_tn_to_bf16`).
    pub fn kernel_suffix(self) -> &'static str {
        match self {
            Output::F32 => "",
            Output::Bf16 => "_to_bf16",
        }
    }
}

pub struct Options {
    pub sizes: Vec<(usize, usize, usize)>,
    pub algorithm: Algorithm,
    /// `--cluster`: the Hopper GEMM in clusters of 2 blocks sharing B by TMA multicast.
    pub cluster: bool,
    /// `--persistent`: the Hopper GEMM with one block per SM walking the tiles.
    pub persistent: bool,
    pub layout: Layout,
    pub output: Output,
    pub cubin: Option<PathBuf>,
    pub runs: usize,
    pub markdown: Option<String>,
    pub cpu_check: bool,
    /// `--startup RUNS`: the Hopper GEMM's cold and warm start, in fresh processes.
    pub startup: Option<usize>,
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

fn sizes(list: &str) -> Result<Vec<(usize, usize, usize)>> {
    list.split(',')
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
        .collect()
}

pub fn options() -> Result<Options> {
    let mut options = Options {
        sizes: default_sizes(),
        algorithm: Algorithm::Mma,
        cluster: false,
        persistent: false,
        layout: Layout::Tn,
        output: Output::F32,
        cubin: std::env::var_os("CUDAJIT_GEMM_CUBIN")
            .filter(|v| !v.is_empty())
            .map(PathBuf::from),
        runs: 20,
        markdown: None,
        cpu_check: false,
        startup: None,
    };
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--sizes" => {
                options.sizes = sizes(
                    &args
                        .next()
                        .ok_or("--sizes needs a list: 4096,8192 or 512x4096x4096")?,
                )?
            }
            "--layout" => {
                options.layout = match args.next().as_deref() {
                    Some("tn") => Layout::Tn,
                    Some("nn") => Layout::Nn,
                    _ => return Err("--layout takes tn or nn".into()),
                }
            }
            "--kernel" => {
                options.algorithm = match args.next().as_deref() {
                    Some("mma") => Algorithm::Mma,
                    Some("wgmma") => Algorithm::Wgmma,
                    Some("fp8") => Algorithm::Fp8,
                    _ => return Err("--kernel takes mma, wgmma or fp8".into()),
                }
            }
            "--cluster" => options.cluster = true,
            "--persistent" => options.persistent = true,
            "--output" => {
                options.output = match args.next().as_deref() {
                    Some("f32") => Output::F32,
                    Some("bf16") => Output::Bf16,
                    _ => return Err("--output takes f32 or bf16".into()),
                }
            }
            "--cuda-cubin" => {
                options.cubin = Some(args.next().ok_or("--cuda-cubin needs a file")?.into())
            }
            "--runs" => options.runs = args.next().ok_or("--runs needs a number")?.parse()?,
            "--markdown" => options.markdown = Some(args.next().ok_or("--markdown needs a file")?),
            "--cpu-check" => options.cpu_check = true,
            "--startup" => {
                options.startup = Some(
                    args.next()
                        .ok_or("--startup needs a number of runs")?
                        .parse()?,
                )
            }
            "--help" | "-h" => {
                println!("{USAGE}");
                std::process::exit(0);
            }
            other => return Err(format!("unknown argument `{other}` (see --help)").into()),
        }
    }
    if options.runs == 0 {
        return Err("--runs must be at least 1".into());
    }
    if options.cluster && options.algorithm != Algorithm::Wgmma {
        return Err("--cluster is a form of --kernel wgmma".into());
    }
    if options.persistent && (options.algorithm == Algorithm::Mma || options.cluster) {
        return Err("--persistent is a form of --kernel wgmma or fp8, without --cluster".into());
    }
    let (tile_m, tile_n, tile_k) = match options.algorithm {
        Algorithm::Mma => (TILE_M, TILE_N, TILE_K),
        Algorithm::Wgmma => {
            if options.output != Output::F32 && options.cubin.is_some() {
                return Err(
                    "the wgmma twin writes f32 C: leave out --cuda-cubin with --output bf16".into(),
                );
            }
            if options.cluster && (options.layout != Layout::Tn || options.cubin.is_some()) {
                return Err("--cluster runs the TN layout, without an nvcc twin".into());
            }
            let tile_m = if options.cluster { 2 } else { 1 } * hopper::TILE_M;
            (tile_m, hopper::TILE_N, hopper::TILE_K)
        }
        Algorithm::Fp8 => {
            if options.layout != Layout::Tn || options.output != Output::F32 {
                return Err(
                    "--kernel fp8 is TN with f32 output (FP8 wgmma reads B K-major)".into(),
                );
            }
            if options.cubin.is_some() {
                return Err("--kernel fp8 has no nvcc twin: leave out --cuda-cubin".into());
            }
            (hopper::TILE_M, hopper::TILE_N, 2 * hopper::TILE_K)
        }
    };
    for &(m, n, k) in &options.sizes {
        if m % tile_m != 0 || n % tile_n != 0 || k % tile_k != 0 || m * n * k == 0 {
            return Err(format!(
                "{m}x{n}x{k}: the {} GEMM needs M a multiple of {tile_m}, N of {tile_n}, K of {tile_k}",
                options.algorithm.name()
            )
            .into());
        }
    }
    Ok(options)
}
