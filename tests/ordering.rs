//! `core::cmp::Ordering` in kernels: `cmp`, `total_cmp`, `partial_cmp`, the constants,
//! `reverse`, `then`, `then_with`, the `is_*` tests, `match` arms, device functions
//! returning an `Ordering`, and the iterator consumers `min_by`/`max_by`. Checked against
//! rustc running the same `#[device]` functions on the host (NaNs, signed zeros and ties
//! included); on the CPU simulator always, on a GPU when there is one.

mod common;

use core::cmp::Ordering;

use cudajit::prelude::*;
use cudajit::Stream;

/// Orders by the magnitude, then by the value (so `-2` before `2`).
#[device]
pub fn by_magnitude(a: f32, b: f32) -> Ordering {
    a.abs().total_cmp(&b.abs()).then(a.total_cmp(&b))
}

#[device]
pub fn as_number(o: Ordering) -> i32 {
    match o {
        Ordering::Less => -10,
        Ordering::Equal => 0,
        Ordering::Greater => 10,
    }
}

#[device]
pub fn orderings(x: &[f32], i: usize) -> f32 {
    let a = x[i];
    let b = x[(i * 7 + 3) % x.len()];
    let n = i as i32 - 5;
    let m = (i as i32 * 3) % 7 - 3;
    let c =
        as_number(n.cmp(&m)) + 2 * as_number(a.total_cmp(&b)) + 3 * as_number(by_magnitude(a, b));
    let d = match a.partial_cmp(&b) {
        Some(o) => as_number(o.reverse()),
        None => 77,
    };
    let e = a.partial_cmp(&b).is_some_and(|o| o.is_le()) as i32
        + 2 * (n.cmp(&m) == Ordering::Greater) as i32
        + 4 * n.cmp(&m).then_with(|| a.total_cmp(&b)).is_gt() as i32
        + 8 * (Ordering::Less.reverse() == Ordering::Greater) as i32;
    let biggest = x
        .iter()
        .copied()
        .max_by(|p, q| p.total_cmp(q))
        .unwrap_or(-1.0);
    let smallest = x
        .iter()
        .copied()
        .min_by(|p, q| by_magnitude(*p, *q))
        .unwrap_or(-1.0);
    let first_max = (0..x.len())
        .max_by(|&p, &q| (x[p].abs() as i32).cmp(&(x[q].abs() as i32)))
        .unwrap_or(99);
    let first_min = (0..x.len())
        .min_by(|&p, &q| ((x[p] * 2.0) as i32).cmp(&((x[q] * 2.0) as i32)))
        .unwrap_or(99);
    // The largest in the total order is a NaN: its bits, not arithmetic on it (NaN bits
    // of arithmetic are the platform's).
    let biggest = (biggest.to_bits() % 1000) as f32;
    (c + 5 * d + 100 * e) as f32
        + biggest * 1000.0
        + smallest * 3.0
        + first_max as f32 * 7.0
        + first_min as f32 * 11.0
}

#[kernel]
fn ordering_kernel(x: &[f32], out: &mut [f32]) {
    let i = global_index();
    if i < x.len() {
        out[i] = orderings(x, i);
    }
}

fn inputs() -> Vec<f32> {
    let mut x: Vec<f32> = (0..29)
        .map(|i| ((i * 11 % 29) as f32 - 14.0) * 0.5)
        .collect();
    x[3] = -0.0;
    x[4] = 0.0;
    x[7] = f32::NAN;
    x[9] = -f32::NAN;
    x[12] = f32::INFINITY;
    x[13] = x[14];
    x
}

fn check(stream: &Stream) {
    let x = inputs();
    let n = x.len();
    let dx = stream.clone_htod(&x).unwrap();
    let mut out = stream.alloc_zeros::<f32>(n).unwrap();
    ordering_kernel::launch(stream, LaunchConfig::for_elements(n), &dx, &mut out).unwrap();
    let got = stream.clone_dtoh(&out).unwrap();
    for (i, g) in got.iter().enumerate() {
        let w = orderings(&x, i);
        assert_eq!(g.to_bits(), w.to_bits(), "out[{i}]: cudajit {g}, rustc {w}");
    }
}

#[test]
fn orderings_on_the_simulator() {
    check(&Stream::simulator());
}

#[test]
fn orderings_on_the_gpu() {
    common::on_gpu_without_fma(check);
}
