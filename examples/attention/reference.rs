//! The straightforward attention the kernel is checked against (f64 on the host, every
//! score materialised), the inputs both are given, and the error bounds of each element
//! type. Shared by the example and `tests/attention.rs`.

use super::kernels::{Element, Problem};

/// Deterministic values in [-1, 1), rounded to `T`.
pub fn random<T: Element>(seed: u64, count: usize) -> Vec<T> {
    let mut state = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    (0..count)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            T::from_f32(((state >> 40) as f32 / (1u64 << 24) as f32) * 2.0 - 1.0)
        })
        .collect()
}

/// The largest output error allowed for `T`, on outputs of magnitude below 1: P is rounded
/// to `T` before `P V` and the output is rounded to `T`, so a few units in the last place
/// of `T` (8 bits of mantissa for bf16, 11 for f16), with room for the sums.
pub fn output_bound<T: Element>() -> f64 {
    if T::F16 {
        4e-3
    } else {
        2e-2
    }
}

/// The largest log-sum-exp error allowed (f32 statistics, `ex2.approx`).
pub const LSE_BOUND: f64 = 1e-3;

/// Output rows and log-sum-exps of query head `h` of batch `b`, in f64.
pub fn attention<T: Element>(
    p: &Problem,
    (q, k, v): (&[T], &[T], &[T]),
    b: usize,
    h: usize,
) -> (Vec<f64>, Vec<f64>) {
    let (s, dim) = (p.seq, p.dim);
    let kvh = h / (p.heads / p.kv_heads);
    let qo = (b * p.heads + h) * s * dim;
    let ko = (b * p.kv_heads + kvh) * s * dim;
    let scale = 1.0 / (dim as f64).sqrt();
    let x = |t: &[T], i: usize| f64::from(t[i].to_f32());
    let mut out = vec![0.0; s * dim];
    let mut lse = vec![0.0; s];
    for i in 0..s {
        let keys = if p.causal { i + 1 } else { s };
        let scores: Vec<f64> = (0..keys)
            .map(|j| {
                (0..dim)
                    .map(|d| x(q, qo + i * dim + d) * x(k, ko + j * dim + d))
                    .sum::<f64>()
                    * scale
            })
            .collect();
        let m = scores.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
        let sum: f64 = scores.iter().map(|s| (s - m).exp()).sum();
        lse[i] = m + sum.ln();
        for (j, score) in scores.iter().enumerate() {
            let weight = (score - m).exp() / sum;
            for d in 0..dim {
                out[i * dim + d] += weight * x(v, ko + j * dim + d);
            }
        }
    }
    (out, lse)
}

/// The largest errors of the kernel's `o` and `lse` against [`attention`], over every
/// batch and head, and where the first of them is: `(worst o, worst lse, worst o's index)`.
pub fn worst_errors<T: Element>(
    p: &Problem,
    inputs: (&[T], &[T], &[T]),
    o: &[T],
    lse: &[f32],
) -> (f64, f64, usize) {
    let (mut worst_o, mut worst_lse, mut at) = (0.0f64, 0.0f64, 0);
    for b in 0..p.batch {
        for h in 0..p.heads {
            let (want_o, want_lse) = attention(p, inputs, b, h);
            let first = (b * p.heads + h) * p.seq;
            for (i, w) in want_o.iter().enumerate() {
                let error = distance(f64::from(o[first * p.dim + i].to_f32()), *w);
                if error > worst_o {
                    worst_o = error;
                    at = first * p.dim + i;
                }
            }
            for (i, w) in want_lse.iter().enumerate() {
                let error = distance(f64::from(lse[first + i]), *w);
                if error > worst_lse {
                    worst_lse = error;
                }
            }
        }
    }
    (worst_o, worst_lse, at)
}

/// `|got - want|`, infinite where `got` is not a number (so a NaN is never within bounds).
fn distance(got: f64, want: f64) -> f64 {
    let d = (got - want).abs();
    if d.is_nan() {
        f64::INFINITY
    } else {
        d
    }
}
