//! Random kernels (random expression trees and control flow, built as IR) run on the CPU
//! simulator, compiled to real cubins by libNVVM and nvJitLink, and, on a machine with a
//! GPU, run there and compared with the simulator: integers and IEEE float operations bit
//! for bit (compiled without FMA contraction), libdevice functions within their ulp bounds.
//!
//! Deterministic: kernel `k` is `random_kernel(k)`. `CUDAJIT_RANDOM_KERNELS=N` (default 60)
//! and `CUDAJIT_RANDOM_SEED=S` (default 0) choose the seeds `S..S+N`; the run stops after
//! `CUDAJIT_RANDOM_SECONDS` (default 120). `examples/random_kernels.rs` runs many more on a
//! GPU machine.

mod common;
#[path = "common/random.rs"]
mod random;

use std::time::Duration;

use cudajit::codegen::Arch;

fn env_number(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

#[test]
fn random_kernels_agree() {
    let count = env_number("CUDAJIT_RANDOM_KERNELS", 60);
    let first = env_number("CUDAJIT_RANDOM_SEED", 0);
    let budget = Duration::from_secs(env_number("CUDAJIT_RANDOM_SECONDS", 120));
    let toolchain = common::toolchain_or_skip();
    let context = cudajit::default_context().ok();
    let stream = context.as_ref().map(|c| c.default_stream());
    let gpu = match (&context, &stream) {
        (Some(context), Some(stream)) => {
            let (major, minor) = context.compute_capability().unwrap();
            Some((stream, Arch::new(major as u32, minor as u32)))
        }
        _ => {
            eprintln!("no GPU: random kernels run on the simulator and are compiled, not compared");
            None
        }
    };
    let summary = random::run_batch(first..first + count, toolchain, gpu, budget, false);
    eprintln!("{}", summary.line());
    for failure in &summary.failures {
        eprintln!("--- {failure}");
    }
    assert!(summary.failures.is_empty(), "{}", summary.line());
    assert!(summary.simulated > 0);
}
