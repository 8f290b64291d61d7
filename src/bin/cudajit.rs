//! `cudajit`: the environment as cudajit sees it, the JIT cache, and what kernels became.
//!
//! ```text
//! cudajit doctor [--compile-only]
//! cudajit cache list|stats|clear|verify [--remove] [--dir DIR]
//! cudajit emit --kernel NAME [--arch sm_90] --ir|--nvvm|--ptx|--sass [--dir DIR]
//! cudajit emit --list [--dir DIR]
//! ```
//!
//! Built with the `cli` feature (`cargo run --release --features cli --bin cudajit -- doctor`),
//! so that programs depending on cudajit do not compile its command-line parser.
//!
//! Exit status: 0 when all is well, 1 when something is missing or damaged (the output says
//! how to fix it), 2 for a command line it does not understand.

fn main() {
    if let Err(error) = cudajit::log::init() {
        eprintln!("cudajit: {error}");
        std::process::exit(2);
    }
    std::process::exit(cudajit_cli::run(std::env::args_os()));
}
