//! A kernel with the constructs of issue 14's third batch together, for the differential
//! test: bound sub-slices and `split_at_mut`, closures called in the body and passed to
//! a generic device function, and `grid_sync()` in a cooperative launch.
#![allow(dead_code)]

use cudajit::prelude::*;

/// Folds every element of `x` with `op`, from `init`.
#[device]
pub fn fold_all<F: Fn(f32, f32) -> f32>(x: &[f32], init: f32, op: F) -> f32 {
    let mut acc = init;
    for i in 0..x.len() {
        acc = op(acc, x[i]);
    }
    acc
}

/// Thread `t` folds row `t` of `x` into `rows[t]`, writes into its half of `halves`, and
/// after a grid barrier thread 0 sums every row into `total`.
#[kernel]
pub fn views_closures_grid(
    x: &[f32],
    width: usize,
    mid: usize,
    scale: f32,
    rows: &mut [f32],
    halves: &mut [f32],
    total: &mut [f32],
) {
    let t = global_index();
    let row = &x[t * width..(t + 1) * width];
    let shifted = |v: f32| v * scale + 1.0;
    rows[t] = fold_all(row, 0.0, |a, b| a + b * scale);
    let (lo, hi) = halves.split_at_mut(mid);
    if t < lo.len() {
        lo[t] = shifted(row[0]);
    } else if t - lo.len() < hi.len() {
        hi[t - lo.len()] = fold_all(&row[1..], f32::NEG_INFINITY, |a, b| a.max(b));
    }
    grid_sync();
    if t == 0 {
        total[0] = fold_all(rows, 0.0, |a, b| a + b);
    }
}

/// Blocks and threads of the case's cooperative launch.
pub const VIEWS_GRID: (u32, u32) = (4, 64);
