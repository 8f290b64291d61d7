//! Ordinary Rust that kernels once refused, each construct checked against rustc: the
//! per-thread work is a `#[device]` function, which is ordinary Rust, so the host runs the
//! very same function as the reference. On the CPU simulator always, on a GPU when there is
//! one (built without FMA contraction, so floats agree bit for bit).
//!
//! - references to locals passed to methods (`a.dot(&b)`) and methods called by path
//!   (`Vec3::dot(&a, &b)`, `f32::max(a, b)`);
//! - constant tables (`const LUT: [u32; 8]`, `static` tables, signed, float and bool
//!   elements), in kernels and device functions;
//! - arrays as values: `let b = a;`, `c = b;`, copies of parameters and fields, passed on
//!   and returned, a call's array indexed (`prefix4(a)[3]`);
//! - a `loop` with `break value` ending a function's body or a block used as a value;
//! - iterator chains over ranges, slices, sub-slice expressions and arrays: `map`,
//!   `filter`, `enumerate`, `zip`, `rev`, `step_by`, `take`, `skip`, `take_while`,
//!   `skip_while`, `chain`, `copied`, and `sum`, `product`, `count`, `fold` (with a
//!   closure or `f32::max`), `min`/`max`(`_by_key`), `reduce`, `position`, `find`, `last`,
//!   `any`, `all`, and `for` loops over such chains.
// The chains are written the ways users write them, not always clippy's way.
#![allow(clippy::manual_contains, clippy::map_clone)]

mod common;

use cudajit::prelude::*;
use cudajit::Stream;

#[derive(Clone, Copy, Debug, PartialEq, DeviceCopy)]
#[repr(C)]
pub struct Vec3 {
    pub x: f32,
    pub y: f32,
    pub z: f32,
}

#[device]
impl Vec3 {
    pub fn new(x: f32, y: f32, z: f32) -> Vec3 {
        Vec3 { x, y, z }
    }

    pub fn dot(&self, other: &Vec3) -> f32 {
        self.x * other.x + self.y * other.y + self.z * other.z
    }

    /// `self` scaled so that `other`'s projection on it is added: two references.
    pub fn plus_projection(&self, other: &Vec3, weight: f32) -> Vec3 {
        let d = self.dot(other) * weight;
        Vec3::new(self.x + d, self.y + d, self.z + d)
    }
}

#[derive(Clone, Copy, Debug, PartialEq, DeviceCopy)]
#[repr(C)]
pub struct Window {
    pub taps: [f32; 4],
    pub gain: f32,
}

const LUT: [u32; 8] = [3, 1, 4, 1, 5, 9, 2, 6];
const SIGNED: [i16; 5] = [i16::MIN, -7, 0, 7, i16::MAX];
static WEIGHTS: [f32; 3] = [0.25, 0.5, 0.25];
const MASKS: [bool; 4] = [true, false, false, true];
const STEP: f64 = 0.125;

/// References and path calls of methods.
#[device]
pub fn references(v: f32, w: f32) -> f32 {
    let a = Vec3::new(v, 1.0, -2.0);
    let b = Vec3::new(0.5, w, v);
    let c = a.plus_projection(&b, 0.25);
    a.dot(&b) + Vec3::dot(&c, &a) + f32::max(v, w) + f32::min(c.x, c.z)
}

/// Constant tables, indexed by constants and at run time.
#[device]
pub fn tables(i: usize, v: f32) -> f32 {
    let mut acc = LUT[i % 8] as f32 * v + WEIGHTS[i % 3];
    acc += SIGNED[i % 5] as f32 + SIGNED[4] as f32 * STEP as f32;
    if MASKS[i % 4] {
        acc = -acc;
    }
    for k in 0..LUT.len() {
        acc += LUT[k] as f32 * 0.5;
    }
    acc
}

/// Prefix sums of a copy: the argument stays as it was.
#[device]
pub fn prefix4(v: [f32; 4]) -> [f32; 4] {
    let mut out = v;
    for k in 1..4 {
        out[k] += out[k - 1];
    }
    out
}

/// Arrays as values: copied by `let` and by assignment, from locals, parameters and
/// fields, passed on and returned.
#[device]
pub fn arrays(v: f32, window: Window) -> f32 {
    let a = [v, 1.0, 2.0, 3.0];
    let b = prefix4(a);
    let mut c = b;
    c[0] = 10.0;
    let mut d = [0.0f32; 4];
    let before = d[1] + d[0];
    d = c;
    c = a;
    let taps = window.taps;
    let mut weighted = 0.0f32;
    for k in 0..4 {
        weighted += taps[k] * d[k] * window.gain;
    }
    b[3] + c[0] + a[0] + d[0] + weighted + prefix4(taps)[3] + before
}

/// The index of the first negative element from `start`, or `x.len()`: a `loop` that ends
/// the function's body is its value.
#[device]
pub fn first_negative(x: &[f32], start: usize) -> usize {
    let mut j = start;
    loop {
        if j >= x.len() || x[j] < 0.0 {
            break j;
        }
        j += 1;
    }
}

/// A block ending in a `loop` with `break` values, used as a value.
#[device]
pub fn loop_blocks(v: f32) -> f32 {
    let halvings = {
        let mut n = 0u32;
        let mut left = v.abs();
        loop {
            if left < 1.0 || n == 40 {
                break n;
            }
            left *= 0.5;
            n += 1;
        }
    };
    halvings as f32
        + if v > 0.0 {
            {
                let mut k = 0;
                loop {
                    k += 1;
                    if k * k > 10 {
                        break k as f32;
                    }
                }
            }
        } else {
            -1.0
        }
}

#[device]
pub fn square(v: f32) -> f32 {
    v * v
}

/// Iterator chains, folded to one `f32` (and a `u32` of the integer ones).
#[device]
pub fn chains(x: &[f32], i: usize) -> f32 {
    let lo = i % 4;
    let s1 = x.iter().map(|v| v * 2.0).sum::<f32>();
    let s2: f32 = x[lo..lo + 3]
        .iter()
        .map(|&v| square(v))
        .filter(|w| *w > 1.0)
        .sum();
    let m = x.iter().fold(f32::NEG_INFINITY, |a, &b| a.max(b));
    let m2 = x.iter().copied().fold(f32::INFINITY, f32::min);
    let p = x.iter().position(|&v| v > 2.5).unwrap_or(99);
    let any = x.iter().any(|&v| v == 3.0);
    let all = x.iter().all(|v| *v > -100.0);
    let e: f32 = x.iter().enumerate().map(|(k, v)| k as f32 * v).sum();
    let z: f32 = x.iter().zip(x.iter().skip(1)).map(|(a, b)| a * b).sum();
    let t = x
        .iter()
        .take(2)
        .chain(x.iter().skip(3))
        .map(|v| *v)
        .sum::<f32>();
    let r = x
        .iter()
        .rev()
        .step_by(2)
        .take_while(|v| **v < 30.0)
        .fold(0.0, |a, v| a * 0.5 + v);
    let w = x
        .iter()
        .skip_while(|v| **v < 0.0)
        .copied()
        .reduce(|a, b| a - b)
        .unwrap_or(-1.0);
    let f = x
        .iter()
        .copied()
        .find(|v| *v > 1.0 && *v < 2.0)
        .unwrap_or(7.0);
    let l = x[..lo + 1].iter().copied().last().unwrap_or(0.0);
    let prod: f32 = x.iter().take(3).map(|v| 1.0 + v * 0.01).product();
    let mut acc = 0.0;
    for (k, v) in x.iter().map(|v| v + 1.0).enumerate().skip(1) {
        acc += k as f32 * v;
    }
    let mut alt = 0.0;
    for v in x.iter().filter(|v| **v > 0.0).take(5) {
        alt -= *v;
    }
    s1 + s2
        + m
        + m2
        + p as f32
        + e
        + z
        + t
        + r
        + w
        + f
        + l
        + prod
        + acc
        + alt
        + if any { 100.0 } else { 0.0 }
        + if all { 1000.0 } else { 0.0 }
}

/// Rust's float `sum()` starts at -0.0: an empty sum is -0.0, and so is a sum of -0.0s.
#[device]
pub fn signed_zero_sums(x: &[f32], i: usize) -> f32 {
    let lo = i % 4;
    let empty: f32 = x[lo..lo].iter().sum();
    let zeros: f32 = x[..2].iter().map(|v| -0.0 * v.abs()).sum();
    empty + zeros
}

/// Integer chains: counts, extremes by value and by key, ranges.
#[device]
pub fn counts(i: usize, x: &[f32]) -> u32 {
    let c = (0..i).filter(|k| k % 3 == 0).count() as u32;
    let mx = (1..=5u32).map(|k| (k * 7) % 5).max().unwrap_or(0);
    let mn = (0..i as u32 + 3).map(|k| k ^ 5).min().unwrap();
    let key = (0..x.len())
        .max_by_key(|k| (x[*k] * 4.0) as i32)
        .unwrap_or(0) as u32;
    let low = (0..x.len())
        .min_by_key(|&k| (x[k] * 4.0) as i32)
        .unwrap_or(0) as u32;
    let evens: u32 = (0..20u32).step_by(2).skip(i % 3).sum();
    c + mx + mn * 10 + key * 100 + low * 1000 + evens * 10000
}

#[kernel]
fn fidelity(x: &[f32], window: Window, out: &mut [f32]) {
    let i = global_index();
    if i >= x.len() {
        return;
    }
    let v = x[i];
    out[3 * i] = references(v, x[(i + 1) % x.len()]);
    out[3 * i + 1] = tables(i, v);
    out[3 * i + 2] = arrays(v, window);
    out[3 * x.len() + i] = first_negative(x, i) as f32 + loop_blocks(v);
    out[4 * x.len() + i] = chains(x, i);
    out[5 * x.len() + i] = counts(i, x) as f32;
    out[6 * x.len() + i] = signed_zero_sums(x, i);
}

fn check(stream: &Stream) {
    let x: Vec<f32> = (0..77)
        .map(|i| ((i * 37 % 77) as f32 - 38.0) * 0.625)
        .collect();
    let window = Window {
        taps: [0.5, -1.0, 2.0, 0.25],
        gain: 1.5,
    };
    let dx = stream.clone_htod(&x).unwrap();
    let mut out = stream.alloc_zeros::<f32>(7 * x.len()).unwrap();
    fidelity::launch(
        stream,
        LaunchConfig::for_elements(x.len()),
        &dx,
        window,
        &mut out,
    )
    .unwrap();
    let got = stream.clone_dtoh(&out).unwrap();
    let mut want = Vec::new();
    for (i, &v) in x.iter().enumerate() {
        want.push(references(v, x[(i + 1) % x.len()]));
        want.push(tables(i, v));
        want.push(arrays(v, window));
    }
    for (i, &v) in x.iter().enumerate() {
        want.push(first_negative(&x, i) as f32 + loop_blocks(v));
    }
    want.extend((0..x.len()).map(|i| chains(&x, i)));
    want.extend((0..x.len()).map(|i| counts(i, &x) as f32));
    want.extend((0..x.len()).map(|i| signed_zero_sums(&x, i)));
    assert!(signed_zero_sums(&x, 0).is_sign_negative());
    for (k, (g, w)) in got.iter().zip(&want).enumerate() {
        assert_eq!(g.to_bits(), w.to_bits(), "out[{k}]: cudajit {g}, rustc {w}");
    }
}

#[test]
fn ordinary_rust_on_the_simulator() {
    check(&Stream::simulator());
}

#[test]
fn ordinary_rust_on_the_gpu() {
    let Some(context) = common::gpu_or_skip() else {
        return;
    };
    // Bit for bit: the GPU must round each operation as Rust does.
    std::env::set_var("CUDAJIT_FMA", "0");
    check(&Stream::from_cuda(context.default_stream()));
}
