//! Eight classic GPU kernels written in cudajit's kernel language, each checked against a
//! CPU reference and timed against the same algorithm in CUDA C++ built by nvcc
//! (`benches/cuda/kernels.cu`), in one process run, with the same sizes and launch
//! configurations.
//!
//! | kernel | algorithm |
//! | --- | --- |
//! | vector add, SAXPY | one 16-byte vector (4 floats) per thread, scalar tail |
//! | block reduction | grid-stride loop, two 16-byte vectors per iteration, warp shuffles, per-warp sums in shared memory; a second one-block launch sums the per-block results |
//! | scan | reduce-then-scan: tile sums, one block scans them, then every tile is scanned with its offset (4 elements per thread, prefetched a round ahead, warp `shfl_up` scan, warp totals in shared memory) |
//! | histogram | 256 bins x 32 lane copies per block in shared memory (conflict-free shared atomics), merged with global atomics |
//! | transpose | 32 x 32 tiles through padded shared memory, 32 x 4 threads, 8 rows each |
//! | SGEMM | 128 x 128 block tiles, k-steps of 8 through shared memory, 8 x 8 outputs per thread in registers |
//! | softmax | one warp per row, the row in a register array, max and sum as warp butterflies |
//!
//! Kernel times are CUDA-event medians over `--runs` runs (default 30) after `--warmup`
//! warm-ups (default 5), the two implementations interleaved run by run, the L2 cache
//! flushed before every timed run. Bandwidth is compared with a device-to-device copy
//! (`cuMemcpyDtoD`, bytes read + written) measured in the same run.
//!
//! ```text
//! nvcc -O3 -arch=sm_90 -cubin -o kernels.cubin benches/cuda/kernels.cu
//! cargo run --release --example kernel_bench -- --cuda-cubin kernels.cubin --markdown perf.md
//! cargo run --example kernel_bench -- --cpu-check      # no GPU: CPU references + sm_90 compiles
//! ```
//!
//! `scripts/perf-stage.sh` and `scripts/perf-run.sh` build, stage and run it on the GPU
//! machine; `docs/performance.md` has the results.

// `pub(crate)`: `tests/kernels.rs` and `tests/sim_kernels.rs` include this file as a module
// and reach into these.
pub(crate) mod bench;
pub(crate) mod cases;
pub(crate) mod checks;
pub(crate) mod cpu_check;
pub(crate) mod kernels;
pub(crate) mod measure;
pub(crate) mod options;
pub(crate) mod references;
pub(crate) mod report;

use bench::benchmark;
use cpu_check::cpu_check;
use measure::Env;
use options::Options;

pub(crate) type Result<T> = std::result::Result<T, Box<dyn std::error::Error>>;

fn main() -> std::process::ExitCode {
    match run() {
        Ok(code) => code,
        Err(error) => {
            eprintln!("kernel_bench: {error}");
            std::process::ExitCode::from(2)
        }
    }
}

fn run() -> Result<std::process::ExitCode> {
    let Some(options) = Options::parse()? else {
        return Ok(std::process::ExitCode::SUCCESS);
    };
    if options.cpu_check {
        cpu_check(&options)?;
        return Ok(std::process::ExitCode::SUCCESS);
    }
    let context = match cudajit::default_context() {
        Ok(context) => context,
        Err(error) => {
            println!(
                "kernel_bench: no GPU here ({error}); nothing to measure. `--cpu-check` runs \
                 the CPU references and compiles the kernels."
            );
            return Ok(std::process::ExitCode::SUCCESS);
        }
    };
    let env = Env::new(context, &options)?;
    let all_ok = benchmark(&env, &options)?;
    Ok(if all_ok {
        std::process::ExitCode::SUCCESS
    } else {
        std::process::ExitCode::FAILURE
    })
}
