//! `--cpu-check`: what can be checked without a GPU (the CPU references on small inputs,
//! and every kernel compiled for sm_90).

use std::time::Instant;

use cudajit::Arch;

use super::checks::Random;
use super::kernels::{compile_all, kernel_list};
use super::options::Options;
use super::references::*;
use super::report::dump_cubin;
use super::Result;

pub(crate) fn cpu_check(options: &Options) -> Result<()> {
    println!("CPU references on small inputs:");
    let expect = |ok: bool, what: &str| -> Result<()> {
        if ok {
            println!("  ok   {what}");
            Ok(())
        } else {
            Err(format!("CPU reference check failed: {what}").into())
        }
    };

    let (exact, tolerance) = saxpy_ref(2.0, &[1.0, -0.5, 3.0], &[0.5, 0.5, 1.0]);
    expect(
        exact == [2.5, -0.5, 7.0] && tolerance.iter().all(|&t| t > 0.0 && t < 1e-5),
        "saxpy_ref: values and tolerances",
    )?;

    let x = Random::f32s(1, 1000, 0.0, 1.0);
    expect(
        x.iter().all(|&v| (0.0..1.0).contains(&v))
            && (x.iter().sum::<f32>() / 1000.0 - 0.5).abs() < 0.05,
        "Random::f32s: uniform in [0, 1)",
    )?;

    let ones = vec![1u32; 10_000];
    let scan = scan_ref(&ones);
    expect(
        scan.iter().enumerate().all(|(i, &v)| v as usize == i + 1),
        "scan_ref of ones is 1..=n",
    )?;
    let words = Random::u32s(2, 9999);
    let scan = scan_ref(&words);
    let total = words.iter().fold(0u32, |s, &w| s.wrapping_add(w));
    expect(
        scan.last() == Some(&total),
        "scan_ref wraps and ends at the wrapping sum",
    )?;

    let bins = histogram_ref(&words);
    expect(
        bins.iter().map(|&b| b as usize).sum::<usize>() == 4 * words.len(),
        "histogram_ref counts every byte",
    )?;
    expect(
        histogram_ref(&[0x0102_0304])[1..=4] == [1, 1, 1, 1],
        "histogram_ref reads bytes little-endian",
    )?;

    let m = Random::f32s(3, 33 * 65, -1.0, 1.0);
    expect(
        transpose_ref(65, 33, &transpose_ref(33, 65, &m)) == m,
        "transpose_ref twice is the identity",
    )?;

    let (mm, nn, kk) = (8, 12, 8);
    let a = Random::f32s(4, mm * kk, -1.0, 1.0);
    let identity: Vec<f32> = (0..kk * kk)
        .map(|i| if i / kk == i % kk { 1.0 } else { 0.0 })
        .collect();
    let a_times_identity = (0..mm).all(|i| {
        (0..kk).all(|j| sgemm_entry(&a, &identity, kk, kk, i, j).0 == f64::from(a[i * kk + j]))
    });
    expect(a_times_identity, "sgemm_entry: A x I = A")?;
    let samples = sgemm_samples(4096, 4096, false);
    expect(
        samples.len() > 4096 && samples.iter().all(|&(i, j)| i < 4096 && j < 4096),
        "sgemm_samples stay inside the matrix",
    )?;
    expect(
        sgemm_samples(mm, nn, true).len() == mm * nn,
        "sgemm_samples(full) is every entry",
    )?;

    let x = Random::f32s(5, 4 * 1024, -8.0, 8.0);
    let y = softmax_ref(4, 1024, &x);
    let sums_to_one = y
        .chunks(1024)
        .all(|row| (row.iter().sum::<f64>() - 1.0).abs() < 1e-12);
    expect(sums_to_one, "softmax_ref rows sum to 1")?;

    println!("\nEvery kernel compiled for sm_90 (libNVVM -> nvJitLink):");
    let started = Instant::now();
    for (entry, bytes) in compile_all(Arch::SM_90)? {
        println!("  ok   {entry:<24} cubin {bytes:>6} bytes");
    }
    println!(
        "  ({:.0} ms, compiles and cache hits)",
        started.elapsed().as_secs_f64() * 1e3
    );
    if let Some(dir) = &options.dump_cubins {
        for (kernel, spec, _) in kernel_list() {
            let compiled = kernel.compile_for_arch_with(Arch::SM_90, &spec)?;
            dump_cubin(dir, &compiled.entry, &compiled.cubin)?;
        }
        println!("  cubins written to {}", dir.display());
    }
    println!("\ncpu-check passed");
    Ok(())
}
