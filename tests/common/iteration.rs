//! Arrays, iterator loops, `x.get(i)` with `if let`/`while let`/`let … else`, and `loop`
//! as a value, written as a Rust programmer writes them. Each kernel has a CPU reference
//! written with Rust's own arrays and iterators; `tests/sim_language.rs` runs them on the
//! simulator, `tests/gpu_language.rs` on a GPU, `cases.rs` lists them for the
//! differential test.
#![allow(dead_code)]

use cudajit::prelude::*;

/// Array literals, a typed array local, array patterns (with `..`), loops over arrays by
/// value, by reference and with `enumerate()`, and whole-array assignment.
#[kernel]
pub fn array_forms(x: &[f32], filtered: &mut [f32], totals: &mut [f32], ends: &mut [i32]) {
    let i = global_index();
    if i < x.len() {
        let weights = [0.25f32, 0.5, 0.25];
        let left = if i > 0 { x[i - 1] } else { 0.0 };
        let right = if i + 1 < x.len() { x[i + 1] } else { 0.0 };
        let window = [left, x[i], right];
        let mut acc: [f32; 4] = [0.0; 4];
        for (k, w) in weights.iter().enumerate() {
            acc[k] = w * window[k];
        }
        let [a, b, c, _] = acc;
        filtered[i] = a + b + c;
        let mut total = 0.0;
        for v in acc {
            total += v;
        }
        for &w in &weights {
            total += w * 10.0;
        }
        for mut v in window {
            v *= 2.0;
            total += v;
        }
        totals[i] = total;
        let ints: [i32; 3] = [i as i32, -(i as i32), 7];
        let [first, .., last] = ints;
        let mut pair = [first, last];
        pair = [pair[1], pair[0] * 3];
        let [p, q] = pair;
        ends[i] = p * 100 + q;
    }
}

pub fn array_forms_ref(x: &[f32]) -> (Vec<f32>, Vec<f32>, Vec<i32>) {
    let n = x.len();
    let (mut filtered, mut totals, mut ends) = (vec![0.0; n], vec![0.0; n], vec![0; n]);
    for i in 0..n {
        let weights = [0.25f32, 0.5, 0.25];
        let left = if i > 0 { x[i - 1] } else { 0.0 };
        let right = if i + 1 < n { x[i + 1] } else { 0.0 };
        let window = [left, x[i], right];
        let mut acc = [0.0f32; 4];
        for (k, w) in weights.iter().enumerate() {
            acc[k] = w * window[k];
        }
        filtered[i] = acc[0] + acc[1] + acc[2];
        let mut total = 0.0f32;
        for v in acc {
            total += v;
        }
        for &w in &weights {
            total += w * 10.0;
        }
        for v in window {
            total += v * 2.0;
        }
        totals[i] = total;
        let ints = [i as i32, -(i as i32), 7];
        let pair = [ints[2], ints[0] * 3];
        ends[i] = pair[0] * 100 + pair[1];
    }
    (filtered, totals, ends)
}

/// Folds a value into an order-sensitive hash, so a loop that visits the right values in
/// the wrong order fails.
#[device]
pub fn mix(hash: u32, value: u32) -> u32 {
    hash.wrapping_mul(31).wrapping_add(value)
}

/// Iterator loops over slices and ranges, run by thread 0: a three-way `zip` writing
/// through `iter_mut()`, `enumerate()` before and after `.rev()`, `step_by` on a slice,
/// reversed ranges (signed, inclusive, stepped) and `(a..b).enumerate()`.
#[kernel]
pub fn iterator_loops(a: &[f32], b: &[f32], out: &mut [f32], hashes: &mut [u32]) {
    if global_index() == 0 {
        for ((o, x), y) in out.iter_mut().zip(a.iter()).zip(b) {
            *o = x * 2.0 + *y;
        }
        let mut h = 0u32;
        for (k, v) in a.iter().enumerate() {
            if *v > 0.0 {
                h = mix(h, k as u32);
            }
        }
        hashes[0] = h;
        h = 0;
        for (k, v) in b.iter().enumerate().rev() {
            h = mix(h, k as u32 + (*v as u32));
        }
        hashes[1] = h;
        h = 0;
        for (k, v) in a.iter().rev().enumerate() {
            h = mix(h, (k as u32 * 7).wrapping_add(*v as i32 as u32));
        }
        hashes[2] = h;
        h = 0;
        for v in b.iter().step_by(3) {
            h = mix(h, *v as u32);
        }
        hashes[3] = h;
        h = 0;
        for k in (-3i32..4).rev() {
            h = mix(h, k as u32);
        }
        for k in (2u32..=17).rev().step_by(4) {
            h = mix(h, k);
        }
        for k in (0..a.len()).rev() {
            h = mix(h, k as u32);
        }
        hashes[4] = h;
        h = 0;
        for (count, k) in (10u32..20).step_by(3).enumerate() {
            h = mix(h, count as u32 * 100 + k);
        }
        for (count, k) in (5u64..8).rev().enumerate() {
            h = mix(h, count as u32 * 100 + k as u32);
        }
        hashes[5] = h;
    }
}

pub fn iterator_loops_ref(a: &[f32], b: &[f32], out_len: usize) -> (Vec<f32>, Vec<u32>) {
    let mix = |hash: u32, value: u32| hash.wrapping_mul(31).wrapping_add(value);
    let mut out = vec![0.0f32; out_len];
    for ((o, x), y) in out.iter_mut().zip(a.iter()).zip(b) {
        *o = x * 2.0 + *y;
    }
    let mut hashes = vec![0u32; 6];
    let mut h = 0;
    for (k, v) in a.iter().enumerate() {
        if *v > 0.0 {
            h = mix(h, k as u32);
        }
    }
    hashes[0] = h;
    h = 0;
    for (k, v) in b.iter().enumerate().rev() {
        h = mix(h, k as u32 + (*v as u32));
    }
    hashes[1] = h;
    h = 0;
    for (k, v) in a.iter().rev().enumerate() {
        h = mix(h, (k as u32 * 7).wrapping_add(*v as i32 as u32));
    }
    hashes[2] = h;
    h = 0;
    for v in b.iter().step_by(3) {
        h = mix(h, *v as u32);
    }
    hashes[3] = h;
    h = 0;
    for k in (-3i32..4).rev() {
        h = mix(h, k as u32);
    }
    for k in (2u32..=17).rev().step_by(4) {
        h = mix(h, k);
    }
    for k in (0..a.len()).rev() {
        h = mix(h, k as u32);
    }
    hashes[4] = h;
    h = 0;
    for (count, k) in (10u32..20).step_by(3).enumerate() {
        h = mix(h, count as u32 * 100 + k);
    }
    for (count, k) in (5u64..8).rev().enumerate() {
        h = mix(h, count as u32 * 100 + k as u32);
    }
    hashes[5] = h;
    (out, hashes)
}

/// `x.get(i)` matched by `if let` (statement, value, `else if let`), `get_mut` written
/// through, `let … else`, `while let`, and a `loop` giving a value by `break value`. Runs
/// with more threads than elements, and `y` shorter than `x`, so `None` is taken too.
#[kernel]
pub fn option_forms(x: &[f32], y: &mut [f32], runs: &mut [u32], found: &mut [u32]) {
    let i = global_index();
    let right = if let Some(v) = x.get(i + 1) { *v } else { -1.0 };
    let mut tail = 0u32;
    if let Some(slot) = y.get_mut(i) {
        *slot = right;
    } else if let Some(&mine) = x.get(i) {
        tail = if mine < 0.0 { 2 } else { 1 };
    }
    let Some(&me) = x.get(i) else {
        return;
    };
    let mut j = i;
    let mut run = 0u32;
    while let Some(v) = x.get(j) {
        if *v < 0.0 {
            break;
        }
        run += 1;
        j += 1;
    }
    runs[i] = run;
    let mut k = i;
    let first_negative = loop {
        if k >= x.len() {
            break u32::MAX;
        }
        if x[k] < 0.0 {
            break k as u32;
        }
        k += 1;
    };
    found[i] = (if me < 0.0 {
        first_negative ^ 1
    } else {
        first_negative
    }) ^ (tail << 30);
}

pub fn option_forms_ref(x: &[f32], y_len: usize) -> (Vec<f32>, Vec<u32>, Vec<u32>) {
    let n = x.len();
    let mut y = vec![0.0f32; y_len];
    let (mut runs, mut found) = (vec![0u32; n], vec![0u32; n]);
    for i in 0..n.max(y_len) {
        let right = x.get(i + 1).copied().unwrap_or(-1.0);
        let mut tail = 0u32;
        if let Some(slot) = y.get_mut(i) {
            *slot = right;
        } else if let Some(&mine) = x.get(i) {
            tail = if mine < 0.0 { 2 } else { 1 };
        }
        let Some(&me) = x.get(i) else { continue };
        runs[i] = x[i..].iter().take_while(|v| **v >= 0.0).count() as u32;
        let first_negative = (i..n).find(|&k| x[k] < 0.0).map_or(u32::MAX, |k| k as u32);
        found[i] = (if me < 0.0 {
            first_negative ^ 1
        } else {
            first_negative
        }) ^ (tail << 30);
    }
    (y, runs, found)
}
