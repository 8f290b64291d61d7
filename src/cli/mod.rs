//! The `cudajit` command-line tool (declared from `src/bin/cudajit.rs`, not part of the
//! library): one module per subcommand.

mod args;
mod cache;
mod doctor;
mod emit;
mod format;

use args::Args;

/// Exit status: success.
pub const OK: i32 = 0;
/// Exit status: something is missing or damaged.
pub const PROBLEM: i32 = 1;
/// Exit status: the command line is wrong.
pub const USAGE: i32 = 2;

const HELP: &str = "\
cudajit — the environment, the JIT cache and the compiled kernels of cudajit

USAGE:
  cudajit doctor [--compile-only]
      Toolchain (libNVVM, libdevice, nvJitLink, NVRTC, nvcc: paths, versions), GPUs,
      NCCL, cache directory. Compiles (and, with a GPU, runs) a small kernel. Exits 1
      with the fix when something is missing; --compile-only accepts a machine without
      a GPU.
  cudajit cache list [--dir DIR]     entries: kernel, specialisation, arch, size, last use
  cudajit cache stats [--dir DIR]    totals per kernel and architecture, size cap
  cudajit cache verify [--dir DIR]   re-checks every entry's checksum; removes damaged ones
  cudajit cache clear [--dir DIR]    removes every entry
  cudajit emit --kernel NAME [--arch sm_90] (--ir | --nvvm | --ptx | --sass) [--dir DIR]
      Prints what a kernel became, from the files a program run with CUDAJIT_DUMP=DIR
      wrote (DIR defaults to $CUDAJIT_DUMP). --sass disassembles the cubin with nvdisasm
      or cuobjdump.
  cudajit emit --list [--dir DIR]    the kernels in a dump directory

ENVIRONMENT:
  CUDAJIT_CACHE_DIR, CUDAJIT_CACHE=0, CUDAJIT_CACHE_MAX_BYTES   the cache (see docs/pipeline.md)
  CUDAJIT_LOG=debug    log on stderr (cache misses explain themselves at debug level)
  CUDAJIT_DUMP=DIR     programs write each compiled kernel's IR, NVVM IR, PTX and cubin
";

/// Runs the command line `args` (without the program name); returns the exit status.
pub fn run(args: &[String]) -> i32 {
    let mut args = Args::new(args);
    let Some(command) = args.next_word() else {
        eprint!("{HELP}");
        return USAGE;
    };
    let status = match command.as_str() {
        "doctor" => doctor::run(&mut args),
        "cache" => cache::run(&mut args),
        "emit" => emit::run(&mut args),
        "help" | "--help" | "-h" => {
            print!("{HELP}");
            Ok(OK)
        }
        "--version" | "-V" => {
            println!("cudajit {}", env!("CARGO_PKG_VERSION"));
            Ok(OK)
        }
        other => Err(format!("unknown command `{other}`")),
    };
    match status {
        Ok(code) => code,
        Err(usage) => {
            eprintln!("cudajit: {usage}\nRun `cudajit help` for the commands.");
            USAGE
        }
    }
}
