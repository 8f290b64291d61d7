//! Traits and closures as Rust programmers pass them on, checked against rustc: the
//! `#[device]` functions are ordinary Rust, so the host runs the very same functions as
//! the reference. On the CPU simulator always, on a GPU when there is one (built without
//! FMA contraction, so floats agree bit for bit).
//!
//! - closures passed on: a closure parameter given to another device function (`inner(f,
//!   x)`, `inner(&f, x)`, `F`, `&F` and `impl Fn` parameters), a closure that calls the
//!   closure its function was given, a closure local that calls another closure local;
//! - qualified calls of trait methods: `<S as Shape>::area(&s)`, `Shape::area(&c)`,
//!   `Circle::area(&c)`, `<Circle as Shape>::weighted(&c, k)`;
//! - a default method called on a struct that keeps it (`c.weighted(k)`), and a trait
//!   method named like an inherent method of the same struct.

// Closures are passed by reference on purpose (`apply(&scale, v)`): one of the forms tested.
#![allow(clippy::needless_borrows_for_generic_args)]

mod common;

use cudajit::prelude::*;
use cudajit::Stream;

#[derive(Clone, Copy, Debug, PartialEq, DeviceCopy)]
#[repr(C)]
pub struct Circle {
    pub r: f32,
}

#[derive(Clone, Copy, Debug, PartialEq, DeviceCopy)]
#[repr(C)]
pub struct Square {
    pub side: f32,
}

#[device]
pub trait Shape {
    fn area(&self) -> f32;
    /// A default method, kept by `Circle` and written by `Square`.
    fn weighted(&self, k: f32) -> f32 {
        self.area() * k + 1.0
    }
}

#[device]
impl Shape for Circle {
    fn area(&self) -> f32 {
        3.0 * self.r * self.r
    }
}

#[device]
impl Shape for Square {
    fn area(&self) -> f32 {
        self.side * self.side
    }
    fn weighted(&self, k: f32) -> f32 {
        self.area() - k
    }
}

/// An inherent method named like the trait's: `sq.area()` calls this one (Rust prefers
/// inherent methods), `Shape::area(&sq)` the trait's.
#[device]
impl Square {
    pub fn area(&self) -> f32 {
        self.side * 10.0
    }
}

// Closures passed on.

#[device]
pub fn apply<F: Fn(f32) -> f32>(f: F, x: f32) -> f32 {
    f(x)
}

#[device]
pub fn apply_ref<F: Fn(f32) -> f32>(f: &F, x: f32) -> f32 {
    f(x) + 1.0
}

#[device]
pub fn apply_impl(f: impl Fn(f32) -> f32, x: f32) -> f32 {
    f(f(x))
}

/// Passes its closure on, by value, by reference and to an `impl Fn` parameter.
#[device]
pub fn outer<F: Fn(f32) -> f32>(f: F, x: f32) -> f32 {
    apply(&f, x) * 2.0 + apply_ref(&f, x) + apply_impl(&f, x) - apply(f, x + 1.0)
}

/// Gives another device function a closure of its own that calls the closure it was given.
#[device]
pub fn around<F: Fn(f32) -> f32>(f: F, x: f32, bias: f32) -> f32 {
    apply(|v: f32| f(v) + bias, x) + apply(|v| f(f(v)), x)
}

/// Two closure parameters, passed on in swapped order, one of them twice.
#[device]
pub fn pair<F: Fn(f32) -> f32, G: Fn(f32) -> f32>(f: F, g: G, x: f32) -> f32 {
    pair_inner(&f, &f, x) + pair_inner(g, f, x)
}

#[device]
pub fn pair_inner<F: Fn(f32) -> f32, G: Fn(f32) -> f32>(f: F, g: G, x: f32) -> f32 {
    f(x) - g(x) * 0.5
}

// Traits called by qualified paths.

#[device]
pub fn qualified<S: Shape>(s: &S, k: f32) -> f32 {
    <S as Shape>::area(s) + <S as Shape>::weighted(s, k) * 0.5 + Shape::area(s)
}

/// A device function whose name starts with `unsafe`: the macro's alias of it must not trip
/// clippy's `unsafe_removed_from_name` in this crate (CI runs clippy on the tests).
#[device]
pub fn unsafe_free_half(x: f32) -> f32 {
    x * 0.5
}

#[kernel]
fn passed_on(x: &[f32], circles: &[Circle], squares: &[Square], out: &mut [f32], k: f32) {
    let i = global_index();
    if i >= x.len() {
        return;
    }
    let v = x[i];
    let scale = |s: f32| s * k + 0.25;
    let twice = |s: f32| scale(s) * 2.0;
    let c = circles[i];
    let sq = squares[i];
    out[16 * i] = outer(scale, v);
    out[16 * i + 1] = outer(|s: f32| s - k, v);
    out[16 * i + 2] = around(scale, v, 0.5);
    out[16 * i + 3] = pair(scale, |s: f32| s * s, v);
    out[16 * i + 4] = apply(twice, v);
    out[16 * i + 5] = apply(&scale, v);
    out[16 * i + 6] = c.weighted(k);
    out[16 * i + 7] = sq.area() + Shape::area(&sq) + Square::area(&sq);
    out[16 * i + 8] = qualified(&c, k) + qualified(&sq, k);
    out[16 * i + 9] = <Circle as Shape>::weighted(&c, k) + Circle::area(&c);
    out[16 * i + 10] = <Square as Shape>::area(&sq) + Shape::weighted(&sq, k);
    out[16 * i + 11] = unsafe_free_half(k);
    out[16 * i + 12] = 0.0;
    out[16 * i + 13] = 0.0;
    out[16 * i + 14] = 0.0;
    out[16 * i + 15] = 0.0;
}

fn reference(x: &[f32], circles: &[Circle], squares: &[Square], k: f32, i: usize) -> [f32; 16] {
    let v = x[i];
    let scale = |s: f32| s * k + 0.25;
    let twice = |s: f32| scale(s) * 2.0;
    let c = circles[i];
    let sq = squares[i];
    [
        outer(scale, v),
        outer(|s: f32| s - k, v),
        around(scale, v, 0.5),
        pair(scale, |s: f32| s * s, v),
        apply(twice, v),
        apply(&scale, v),
        c.weighted(k),
        sq.area() + Shape::area(&sq) + Square::area(&sq),
        qualified(&c, k) + qualified(&sq, k),
        <Circle as Shape>::weighted(&c, k) + Circle::area(&c),
        <Square as Shape>::area(&sq) + Shape::weighted(&sq, k),
        unsafe_free_half(k),
        0.0,
        0.0,
        0.0,
        0.0,
    ]
}

fn check(stream: &Stream) {
    let n = 11;
    let k = 1.5f32;
    let x: Vec<f32> = (0..n).map(|i| i as f32 * 0.75 - 3.0).collect();
    let circles: Vec<Circle> = (0..n)
        .map(|i| Circle {
            r: (i as f32 - 5.0) * 0.375,
        })
        .collect();
    let squares: Vec<Square> = (0..n)
        .map(|i| Square {
            side: 2.0 - i as f32 * 0.25,
        })
        .collect();
    let dx = stream.clone_htod(&x).unwrap();
    let dc = stream.clone_htod(&circles).unwrap();
    let ds = stream.clone_htod(&squares).unwrap();
    let mut out = stream.alloc_zeros::<f32>(16 * n).unwrap();
    passed_on::launch(
        stream,
        LaunchConfig::for_elements(n),
        &dx,
        &dc,
        &ds,
        &mut out,
        k,
    )
    .unwrap();
    let got = stream.clone_dtoh(&out).unwrap();
    let want: Vec<f32> = (0..n)
        .flat_map(|i| reference(&x, &circles, &squares, k, i))
        .collect();
    for (j, (g, w)) in got.iter().zip(&want).enumerate() {
        assert_eq!(
            g.to_bits(),
            w.to_bits(),
            "out[{j}] (thread {}, row {}): cudajit {g}, rustc {w}",
            j / 16,
            j % 16
        );
    }
}

#[test]
fn traits_and_closures_passed_on_on_the_simulator() {
    check(&Stream::simulator());
}

#[test]
fn traits_and_closures_passed_on_on_the_gpu() {
    let Some(context) = common::gpu_or_skip() else {
        return;
    };
    // Bit for bit: the GPU must round each operation as Rust does.
    std::env::set_var("CUDAJIT_FMA", "0");
    check(&Stream::from_cuda(context.default_stream()));
}
