//! The fused attention of `examples/attention/kernels.rs` (mma.sync, ldmatrix.trans,
//! cp.async with zero fill, `ex2.approx`, quad shuffles) on the CPU simulator, against an
//! f64 host attention, at small shapes: head dimensions 64 and 128, a sequence with a
//! partial last tile, grouped-query heads, causal and not. No GPU needed.

#[allow(dead_code)]
#[path = "../examples/attention/kernels.rs"]
mod kernels;

use cudajit::{bf16, LaunchConfig, Stream};

/// Deterministic values in [-1, 1), as bf16.
fn random_bf16(seed: u64, count: usize) -> Vec<bf16> {
    let mut state = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    (0..count)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            bf16::from_f32(((state >> 40) as f32 / (1u64 << 24) as f32) * 2.0 - 1.0)
        })
        .collect()
}

struct Shape {
    dim: usize,
    heads: usize,
    kv_heads: usize,
    seq: usize,
    causal: bool,
}

/// Output rows and log-sum-exps of query head `h` (batch 1), in f64.
fn reference(shape: &Shape, q: &[bf16], k: &[bf16], v: &[bf16], h: usize) -> (Vec<f64>, Vec<f64>) {
    let (s, dim) = (shape.seq, shape.dim);
    let kvh = h / (shape.heads / shape.kv_heads);
    let (qo, ko) = (h * s * dim, kvh * s * dim);
    let scale = 1.0 / (dim as f64).sqrt();
    let x = |t: &[bf16], i: usize| f64::from(t[i].to_f32());
    let mut out = vec![0.0; s * dim];
    let mut lse = vec![0.0; s];
    for i in 0..s {
        let keys = if shape.causal { i + 1 } else { s };
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
            let p = (score - m).exp() / sum;
            for d in 0..dim {
                out[i * dim + d] += p * x(v, ko + j * dim + d);
            }
        }
    }
    (out, lse)
}

/// Runs one shape on the simulator; every output within the example's bounds (bf16 P and
/// output: 2e-2 on outputs below 1 in magnitude; 1e-3 on the log-sum-exps).
fn check(stream: &Stream, shape: &Shape) {
    let q_len = shape.heads * shape.seq * shape.dim;
    let kv_len = shape.kv_heads * shape.seq * shape.dim;
    let (q, k, v) = (
        random_bf16(1, q_len),
        random_bf16(2, kv_len),
        random_bf16(3, kv_len),
    );
    let (dq, dk, dv) = (
        stream.clone_htod(&q).unwrap(),
        stream.clone_htod(&k).unwrap(),
        stream.clone_htod(&v).unwrap(),
    );
    let mut o = stream.alloc_zeros::<bf16>(q_len).unwrap();
    let mut lse = stream.alloc_zeros::<f32>(shape.heads * shape.seq).unwrap();
    let config = LaunchConfig::new(
        (
            shape.seq.div_ceil(kernels::BLOCK_Q) as u32,
            shape.heads as u32,
            1,
        ),
        kernels::THREADS,
    )
    .with_shared_mem(kernels::shared_bytes(shape.dim));
    let (seq, heads, kv_heads) = (shape.seq as u32, shape.heads as u32, shape.kv_heads as u32);
    let scale = 1.0 / (shape.dim as f32).sqrt();
    match shape.dim {
        64 => kernels::attention_fwd::launch::<64>(
            stream,
            config,
            &dq,
            &dk,
            &dv,
            &mut o,
            &mut lse,
            seq,
            heads,
            kv_heads,
            scale,
            shape.causal,
        ),
        _ => kernels::attention_fwd::launch::<128>(
            stream,
            config,
            &dq,
            &dk,
            &dv,
            &mut o,
            &mut lse,
            seq,
            heads,
            kv_heads,
            scale,
            shape.causal,
        ),
    }
    .unwrap();
    let (o, lse) = (
        stream.clone_dtoh(&o).unwrap(),
        stream.clone_dtoh(&lse).unwrap(),
    );
    let what = format!(
        "d={} heads={}/{} seq={} causal={}",
        shape.dim, shape.heads, shape.kv_heads, shape.seq, shape.causal
    );
    for h in 0..shape.heads {
        let (want_o, want_lse) = reference(shape, &q, &k, &v, h);
        let first = h * shape.seq;
        for (i, w) in want_o.iter().enumerate() {
            let got = f64::from(o[first * shape.dim + i].to_f32());
            assert!(
                (got - w).abs() <= 2e-2,
                "{what}: o[{h}][{i}] = {got}, host {w}"
            );
        }
        for (i, w) in want_lse.iter().enumerate() {
            let got = f64::from(lse[first + i]);
            assert!(
                (got - w).abs() <= 1e-3,
                "{what}: lse[{h}][{i}] = {got}, host {w}"
            );
        }
    }
}

#[test]
fn attention_matches_the_host_on_the_simulator() {
    let stream = Stream::simulator();
    // Two query heads on one KV head (GQA); 80 rows: a full tile of 64 and a zero-filled,
    // masked tail of 16.
    for causal in [false, true] {
        let shape = Shape {
            dim: 64,
            heads: 2,
            kv_heads: 1,
            seq: 80,
            causal,
        };
        check(&stream, &shape);
    }
    let shape = Shape {
        dim: 128,
        heads: 1,
        kv_heads: 1,
        seq: 64,
        causal: false,
    };
    check(&stream, &shape);
}
