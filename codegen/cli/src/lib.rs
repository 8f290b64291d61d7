//! The `cudajit` command-line tool, one module per subcommand; the binary is the facade's
//! (`cargo run --features cli --bin cudajit`, `src/bin/cudajit.rs`), which calls [`run`].

// The macros' expansions name the runtime `::cudajit` (what the facade re-exports), so this
// crate, built on the runtime without the facade, names it so too.
extern crate cudajit_runtime as cudajit;

mod cache;
mod doctor;
mod emit;
mod format;

use clap::{Parser, Subcommand};

/// Exit status: success.
pub const OK: i32 = 0;
/// Exit status: something is missing or damaged.
pub const PROBLEM: i32 = 1;
/// Exit status: the command line is wrong (clap's status for usage errors too).
pub const USAGE: i32 = 2;

const ENVIRONMENT: &str = "\
ENVIRONMENT:
  CUDAJIT_CACHE_DIR, CUDAJIT_CACHE=0, CUDAJIT_CACHE_MAX_BYTES   the cache (see docs/pipeline.md)
  CUDAJIT_LOG=debug    log on stderr (cache misses explain themselves at debug level)
  CUDAJIT_DUMP=DIR     programs write each compiled kernel's IR, NVVM IR, PTX and cubin

EXIT STATUS:
  0 all is well, 1 something is missing or damaged (the output says how to fix it),
  2 the command line is wrong";

/// The environment, the JIT cache and the compiled kernels of cudajit.
#[derive(Debug, Parser)]
#[command(name = "cudajit", version, after_help = ENVIRONMENT)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Checks the toolchain, GPUs, NCCL and the cache; compiles and runs a small kernel.
    ///
    /// Toolchain (libNVVM, libdevice, nvJitLink, NVRTC, nvcc: paths, versions), GPUs, NCCL,
    /// cache directory; compiles (and, with a GPU, runs) a small kernel. Without a GPU it
    /// says whether compiling works (running needs a GPU). Exits 0 when all is well, 1 with
    /// the fix when something is missing (no GPU counts, unless --compile-only), 2 for a
    /// wrong command line.
    Doctor(doctor::DoctorArgs),
    /// The disk cache: list, stats, verify [--remove], clear.
    Cache(cache::CacheArgs),
    /// Prints what a kernel became (IR, NVVM IR, PTX, SASS).
    ///
    /// Reads the files a program run with CUDAJIT_DUMP=DIR wrote (DIR defaults to
    /// $CUDAJIT_DUMP); --sass disassembles the cubin with nvdisasm or cuobjdump.
    Emit(emit::EmitArgs),
}

/// Runs the command line (with the program name first); returns the exit status.
pub fn run<I, T>(args: I) -> i32
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    let cli = match Cli::try_parse_from(args) {
        Ok(cli) => cli,
        Err(error) => {
            // `--help` and `--version` are "errors" that print to stdout and succeed.
            let _ = error.print();
            return if error.use_stderr() { USAGE } else { OK };
        }
    };
    let status = match cli.command {
        Command::Doctor(args) => doctor::run(&args),
        Command::Cache(args) => cache::run(&args),
        Command::Emit(args) => emit::run(&args),
    };
    match status {
        Ok(code) => code,
        Err(usage) => {
            eprintln!("cudajit: {usage}\nRun `cudajit help` for the commands.");
            USAGE
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_command_line_is_well_formed() {
        use clap::CommandFactory;
        Cli::command().debug_assert();
    }

    #[test]
    fn help_version_and_mistakes_have_their_exit_statuses() {
        assert_eq!(run(["cudajit", "--help"]), OK);
        assert_eq!(run(["cudajit", "--version"]), OK);
        assert_eq!(run(["cudajit", "cache", "--help"]), OK);
        assert_eq!(run(["cudajit"]), USAGE);
        assert_eq!(run(["cudajit", "frobnicate"]), USAGE);
        assert_eq!(run(["cudajit", "cache", "sort"]), USAGE);
        assert_eq!(
            run(["cudajit", "emit", "--ir", "--ptx", "--kernel", "k"]),
            USAGE
        );
    }

    #[test]
    fn options_parse_where_users_put_them() {
        let cli = Cli::try_parse_from(["cudajit", "cache", "--dir", "/tmp/x", "list"]).unwrap();
        let Command::Cache(cache) = cli.command else {
            panic!("{cli:?}")
        };
        assert_eq!(cache.dir.as_deref(), Some(std::path::Path::new("/tmp/x")));
        let cli = Cli::try_parse_from(["cudajit", "cache", "stats", "--dir", "/tmp/y"]).unwrap();
        let Command::Cache(cache) = cli.command else {
            panic!("{cli:?}")
        };
        assert_eq!(cache.dir.as_deref(), Some(std::path::Path::new("/tmp/y")));
        let cli = Cli::try_parse_from([
            "cudajit", "emit", "--kernel", "saxpy", "--arch", "sm_90", "--sass",
        ])
        .unwrap();
        let Command::Emit(emit) = cli.command else {
            panic!("{cli:?}")
        };
        assert_eq!(emit.kernel.as_deref(), Some("saxpy"));
        assert_eq!(emit.kind(), Some("--sass"));
    }
}
