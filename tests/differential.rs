//! Differential testing: every case of `tests/common/cases.rs` (every kernel of
//! `tests/common/kernels.rs`, and libdevice function by function) run on the GPU and on
//! the CPU simulator, outputs compared: integers exactly, floats bit for bit where the
//! operations are IEEE ones, libdevice results within their ulp bounds. Skipped, saying
//! why, without a GPU.
//!
//! Run it with `CUDAJIT_FMA=0`, so the GPU does not contract `a * b + c` into FMAs (the
//! simulator never does) and float arithmetic is compared exactly; with contraction on,
//! exact float outputs are compared within a relative 1e-5 instead.

mod common;

use common::cases::{self, Tolerance};
use cudajit::Stream;

#[test]
fn every_kernel_agrees_with_the_gpu() {
    let Some(_) = common::gpu_or_skip() else {
        return;
    };
    let gpu = Stream::gpu(0).expect("GPU 0");
    let sim = Stream::simulator();
    let fma_off = std::env::var("CUDAJIT_FMA").as_deref() == Ok("0");
    if !fma_off {
        eprintln!(
            "note: CUDAJIT_FMA=0 is not set, so the GPU contracts a * b + c into FMAs; exact float outputs are compared within a relative 1e-5"
        );
    }
    let mut failures = Vec::new();
    let mut compared = 0usize;
    println!(
        "{:<20} {:<24} {:>8} {:>12} {:>9} {:>10}  result",
        "case", "output", "elements", "tolerance", "max ulp", "differing"
    );
    for case in cases::all() {
        let on_gpu = match (case.run)(&gpu) {
            Ok(outputs) => outputs,
            Err(error) => {
                failures.push(format!("{}: the GPU run failed: {error}", case.name));
                continue;
            }
        };
        let simulated = match (case.run)(&sim) {
            Ok(outputs) => outputs,
            Err(error) => {
                failures.push(format!("{}: the simulator failed: {error}", case.name));
                continue;
            }
        };
        for (g, s) in on_gpu.iter().zip(&simulated) {
            let tolerance = match g.tolerance {
                Tolerance::Exact if !fma_off => Tolerance::Relative(1e-5),
                other => other,
            };
            let elements = match &g.values {
                cases::Values::Bool(v) => v.len(),
                cases::Values::U8(v) => v.len(),
                cases::Values::I16(v) => v.len(),
                cases::Values::I32(v) => v.len(),
                cases::Values::U32(v) => v.len(),
                cases::Values::I64(v) => v.len(),
                cases::Values::U64(v) => v.len(),
                cases::Values::F32(v) => v.len(),
                cases::Values::F64(v) => v.len(),
            };
            compared += elements;
            let shown = match tolerance {
                Tolerance::Exact => "exact".to_owned(),
                Tolerance::Ulp(n) => format!("{n} ulp"),
                Tolerance::Relative(r) => format!("rel {r:e}"),
            };
            match cases::compare(&g.values, &s.values, tolerance) {
                Ok(agreement) => println!(
                    "{:<20} {:<24} {:>8} {:>12} {:>9} {:>10}  ok",
                    case.name, g.name, elements, shown, agreement.max_ulp, agreement.differing
                ),
                Err(detail) => {
                    println!(
                        "{:<20} {:<24} {:>8} {:>12} {:>9} {:>10}  MISMATCH: {detail}",
                        case.name, g.name, elements, shown, "-", "-"
                    );
                    failures.push(format!("{} / {}: {detail}", case.name, g.name));
                }
            }
        }
    }
    println!(
        "{compared} output elements compared, {} mismatches",
        failures.len()
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
