//! `&f32` and `&mut f32` parameters of `#[device]` functions: the caller's local, slice
//! element or struct field read and written in place, passed on, in loops and methods.
//! Checked against rustc running the same functions on the host; on the CPU simulator
//! always, on a GPU when there is one, and compiled to PTX without local memory.

// The swap is written as users write it by hand (kernels have no `core::mem::swap`).
#![allow(clippy::manual_swap)]

mod common;

use cudajit::prelude::*;
use cudajit::Stream;

#[device]
pub fn bump(acc: &mut f32, v: f32) {
    *acc += v;
}

#[device]
pub fn bump_twice(acc: &mut f32, v: f32) {
    bump(acc, v);
    bump(acc, v * 2.0);
    *acc = acc.max(-50.0);
}

#[device]
pub fn swap(a: &mut f32, b: &mut f32) {
    let t = *a;
    *a = *b;
    *b = t;
}

#[device]
pub fn clamp_in_place(v: &mut i32, lo: i32, hi: i32) -> bool {
    if *v < lo {
        *v = lo;
        true
    } else if *v > hi {
        *v = hi;
        true
    } else {
        false
    }
}

/// A reference to a generic scalar, instantiated for `f32` and `f64`.
#[device]
pub fn scale<T: Float>(v: &mut T, by: T) {
    *v *= by;
}

#[device]
pub fn twice(v: &f32) -> f32 {
    *v * 2.0
}

#[derive(Clone, Copy, Debug, PartialEq, DeviceCopy)]
#[repr(C)]
pub struct Span2 {
    pub lo: f32,
    pub hi: f32,
}

#[device]
impl Span2 {
    /// Widens `v` to the span's nearer end when it lies outside.
    pub fn pull(&self, v: &mut f32) {
        if *v < self.lo {
            *v = self.lo;
        }
        if *v > self.hi {
            *v = self.hi;
        }
    }
}

#[device]
pub fn program(x: &[f32], i: usize) -> f32 {
    let mut acc = 0.0f32;
    for k in 0..x.len() {
        if k % 3 == i % 3 {
            bump(&mut acc, x[k]);
        }
    }
    let mut a = x[i];
    let mut b = x[(i + 1) % x.len()];
    if a > b {
        swap(&mut a, &mut b);
    }
    bump_twice(&mut a, 0.5);
    let mut n = (x[i] * 4.0) as i32;
    let clamped = clamp_in_place(&mut n, -3, 5);
    let mut s = Span2 { lo: -1.0, hi: 1.0 };
    bump(&mut s.hi, 0.25);
    let mut w = x[i];
    s.pull(&mut w);
    scale(&mut w, 1.5);
    let mut wide = x[i] as f64;
    scale(&mut wide, 0.25);
    acc + a * 3.0
        + b * 5.0
        + n as f32 * 7.0
        + clamped as u32 as f32
        + w * 11.0
        + twice(&x[i])
        + twice(&s.hi)
}

#[kernel]
fn references(x: &[f32], y: &mut [f32], out: &mut [f32]) {
    let i = global_index();
    if i >= x.len() {
        return;
    }
    out[i] = program(x, i);
    // A slice element of global memory, written in place.
    bump_twice(&mut y[i], x[i]);
}

fn inputs() -> Vec<f32> {
    (0..41)
        .map(|i| ((i * 17 % 41) as f32 - 20.0) * 0.25)
        .collect()
}

fn check(stream: &Stream) {
    let x = inputs();
    let n = x.len();
    let y0: Vec<f32> = (0..n).map(|i| i as f32 * 0.5 - 3.0).collect();
    let dx = stream.clone_htod(&x).unwrap();
    let mut dy = stream.clone_htod(&y0).unwrap();
    let mut out = stream.alloc_zeros::<f32>(n).unwrap();
    references::launch(
        stream,
        LaunchConfig::for_elements(n),
        &dx,
        &mut dy,
        &mut out,
    )
    .unwrap();
    let got = stream.clone_dtoh(&out).unwrap();
    let got_y = stream.clone_dtoh(&dy).unwrap();
    for i in 0..n {
        let want = program(&x, i);
        assert_eq!(
            got[i].to_bits(),
            want.to_bits(),
            "out[{i}]: cudajit {}, rustc {want}",
            got[i]
        );
        let mut y = y0[i];
        bump_twice(&mut y, x[i]);
        assert_eq!(
            got_y[i].to_bits(),
            y.to_bits(),
            "y[{i}]: cudajit {}, rustc {y}",
            got_y[i]
        );
    }
}

#[test]
fn scalar_references_on_the_simulator() {
    check(&Stream::simulator());
}

#[test]
fn scalar_references_on_the_gpu() {
    common::on_gpu_without_fma(check);
}

/// Inlined, a reference to a local is the local's register: no local memory, no call.
#[test]
fn scalar_references_compile_without_local_memory() {
    common::assert_inlined_without_local_memory(references::KERNEL.captured());
}
