//! Differential testing of the CPU simulator against the GPU with random kernels: each
//! kernel (random expression trees and control flow, built as IR by
//! `cudajit_kernel_generator`) is run on the simulator, compiled by libNVVM and nvJitLink
//! without FMA contraction, run on GPU 0 and compared element by element. Prints a summary
//! and every mismatch with the kernel's text; exits with 1 on any failure.
//!
//! `cargo run --release --example random_kernels -- [COUNT] [FIRST_SEED]` (default 500, 0).
//! Without a GPU the kernels are simulated and compiled only.

#[path = "../tests/common/random.rs"]
mod random;

use std::time::Duration;

use cudajit::codegen::toolchain::Toolchain;
use cudajit::codegen::Arch;

fn main() {
    let mut args = std::env::args().skip(1);
    let count: u64 = args.next().and_then(|a| a.parse().ok()).unwrap_or(500);
    let first: u64 = args.next().and_then(|a| a.parse().ok()).unwrap_or(0);
    let toolchain = match Toolchain::global() {
        Ok(toolchain) => Some(toolchain),
        Err(error) => {
            eprintln!("no NVIDIA toolchain ({error}): simulating only");
            None
        }
    };
    let context = match cudajit::default_context() {
        Ok(context) => Some(context),
        Err(error) => {
            eprintln!("{error}: nothing is compared with a GPU");
            None
        }
    };
    let stream = context.as_ref().map(|c| c.default_stream());
    let gpu = match (&context, &stream) {
        (Some(context), Some(stream)) => {
            let (major, minor) = context.compute_capability().unwrap_or((9, 0));
            let arch = Arch::new(major as u32, minor as u32);
            println!("GPU: {} ({arch})", context.name().unwrap_or_default());
            Some((stream, arch))
        }
        _ => None,
    };
    let summary = random::run_batch(
        first..first + count,
        toolchain,
        gpu,
        Duration::from_secs(3600),
        false,
    );
    for failure in &summary.failures {
        println!("--- {failure}");
    }
    println!("seeds {first}..{}: {}", first + count, summary.line());
    if !summary.failures.is_empty() {
        std::process::exit(1);
    }
}
