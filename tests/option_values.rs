//! `Option<T>` as a value in kernels, each use checked against rustc running the same
//! `#[device]` functions on the host (as `rust_fidelity.rs` does): `Some`, `None`, `?`,
//! `map`, `and_then`, `filter`, `or`, `or_else`, `unwrap_or`, `unwrap_or_else`,
//! `unwrap_or_default`, `map_or`, `is_some_and`, `is_some`, `is_none`, `unwrap`,
//! `expect`, `if let`, `match`, `let … else`, `while let`, `Option` locals, parameters
//! and results, and the iterator consumers that give an `Option`. On the CPU simulator
//! always, on a GPU when there is one.
// The forms are written the ways users write them, not always clippy's way.
#![allow(
    clippy::manual_map,
    clippy::unnecessary_literal_unwrap,
    clippy::double_ended_iterator_last
)]

mod common;

use cudajit::prelude::*;
use cudajit::Stream;

/// `x` halved when it is even.
#[device]
pub fn half(x: u32) -> Option<u32> {
    if x % 2 == 0 {
        Some(x / 2)
    } else {
        None
    }
}

/// `?` twice: a quarter of `x` when `x` is a multiple of 4.
#[device]
pub fn quarter(x: u32) -> Option<u32> {
    let h = half(x)?;
    let q = half(h)?;
    Some(q)
}

/// An early `return None` and an `Option` parameter.
#[device]
pub fn shifted(o: Option<u32>, by: u32) -> Option<u32> {
    if by > 3 {
        return None;
    }
    match o {
        Some(v) => Some(v + by),
        None => None,
    }
}

/// The index of the first element below `limit`, searched by hand.
#[device]
pub fn first_below(x: &[f32], limit: f32) -> Option<usize> {
    let mut k = 0;
    while k < x.len() {
        if x[k] < limit {
            return Some(k);
        }
        k += 1;
    }
    None
}

/// The methods of `Option` that give a value.
#[device]
pub fn methods(i: u32) -> u32 {
    let a = half(i).unwrap_or(100);
    let b = half(i).map(|v| v * 3).unwrap_or_else(|| i + 7);
    let c = quarter(i).and_then(|q| half(q + 1)).unwrap_or_default();
    let d = half(i).filter(|v| *v > 4).map_or(9, |v| v + 1);
    let e = half(i).or(half(i + 1)).unwrap_or(0);
    let f = quarter(i).or_else(|| Some(i * 2)).unwrap_or(1);
    let g = half(i).is_some() as u32 + 2 * quarter(i).is_none() as u32;
    let t = half(i).is_some_and(|v| v % 3 == 0) as u32;
    // A call's `Option` passed on is bound with its type first.
    let h: Option<u32> = half(i);
    let s = shifted(h, i % 5).unwrap_or(77) + shifted(None, 1).map_or(5, |v| v);
    a + 3 * b + 5 * c + 7 * d + 11 * e + 13 * f + 17 * g + 19 * t + 23 * s
}

/// `Option` locals, `if let`, `match`, `let … else`, `while let`.
#[device]
pub fn control(i: u32) -> u32 {
    let mut total = 0;
    let o = half(i);
    if let Some(v) = o {
        total += v;
    } else {
        total += 1000;
    }
    let m = match quarter(i) {
        Some(q) if q > 2 => q * 10,
        Some(_) => 5,
        None => 3,
    };
    let mut best: Option<u32> = None;
    for k in 0..i % 7 {
        let candidate = Some(k * k % 5);
        if best.is_none() || candidate.unwrap_or(0) > best.unwrap_or(0) {
            best = candidate;
        }
    }
    let Some(b) = best else {
        return total + m;
    };
    let mut n = i + 16;
    let mut steps = 0;
    while let Some(h) = half(n) {
        n = h;
        steps += 1;
    }
    total + m + b * 100 + steps * 1000 + n * 10000
}

/// Iterator consumers that give an `Option`, used as one.
#[device]
pub fn searches(x: &[f32], i: usize) -> f32 {
    let lo = i % 5;
    let min = x[lo..].iter().copied().reduce(f32::min);
    let pos = x.iter().position(|&v| v > 2.0 + lo as f32);
    let found = x.iter().copied().find(|v| *v < -9.0);
    let mut total = 0.0;
    if let Some(m) = min {
        total += m;
    }
    total += match pos {
        Some(p) => p as f32,
        None => -1.0,
    };
    total += found.map(|v| v * 2.0).unwrap_or(0.5);
    total += first_below(x, lo as f32 - 10.0).map_or(-3.0, |k| k as f32);
    let last_even = (0..i).filter(|k| k % 2 == 0).last();
    total + last_even.unwrap_or(99) as f32
}

/// `unwrap` and `expect` of values that are present, and `x.get(i)` as an `Option`.
#[device]
pub fn unwraps(x: &[f32], i: usize) -> f32 {
    let v = half(2 * i as u32 + 2).unwrap();
    let w = quarter(4 * i as u32).expect("a multiple of four");
    let g = x.get(i + 70).copied().unwrap_or(-1.5);
    v as f32 + w as f32 * 0.5 + g
}

#[kernel]
fn options(x: &[f32], out: &mut [f32]) {
    let i = global_index();
    if i >= x.len() {
        return;
    }
    let n = x.len();
    out[i] = methods(i as u32) as f32;
    out[n + i] = control(i as u32) as f32;
    out[2 * n + i] = searches(x, i);
    out[3 * n + i] = unwraps(x, i);
}

/// `unwrap` of `None` stops the kernel, as Rust panics.
#[kernel]
fn unwrap_none(x: &[f32], out: &mut [f32]) {
    let i = global_index();
    if i >= x.len() {
        return;
    }
    out[i] = half(x.len() as u32).unwrap() as f32;
}

fn inputs() -> Vec<f32> {
    (0..77)
        .map(|i| ((i * 37 % 77) as f32 - 38.0) * 0.3125)
        .collect()
}

fn check(stream: &Stream) {
    let x = inputs();
    let n = x.len();
    let dx = stream.clone_htod(&x).unwrap();
    let mut out = stream.alloc_zeros::<f32>(4 * n).unwrap();
    options::launch(stream, LaunchConfig::for_elements(n), &dx, &mut out).unwrap();
    let got = stream.clone_dtoh(&out).unwrap();
    let mut want = Vec::new();
    want.extend((0..n).map(|i| methods(i as u32) as f32));
    want.extend((0..n).map(|i| control(i as u32) as f32));
    want.extend((0..n).map(|i| searches(&x, i)));
    want.extend((0..n).map(|i| unwraps(&x, i)));
    for (k, (g, w)) in got.iter().zip(&want).enumerate() {
        assert_eq!(g.to_bits(), w.to_bits(), "out[{k}]: cudajit {g}, rustc {w}");
    }
}

#[test]
fn options_on_the_simulator() {
    check(&Stream::simulator());
}

#[test]
fn unwrap_of_none_stops_the_kernel_on_the_simulator() {
    let stream = Stream::simulator();
    let x = inputs();
    let dx = stream.clone_htod(&x).unwrap();
    let mut out = stream.alloc_zeros::<f32>(x.len()).unwrap();
    let result = unwrap_none::launch(&stream, LaunchConfig::for_elements(x.len()), &dx, &mut out)
        .and_then(|()| stream.synchronize());
    let error = result.expect_err("unwrap of None must stop the kernel");
    let text = format!("{error:?}");
    assert!(
        text.contains("called `Option::unwrap()` on a `None` value"),
        "{text}"
    );
}

#[test]
fn options_on_the_gpu() {
    let Some(context) = common::gpu_or_skip() else {
        return;
    };
    std::env::set_var("CUDAJIT_FMA", "0");
    check(&Stream::from_cuda(context.default_stream()));
}

/// An `Option` is a flag and a value in registers: the PTX of the kernel has no local
/// memory (and no call: the device functions inline).
#[test]
fn options_compile_without_local_memory() {
    let Some(ptx) = common::sm90_ptx_or_skip(options::KERNEL.captured()) else {
        return;
    };
    assert!(!ptx.contains(".local"), "local memory:\n{ptx}");
    assert!(!ptx.contains("call.uni"), "a call left:\n{ptx}");
}
