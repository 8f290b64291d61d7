//! `--startup RUNS`: how long the Hopper GEMM takes from its first launch call to the kernel
//! done, in fresh processes: cold (an empty cache directory: lowering, libNVVM, nvJitLink,
//! module load) and warm (the disk cache's cubin: no compiler library loaded). The compiler
//! libraries' digests are memoised first, as after the first run on an installation.

use std::path::Path;
use std::process::Command;
use std::time::Instant;

use super::hopper;
use super::Result;

const CHILD: &str = "CUDAJIT_GEMM_STARTUP_CHILD";

/// In a child process: one 128×256×64 launch, timed from the call to the kernel's end.
pub fn child() -> Result<bool> {
    let context = cudajit::default_context()?;
    let stream = context.default_stream();
    let a = stream.alloc_zeros::<cudajit::bf16>(128 * 64)?;
    let b = stream.alloc_zeros::<cudajit::bf16>(256 * 64)?;
    let mut c = stream.alloc_zeros::<f32>(128 * 256)?;
    let started = Instant::now();
    hopper::launch(&stream, false, false, false, (128, 256, 64), &a, &b, &mut c)?;
    stream.synchronize()?;
    println!("{:.3}", started.elapsed().as_secs_f64() * 1e3);
    Ok(true)
}

pub fn is_child() -> bool {
    std::env::var_os(CHILD).is_some()
}

fn run_child(cache: &Path) -> Result<f64> {
    let output = Command::new(std::env::current_exe()?)
        .env(CHILD, "1")
        .env("CUDAJIT_CACHE_DIR", cache)
        .output()?;
    if !output.status.success() {
        return Err(format!(
            "the startup child failed: {}",
            String::from_utf8_lossy(&output.stderr)
        )
        .into());
    }
    Ok(String::from_utf8_lossy(&output.stdout).trim().parse()?)
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

/// Cold and warm starts, `runs` fresh processes each; prints the medians.
pub fn startup(runs: usize) -> Result<bool> {
    if runs == 0 {
        return Err("--startup needs at least 1 run".into());
    }
    let base = std::env::temp_dir().join(format!("cudajit-gemm-startup-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&base);
    let memo = cudajit::codegen::cache::compiler_identity::MEMO_FILE;
    // The first run memoises the compiler libraries' digests; later cold runs start from
    // an empty cache that has that memo, as every run after installation does.
    let seed = base.join("seed");
    run_child(&seed)?;
    let mut cold = Vec::new();
    for run in 0..runs {
        let dir = base.join(format!("cold-{run}"));
        std::fs::create_dir_all(&dir)?;
        std::fs::copy(seed.join(memo), dir.join(memo))?;
        cold.push(run_child(&dir)?);
    }
    let mut warm = Vec::new();
    for _ in 0..runs {
        warm.push(run_child(&seed)?);
    }
    println!(
        "gemm_wgmma first launch to kernel done, fresh processes, median of {runs}: cold {:.1} ms (lower, libNVVM, nvJitLink, load), warm {:.2} ms (disk cache)",
        median(cold.clone()),
        median(warm.clone())
    );
    println!("cold runs (ms): {cold:.1?}\nwarm runs (ms): {warm:.2?}");
    let _ = std::fs::remove_dir_all(&base);
    Ok(true)
}
