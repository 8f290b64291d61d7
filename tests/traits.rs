//! User traits with static dispatch, checked against rustc: the `#[device]` functions are
//! ordinary Rust, so the host runs the very same functions as the reference. On the CPU
//! simulator always, on a GPU when there is one (built without FMA contraction, so floats
//! agree bit for bit).
//!
//! - a `#[device] trait` with required and default methods and an associated constant,
//!   implemented by two structs, both used in one kernel;
//! - generic device functions bounded by it (`S: Shape`, by value, by reference and in
//!   slices), calling methods through the bound and reading `S::SIDES`; `Circle::SIDES`
//!   named through the struct;
//! - a second inherent `#[device]` impl block of a struct.

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
pub struct Rect {
    pub w: f32,
    pub h: f32,
}

#[device]
pub trait Shape {
    const SIDES: u32;
    fn area(&self) -> f32;
    fn scaled(&self, k: f32) -> Self;
    /// A default method: compiled for each implementor that does not write its own.
    fn weighted(&self, k: f32) -> f32 {
        self.area() * k + 1.0
    }
}

#[device]
impl Shape for Circle {
    const SIDES: u32 = 0;
    fn area(&self) -> f32 {
        3.0 * self.r * self.r
    }
    fn scaled(&self, k: f32) -> Circle {
        Circle { r: self.r * k }
    }
}

#[device]
impl Shape for Rect {
    const SIDES: u32 = 4;
    fn area(&self) -> f32 {
        self.w * self.h
    }
    fn scaled(&self, k: f32) -> Rect {
        Rect {
            w: self.w * k,
            h: self.h * k,
        }
    }
    fn weighted(&self, k: f32) -> f32 {
        self.area() - k
    }
}

#[device]
impl Circle {
    pub fn new(r: f32) -> Circle {
        Circle { r }
    }
}

/// A second inherent block of the same struct.
#[device]
impl Circle {
    pub fn diameter(&self) -> f32 {
        2.0 * self.r
    }
}

#[device]
pub fn total<S: Shape>(shapes: &[S]) -> f32 {
    let mut sum = 0.0f32;
    for i in 0..shapes.len() {
        sum += shapes[i].area();
    }
    sum
}

#[device]
pub fn twice<S: Shape + Copy>(s: S, k: f32) -> f32 {
    let t = s.scaled(k);
    t.area() + s.weighted(k)
}

#[device]
pub fn by_ref<S: Shape>(s: &S) -> f32 {
    s.area() * 0.5 + S::SIDES as f32 + <S as Shape>::SIDES as f32 * 10.0
}

#[kernel]
fn shapes(circles: &[Circle], rects: &[Rect], out: &mut [f32]) {
    let i = global_index();
    if i >= circles.len() {
        return;
    }
    let c = circles[i];
    let r = rects[i];
    out[8 * i] = c.area() + r.area();
    out[8 * i + 1] = total(circles) + total(rects);
    out[8 * i + 2] = twice(c, 1.5);
    out[8 * i + 3] = twice(r, 0.5);
    out[8 * i + 4] = by_ref(&c) + by_ref(&r);
    out[8 * i + 5] = r.weighted(2.0);
    out[8 * i + 6] = Circle::new(c.r).diameter();
    // The associated constant named through the struct, as a value and in a sum.
    out[8 * i + 7] = Rect::SIDES as f32 + Circle::SIDES as f32 * 3.0 + c.r;
}

fn reference(circles: &[Circle], rects: &[Rect], i: usize) -> [f32; 8] {
    let c = circles[i];
    let r = rects[i];
    [
        c.area() + r.area(),
        total(circles) + total(rects),
        twice(c, 1.5),
        twice(r, 0.5),
        by_ref(&c) + by_ref(&r),
        r.weighted(2.0),
        Circle::new(c.r).diameter(),
        Rect::SIDES as f32 + Circle::SIDES as f32 * 3.0 + c.r,
    ]
}

fn check(stream: &Stream) {
    let n = 13;
    let circles: Vec<Circle> = (0..n)
        .map(|i| Circle {
            r: (i as f32 - 6.0) * 0.375,
        })
        .collect();
    let rects: Vec<Rect> = (0..n)
        .map(|i| Rect {
            w: i as f32 * 0.5,
            h: 2.0 - i as f32 * 0.25,
        })
        .collect();
    let dc = stream.clone_htod(&circles).unwrap();
    let dr = stream.clone_htod(&rects).unwrap();
    let mut out = stream.alloc_zeros::<f32>(8 * n).unwrap();
    shapes::launch(stream, LaunchConfig::for_elements(n), &dc, &dr, &mut out).unwrap();
    let got = stream.clone_dtoh(&out).unwrap();
    let want: Vec<f32> = (0..n)
        .flat_map(|i| reference(&circles, &rects, i))
        .collect();
    for (k, (g, w)) in got.iter().zip(&want).enumerate() {
        assert_eq!(g.to_bits(), w.to_bits(), "out[{k}]: cudajit {g}, rustc {w}");
    }
}

#[test]
fn traits_on_the_simulator() {
    check(&Stream::simulator());
}

#[test]
fn traits_on_the_gpu() {
    let Some(context) = common::gpu_or_skip() else {
        return;
    };
    // Bit for bit: the GPU must round each operation as Rust does.
    std::env::set_var("CUDAJIT_FMA", "0");
    check(&Stream::from_cuda(context.default_stream()));
}
