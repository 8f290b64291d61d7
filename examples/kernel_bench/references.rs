//! CPU references: what every kernel must compute, in plain Rust (f64 where rounding
//! matters, with the bounds the comparisons use).

use super::checks::Random;

pub(crate) fn saxpy_ref(alpha: f32, x: &[f32], y: &[f32]) -> (Vec<f64>, Vec<f64>) {
    let exact: Vec<f64> = x
        .iter()
        .zip(y)
        .map(|(&x, &y)| f64::from(alpha) * f64::from(x) + f64::from(y))
        .collect();
    // One rounding with FMA, two without: allow two half-ulps of the operands' magnitude.
    let tolerance = x
        .iter()
        .zip(y)
        .map(|(&x, &y)| 1.2e-7 * (f64::from(alpha * x).abs() + f64::from(y).abs()) + 1e-30)
        .collect();
    (exact, tolerance)
}

/// The inclusive prefix sum with `u32` wrapping, as the kernels compute it.
pub(crate) fn scan_ref(x: &[u32]) -> Vec<u32> {
    let mut sum = 0u32;
    x.iter()
        .map(|&v| {
            sum = sum.wrapping_add(v);
            sum
        })
        .collect()
}

/// Counts of the bytes packed little-endian in `words`.
pub(crate) fn histogram_ref(words: &[u32]) -> Vec<u32> {
    let mut bins = vec![0u32; 256];
    for &w in words {
        for byte in w.to_le_bytes() {
            bins[usize::from(byte)] += 1;
        }
    }
    bins
}

pub(crate) fn transpose_ref(rows: usize, cols: usize, input: &[f32]) -> Vec<f32> {
    let mut out = vec![0.0; rows * cols];
    for r in 0..rows {
        for c in 0..cols {
            out[c * rows + r] = input[r * cols + c];
        }
    }
    out
}

/// Entry (i, j) of `a * b` (row-major, inner dimension k) in f64, and the sum of the
/// magnitudes of its terms, which bounds the f32 rounding error.
pub(crate) fn sgemm_entry(
    a: &[f32],
    b: &[f32],
    n: usize,
    k: usize,
    i: usize,
    j: usize,
) -> (f64, f64) {
    let mut dot = 0.0f64;
    let mut magnitude = 0.0f64;
    for p in 0..k {
        let term = f64::from(a[i * k + p]) * f64::from(b[p * n + j]);
        dot += term;
        magnitude += term.abs();
    }
    (dot, magnitude)
}

/// The (i, j) entries an SGEMM check compares: all of them for small products; for large
/// ones the four corners, the first and last row and column of a few block tiles, and
/// pseudo-random entries (the full CPU product of 4096^3 would take minutes).
pub(crate) fn sgemm_samples(m: usize, n: usize, full: bool) -> Vec<(usize, usize)> {
    if full {
        return (0..m).flat_map(|i| (0..n).map(move |j| (i, j))).collect();
    }
    let mut samples = vec![(0, 0), (0, n - 1), (m - 1, 0), (m - 1, n - 1)];
    for t in [0, 127, 128, 255, 300] {
        if t < m.min(n) {
            for u in 0..128.min(n) {
                samples.push((t, u));
                samples.push((u.min(m - 1), t));
            }
        }
    }
    let mut r = Random::new(11);
    for _ in 0..4096 {
        samples.push((
            (r.next() % m as u64) as usize,
            (r.next() % n as u64) as usize,
        ));
    }
    samples
}

pub(crate) fn softmax_ref(rows: usize, cols: usize, x: &[f32]) -> Vec<f64> {
    let mut out = Vec::with_capacity(rows * cols);
    for row in x.chunks(cols).take(rows) {
        let max = row
            .iter()
            .fold(f64::NEG_INFINITY, |m, &v| m.max(f64::from(v)));
        let exps: Vec<f64> = row.iter().map(|&v| (f64::from(v) - max).exp()).collect();
        let sum: f64 = exps.iter().sum();
        out.extend(exps.iter().map(|e| e / sum));
    }
    out
}
