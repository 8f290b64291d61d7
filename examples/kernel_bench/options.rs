//! The command line: the usage text, the kernel names and the parsed options.

use std::path::PathBuf;

use super::cases::{DEFAULT_TRANSPOSE_TILE, TRANSPOSE_TILES};
use super::Result;

const USAGE: &str = "\
kernel_bench: eight cudajit kernels against the same algorithms built by nvcc

usage: kernel_bench [options]
  --cuda-cubin PATH   the nvcc-built cubin of benches/cuda/kernels.cu (also env
                      CUDAJIT_BENCH_CUBIN); without it only the cudajit side runs
  --markdown PATH     also write the result table (markdown) to PATH
  --runs N            timed runs per kernel and implementation (default 30, at least 20)
  --warmup N          untimed runs before them (default 5, at least 3)
  --only A,B,..       run only these: vector_add saxpy reduce scan histogram transpose
                      sgemm softmax
  --dump-cubins DIR   write the cudajit cubins there (for cuobjdump -sass)
  --transpose RxC     the measured transpose's size (default 4096x4096)
  --transpose-tile TxR  its tile side and block rows: 32x4 (default), 32x8, 32x16, 64x8,
                      64x16
  --cpu-check         no GPU needed: check the CPU references on small inputs and
                      compile every kernel for sm_90
  --help              this text";

pub(crate) const KERNEL_NAMES: [&str; 8] = [
    "vector_add",
    "saxpy",
    "reduce",
    "scan",
    "histogram",
    "transpose",
    "sgemm",
    "softmax",
];

pub(crate) struct Options {
    pub(crate) cpu_check: bool,
    pub(crate) cubin: Option<PathBuf>,
    pub(crate) markdown: Option<PathBuf>,
    pub(crate) runs: usize,
    pub(crate) warmup: usize,
    pub(crate) only: Vec<String>,
    pub(crate) dump_cubins: Option<PathBuf>,
    pub(crate) transpose: (usize, usize),
    pub(crate) transpose_tile: (u32, u32),
}

impl Options {
    /// Every kernel, 30 runs after 5 warm-ups, the nvcc cubin from `CUDAJIT_BENCH_CUBIN`.
    pub(crate) fn defaults() -> Options {
        Options {
            cpu_check: false,
            cubin: std::env::var_os("CUDAJIT_BENCH_CUBIN")
                .filter(|v| !v.is_empty())
                .map(PathBuf::from),
            markdown: None,
            runs: 30,
            warmup: 5,
            only: KERNEL_NAMES.iter().map(|s| s.to_string()).collect(),
            dump_cubins: None,
            transpose: (4096, 4096),
            transpose_tile: DEFAULT_TRANSPOSE_TILE,
        }
    }

    pub(crate) fn parse() -> Result<Option<Options>> {
        let mut options = Options::defaults();
        let mut args = std::env::args().skip(1);
        while let Some(arg) = args.next() {
            let mut value = |name: &str| {
                args.next()
                    .ok_or_else(|| format!("{name} needs a value; see --help"))
            };
            match arg.as_str() {
                "--help" | "-h" => {
                    println!("{USAGE}");
                    return Ok(None);
                }
                "--cpu-check" => options.cpu_check = true,
                "--cuda-cubin" => options.cubin = Some(value("--cuda-cubin")?.into()),
                "--markdown" => options.markdown = Some(value("--markdown")?.into()),
                "--dump-cubins" => options.dump_cubins = Some(value("--dump-cubins")?.into()),
                "--runs" | "--warmup" => {
                    let text = value(&arg)?;
                    let count: usize = text
                        .parse()
                        .map_err(|_| format!("{arg} takes a count, got `{text}`"))?;
                    let least = if arg == "--runs" { 20 } else { 3 };
                    if count < least {
                        return Err(format!(
                            "{arg} {count}: at least {least} (medians of fewer runs are noise)"
                        )
                        .into());
                    }
                    if arg == "--runs" {
                        options.runs = count;
                    } else {
                        options.warmup = count;
                    }
                }
                "--transpose-tile" => {
                    let text = value("--transpose-tile")?;
                    let shape = text
                        .split_once('x')
                        .and_then(|(t, r)| Some((t.parse().ok()?, r.parse().ok()?)))
                        .filter(|shape| TRANSPOSE_TILES.contains(shape));
                    options.transpose_tile = shape.ok_or_else(|| {
                        let known: Vec<String> = TRANSPOSE_TILES
                            .iter()
                            .map(|(t, r)| format!("{t}x{r}"))
                            .collect();
                        format!(
                            "--transpose-tile takes one of {}, got `{text}`",
                            known.join(", ")
                        )
                    })?;
                }
                "--transpose" => {
                    let text = value("--transpose")?;
                    let size = text
                        .split_once('x')
                        .and_then(|(r, c)| Some((r.parse().ok()?, c.parse().ok()?)))
                        .filter(|&(r, c): &(usize, usize)| r > 0 && c > 0);
                    options.transpose = size.ok_or_else(|| {
                        format!("--transpose takes ROWSxCOLS (e.g. 8192x8192), got `{text}`")
                    })?;
                }
                "--only" => {
                    let list = value("--only")?;
                    options.only = list.split(',').map(|s| s.trim().to_owned()).collect();
                    for name in &options.only {
                        if !KERNEL_NAMES.contains(&name.as_str()) {
                            return Err(format!(
                                "--only: unknown kernel `{name}`; known: {}",
                                KERNEL_NAMES.join(" ")
                            )
                            .into());
                        }
                    }
                }
                other => return Err(format!("unknown argument `{other}`; see --help").into()),
            }
        }
        Ok(Some(options))
    }

    pub(crate) fn wants(&self, name: &str) -> bool {
        self.only.iter().any(|n| n == name)
    }
}
