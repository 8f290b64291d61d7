//! The command line: element types, options, sizes and their parsing.

use std::path::PathBuf;

use super::BenchResult;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum DType {
    F32,
    Bf16,
    I32,
}

#[derive(Debug, Clone)]
pub(crate) struct Options {
    pub(crate) reference: Option<PathBuf>,
    pub(crate) devices: Option<Vec<usize>>,
    pub(crate) min_bytes: usize,
    pub(crate) max_bytes: usize,
    pub(crate) factor: usize,
    pub(crate) samples: usize,
    pub(crate) warmup: usize,
    pub(crate) max_ctas: u32,
    pub(crate) threads: u32,
    /// Bytes per thread that size the grid: CTAs = bytes / (threads * this), at most `--ctas`.
    /// `None`: 16 for bf16 (whose kernels convert every element to f32 and back: four times
    /// the CTAs take 1.5-2.0x NCCL's latency at 32 KB-1 MB where 64 gave 1.4-1.5x), 64 for
    /// the 32-bit types.
    pub(crate) thread_bytes: Option<usize>,
    pub(crate) dtype: DType,
    pub(crate) verify_max: usize,
    pub(crate) out: PathBuf,
}

pub(crate) const USAGE: &str =
    "usage: nccl_bench [--reference CUBIN] [--devices 0,1,..] [--min-bytes 4K] \
[--max-bytes 1G] [--factor 2|4] [--samples 25] [--warmup 5] [--ctas 64] [--threads 512] \
[--thread-bytes 64 (16 for bf16)] \
[--dtype f32|bf16|i32] [--verify-max 64M] [--out DIR]
  --reference defaults to $CUDAJIT_NCCL_REFERENCE; without it only NCCL and cuMemcpyPeer run.";

impl Options {
    pub(crate) fn parse() -> BenchResult<Options> {
        Options::parse_from(std::env::args().skip(1))
    }

    pub(crate) fn parse_from(mut args: impl Iterator<Item = String>) -> BenchResult<Options> {
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
    pub(crate) fn sizes(&self) -> Vec<usize> {
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

pub(crate) fn parse_number<N: std::str::FromStr>(flag: &str, value: &str) -> BenchResult<N>
where
    N::Err: std::fmt::Display,
{
    value
        .parse()
        .map_err(|e| format!("{flag} {value}: {e}").into())
}

/// `4096`, `4K`, `64M`, `1G` (binary units).
pub(crate) fn parse_bytes(value: &str) -> BenchResult<usize> {
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
