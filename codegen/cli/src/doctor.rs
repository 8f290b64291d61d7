//! `cudajit doctor`: the toolchain, GPUs, NCCL and cache as cudajit sees them, with a fix
//! for everything missing.

use std::time::Instant;

use cudajit::codegen::cache;
use cudajit::codegen::cache::compiler_identity::toolchain_fields;
use cudajit::codegen::toolchain::Toolchain;
use cudajit::prelude::*;
use cudajit::{Arch, CudaContext};

use super::format;
use super::{OK, PROBLEM};

/// A tiny kernel compiled (and run, with a GPU) to prove the pipeline works end to end.
#[kernel]
fn doctor_probe(a: f32, x: &[f32], y: &mut [f32]) {
    let i = global_index();
    if i < y.len() {
        y[i] += a * x[i];
    }
}

/// A kernel with a Hopper architecture-specific instruction: compiling it proves the
/// `sm_90a` target works (libNVVM `compute_90a`, nvJitLink `sm_90a`).
#[kernel(arch = "sm_90a")]
fn doctor_probe_sm_90a() {
    ptx!("wgmma.fence.sync.aligned;");
}

/// What went wrong and how to fix it.
struct Problem {
    what: String,
    fix: String,
}

/// `cudajit doctor [--compile-only]`.
#[derive(Debug, clap::Args)]
#[command(after_help = DOCTOR_EXIT)]
pub struct DoctorArgs {
    /// Accept a machine without a GPU: check that kernels compile (for sm_90), not that
    /// they run; exits 0 when compiling works.
    #[arg(long)]
    compile_only: bool,
}

const DOCTOR_EXIT: &str = "\
EXIT STATUS:
  0  every check passed (with --compile-only: compiling works; no GPU is needed)
  1  something is missing: the output names it and its fix; without a GPU and without
     --compile-only this is the GPU (the output says whether compiling works)
  2  the command line is wrong";

/// Runs `cudajit doctor`.
pub fn run(args: &DoctorArgs) -> Result<i32, String> {
    let compile_only = args.compile_only;
    let mut problems = Vec::new();
    println!("cudajit {} doctor\n", env!("CARGO_PKG_VERSION"));
    let gpu_arch = gpus(compile_only, &mut problems);
    let compiles = toolchain(gpu_arch, &mut problems);
    nccl(&mut problems);
    disk_cache(&mut problems);
    environment(&mut problems);
    println!();
    if gpu_arch.is_none() {
        println!("{}\n", without_gpu(compiles));
    }
    if problems.is_empty() {
        println!(
            "All checks passed: cudajit can compile{} kernels here.",
            if gpu_arch.is_some() { " and run" } else { "" }
        );
        return Ok(OK);
    }
    println!("{} problem(s):", problems.len());
    for problem in &problems {
        println!("  - {}\n    fix: {}", problem.what, problem.fix);
    }
    Ok(PROBLEM)
}

/// What a machine without a GPU can do, in one paragraph.
fn without_gpu(compiles: bool) -> String {
    if compiles {
        "No GPU: compiling works here (kernels compile to cubins, checked for sm_90), running \
         them needs an NVIDIA GPU and its driver. Programs run their kernels on the CPU \
         simulator meanwhile (CUDAJIT_BACKEND=auto, the default, picks it without a GPU); \
         `cudajit doctor --compile-only` exits 0 on such a machine."
            .to_owned()
    } else {
        "No GPU, and compiling does not work either (see the problems below): fix the \
         toolchain first; running kernels also needs an NVIDIA GPU and its driver."
            .to_owned()
    }
}

/// Lists the GPUs; returns the first one's architecture.
fn gpus(compile_only: bool, problems: &mut Vec<Problem>) -> Option<Arch> {
    println!("GPUs");
    let count = match cudajit::gpu_count() {
        Ok(count) => count,
        Err(error) => {
            println!("  no GPU: {error}");
            if compile_only {
                println!("  (--compile-only: compiling for a chosen architecture still works)");
            } else {
                problems.push(Problem {
                    what: format!("no usable GPU ({error})"),
                    fix: "run on a machine with an NVIDIA GPU and driver (libcuda.so.1), or pass --compile-only to check compiling alone".into(),
                });
            }
            println!();
            return None;
        }
    };
    let mut driver = 0i32;
    // SAFETY: the driver library is present (gpu_count succeeded); the pointer is valid.
    let _ = unsafe { cudarc::driver::sys::cuDriverGetVersion(&mut driver) };
    println!(
        "  driver supports CUDA {}.{}",
        driver / 1000,
        (driver % 1000) / 10
    );
    let mut first = None;
    for ordinal in 0..count {
        match describe_gpu(ordinal) {
            Ok((line, arch)) => {
                println!("  GPU {ordinal}: {line}");
                first.get_or_insert(arch);
            }
            Err(error) => {
                println!("  GPU {ordinal}: unusable: {error}");
                problems.push(Problem {
                    what: format!("GPU {ordinal} cannot be used ({error})"),
                    fix: "check `nvidia-smi`; the GPU may be in use exclusively or the driver may need a restart".into(),
                });
            }
        }
    }
    println!();
    first
}

fn describe_gpu(ordinal: usize) -> Result<(String, Arch), cudajit::DriverError> {
    let context = CudaContext::new(ordinal)?;
    let (major, minor) = context.compute_capability()?;
    let arch = Arch::new(major as u32, minor as u32);
    let line = format!(
        "{}, {arch}, {}",
        context.name()?,
        format::bytes(context.total_mem()? as u64)
    );
    Ok((line, arch))
}

/// Reports the toolchain and compiles (and, with a GPU, runs) the probe kernel; returns
/// whether it compiled.
fn toolchain(gpu_arch: Option<Arch>, problems: &mut Vec<Problem>) -> bool {
    println!("Toolchain");
    let toolchain = match Toolchain::global() {
        Ok(toolchain) => toolchain,
        Err(error) => {
            for line in error.to_string().lines() {
                println!("  {line}");
            }
            problems.push(Problem {
                what: "the NVIDIA compiler libraries were not found".into(),
                fix: "install a CUDA 12/13 toolkit and set CUDA_HOME, or `pip install nvidia-nvvm nvidia-nvjitlink nvidia-cuda-nvrtc nvidia-cuda-nvcc` (then CUDAJIT_TOOLS_DIR=<site-packages> if not in a standard place)".into(),
            });
            println!();
            return false;
        }
    };
    // The report's own lines are already indented.
    for line in toolchain.report().to_string().lines().skip(1) {
        println!("{line}");
    }
    let memo = cache::memo_dir();
    println!(
        "  identity in cache keys{}:",
        if memo.is_some() {
            " (memoised BLAKE3)"
        } else {
            " (disk cache off: path, size, time)"
        }
    );
    for (tag, _, label) in toolchain_fields(toolchain, memo).iter() {
        println!("    {tag:<10} {label}");
    }
    match toolchain.versions() {
        Ok(versions) => println!("  loaded: {versions}"),
        Err(error) => problems.push(Problem {
            what: format!("the compiler libraries were found but do not load: {error}"),
            fix: "reinstall them (a partial wheel or toolkit install), or point CUDAJIT_NVVM / CUDAJIT_NVJITLINK at working copies".into(),
        }),
    }
    match toolchain.nvcc_version() {
        Ok(version) => println!("  nvcc {version}"),
        Err(_) => println!("  nvcc: not found (only needed to build the NCCL 2.28 bridge)"),
    }
    let arch = gpu_arch.unwrap_or(Arch::SM_90);
    let started = Instant::now();
    let compiles = match doctor_probe::KERNEL.compile_for_arch(arch) {
        Ok(compiled) => {
            println!(
                "  compile check: a small kernel for {arch}: {:?} in {:.1} ms ({} byte cubin)",
                compiled.report.origin,
                started.elapsed().as_secs_f64() * 1e3,
                compiled.cubin.len()
            );
            true
        }
        Err(error) if is_setting(&error) => {
            println!("  compile check: not run ({error}; see the problems below)");
            false
        }
        Err(error) => {
            problems.push(Problem {
                what: format!("compiling a small kernel for {arch} failed: {error}"),
                fix: "run with CUDAJIT_LOG=debug for details; check that libNVVM and nvJitLink come from the same CUDA release".into(),
            });
            false
        }
    };
    specific_target(gpu_arch, problems);
    if gpu_arch.is_some() {
        match run_probe() {
            Ok(ms) => println!("  run check: the kernel ran on GPU 0 and gave the right result ({ms:.1} ms)"),
            Err(error) => problems.push(Problem {
                what: format!("running a small kernel on GPU 0 failed: {error}"),
                fix: "the driver may be older than the toolchain (update the driver or use an older CUDA toolkit)".into(),
            }),
        }
    }
    println!();
    compiles
}

/// Compiles the `sm_90a` probe, when the GPU is a Hopper or there is no GPU (kernels
/// declared `#[kernel(arch = "sm_90a")]` run only on compute capability 9.0).
fn specific_target(gpu_arch: Option<Arch>, problems: &mut Vec<Problem>) {
    match gpu_arch {
        Some(arch) if (arch.major, arch.minor) != (9, 0) => {
            println!(
                "  architecture-specific target: none used on {arch} (`#[kernel(arch = \"sm_90a\")]` kernels need an H100/H200)"
            );
            return;
        }
        _ => {}
    }
    let started = Instant::now();
    match doctor_probe_sm_90a::KERNEL.compile_for_arch(Arch::SM_90) {
        Ok(compiled) => println!(
            "  architecture-specific target: `wgmma.fence` for {}: {:?} in {:.1} ms",
            compiled.arch,
            compiled.report.origin,
            started.elapsed().as_secs_f64() * 1e3
        ),
        // Reported once, by the environment's section.
        Err(error) if is_setting(&error) => {}
        Err(error) => problems.push(Problem {
            what: format!("compiling a kernel for sm_90a failed: {error}"),
            fix: "sm_90a needs CUDA 12.0 or newer compiler libraries: update libNVVM and nvJitLink"
                .into(),
        }),
    }
}

/// Runs the probe kernel on GPU 0 and checks its result; returns the milliseconds taken.
fn run_probe() -> Result<f64, Box<dyn std::error::Error>> {
    let started = Instant::now();
    let context = cudajit::default_context()?;
    let stream = context.default_stream();
    let n = 1000;
    let x = stream.clone_htod(&vec![2.0f32; n])?;
    let mut y = stream.clone_htod(&vec![1.0f32; n])?;
    doctor_probe::launch(&stream, LaunchConfig::for_elements(n), 3.0, &x, &mut y)?;
    let y = stream.clone_dtoh(&y)?;
    if let Some(bad) = y.iter().position(|&v| v != 7.0) {
        return Err(format!("element {bad} is {} instead of 7", y[bad]).into());
    }
    Ok(started.elapsed().as_secs_f64() * 1e3)
}

/// NCCL is optional (only kernels that talk to other GPUs need it): absent is a note; found
/// but unusable (a version mismatch, a broken library) is a problem.
fn nccl(problems: &mut Vec<Problem>) {
    match cudajit_nccl::LoadedNccl::global() {
        Ok(nccl) => print!("{}", nccl.report()),
        Err(cudajit_nccl::NcclError::LibraryNotFound { .. }) => {
            println!("NCCL");
            println!("  not found (only needed by kernels that use NCCL's device API): pip install nvidia-nccl-cu13, or set NCCL_HOME or CUDAJIT_NCCL_LIBRARY");
        }
        Err(error) => {
            println!("NCCL");
            println!("  unusable: {error}");
            problems.push(Problem {
                what: "NCCL".into(),
                fix: error.to_string(),
            });
        }
    }
    println!();
}

fn disk_cache(problems: &mut Vec<Problem>) {
    println!("Cache");
    let env = |name: &str| std::env::var(name).ok();
    let dir = match cache::configured_dir(env) {
        Ok(Some(dir)) => dir,
        Ok(None) => {
            println!("  disk cache off (CUDAJIT_CACHE=0): every process compiles its kernels");
            println!();
            return;
        }
        Err(error) => {
            problems.push(Problem {
                what: error.to_string(),
                fix: format!(
                    "set {} to `0` (off) or `1` (on), or unset it",
                    error.variable
                ),
            });
            println!();
            return;
        }
    };
    match cache::open_configured(env) {
        Ok(Some(disk)) => {
            let entries = disk.entries();
            let total: u64 = entries.iter().map(|e| e.size).sum();
            println!("  directory {}", disk.root().display());
            println!(
                "  {} entries, {}; cap {}",
                entries.len(),
                format::bytes(total),
                disk.max_bytes().map_or("none".to_owned(), format::bytes)
            );
            let probe = disk
                .root()
                .join(format!(".doctor.{}.tmp", std::process::id()));
            match std::fs::write(&probe, b"probe") {
                Ok(()) => {
                    let _ = std::fs::remove_file(&probe);
                    println!("  writable: yes");
                }
                Err(error) => problems.push(Problem {
                    what: format!("the cache directory {} is not writable ({error}): kernels are recompiled by every process", dir.display()),
                    fix: "set CUDAJIT_CACHE_DIR to a writable directory of yours".into(),
                }),
            }
        }
        Ok(None) => println!("  disk cache off"),
        Err(cache::OpenError::Environment(error)) => problems.push(Problem {
            what: error.to_string(),
            fix: format!("unset {} or give it {}", error.variable, error.accepts),
        }),
        Err(error) => problems.push(Problem {
            what: error.to_string(),
            fix: "set CUDAJIT_CACHE_DIR to a directory you own".into(),
        }),
    }
    println!();
}

/// Whether a compile failed on a setting (an environment variable cudajit cannot use),
/// which [`environment`] reports.
fn is_setting(error: &cudajit::Error) -> bool {
    use cudajit::codegen::compile::CompileError;
    matches!(
        error,
        cudajit::Error::Environment(_) | cudajit::Error::Compile(CompileError::Environment { .. })
    )
}

fn environment(problems: &mut Vec<Problem>) {
    // Every setting a program would parse, parsed here: a bad value is a problem now rather
    // than an error at the first compile or launch.
    let settings = [
        cudajit::CompileOptions::for_build(false).map(drop),
        cudajit::SimOptions::default().resolved_watchdog().map(drop),
        cudajit::SimOptions::default().resolved_workers().map(drop),
        cudajit::Backend::from_env().map(drop),
        cudajit::log::env_filter().map(drop),
        cudajit::codegen::progress::notice_delay().map(drop),
    ];
    for error in settings.into_iter().filter_map(Result::err) {
        problems.push(Problem {
            fix: format!("give {} {}, or unset it", error.variable, error.accepts),
            what: error.to_string(),
        });
    }
    let mut vars: Vec<(String, String)> = std::env::vars()
        .filter(|(k, _)| k.starts_with("CUDAJIT_") || k == "CUDA_HOME" || k == "CUDA_PATH")
        .collect();
    vars.sort();
    println!("Environment");
    if vars.is_empty() {
        println!("  no CUDAJIT_*, CUDA_HOME or CUDA_PATH set");
    }
    for (k, v) in vars {
        println!("  {k}={v}");
    }
}
