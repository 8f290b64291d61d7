//! `&dyn Trait` where the concrete type is known at the call, and associated types in
//! device signatures, checked against rustc: the `#[device]` functions are ordinary Rust,
//! so the host runs the very same functions (with real trait objects there) as the
//! reference. On the CPU simulator always, on a GPU when there is one (built without FMA
//! contraction, so floats agree bit for bit).
//!
//! - `s: &dyn Shape` parameters (one instance per struct a call passes), two of them with
//!   different structs, `&mut dyn Shape` written through, a `&dyn` passed on to another
//!   function taking `&dyn` and to a generic `S: Shape`, default methods through it;
//! - `let s: &dyn Shape = &c;` locals: methods, passed on, path calls (`Shape::area(s)`),
//!   shadowed by a value of another type;
//! - `impl Shape` in argument position, by value and by reference; methods taking
//!   `&dyn Shape` and `impl Shape`;
//! - associated types (scalars and a struct): `type Out` given by each impl, `S::Out` and
//!   `<S as Measure>::Out` in a generic function's signature and body, `Self::Out` in an
//!   impl and in a default method.

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
    fn area(&self) -> f32;
    fn grow(&mut self, k: f32);
    /// A default method, kept by `Circle`, written by `Rect`.
    fn weighted(&self, k: f32) -> f32 {
        self.area() * k + 1.0
    }
}

#[device]
impl Shape for Circle {
    fn area(&self) -> f32 {
        3.0 * self.r * self.r
    }
    fn grow(&mut self, k: f32) {
        self.r += k;
    }
}

#[device]
impl Shape for Rect {
    fn area(&self) -> f32 {
        self.w * self.h
    }
    fn grow(&mut self, k: f32) {
        self.w += k;
        self.h -= k;
    }
    fn weighted(&self, k: f32) -> f32 {
        self.area() - k
    }
}

#[device]
pub fn area_of(s: &dyn Shape) -> f32 {
    s.area() + s.weighted(0.5)
}

#[device]
pub fn generic_area<S: Shape + ?Sized>(s: &S) -> f32 {
    s.area() * 2.0
}

/// A `&dyn` passed on, to a `&dyn` parameter and to a generic one.
#[device]
pub fn passed_on(s: &dyn Shape, k: f32) -> f32 {
    area_of(s) * k + generic_area(s) + Shape::area(s)
}

/// Two trait objects, which one call may give different structs.
#[device]
pub fn larger(a: &dyn Shape, b: &dyn Shape) -> f32 {
    let (x, y) = (a.area(), b.area());
    if x > y {
        x - y
    } else {
        y - x
    }
}

/// `impl Trait` in argument position, by value and by reference.
#[device]
pub fn impl_area(s: impl Shape + Copy, t: &impl Shape) -> f32 {
    let mut u = s;
    u.grow(0.5);
    u.area() - t.weighted(1.5)
}

/// `impl Float`: a scalar type parameter, as `T: Float` is.
#[device]
pub fn squares_past(x: impl Float) -> bool {
    x * x > x
}

#[device]
pub fn grow_twice(s: &mut dyn Shape, k: f32) {
    s.grow(k);
    s.grow(k * 0.5);
}

/// A method taking a trait object, and one taking `impl Trait`.
#[device]
impl Circle {
    pub fn covers(&self, other: &dyn Shape) -> f32 {
        self.area() - other.area()
    }
    pub fn plus(&self, other: impl Shape) -> f32 {
        self.area() + other.area()
    }
}

/// A trait with an associated type, which each impl gives.
#[device]
pub trait Measure {
    type Out: Copy + core::ops::Add<Output = Self::Out>;
    fn measure(&self) -> Self::Out;
    /// A default method naming `Self::Out`, compiled for each impl's type.
    fn measure_plus(&self, extra: Self::Out) -> Self::Out {
        self.measure() + extra
    }
}

#[device]
impl Measure for Circle {
    type Out = f32;
    fn measure(&self) -> Self::Out {
        self.r * 2.0
    }
}

#[device]
impl Measure for Rect {
    type Out = u32;
    fn measure(&self) -> u32 {
        (self.w * 4.0) as u32 + 1
    }
}

#[device]
pub fn measured_twice<S: Measure>(s: &S) -> S::Out {
    let m: S::Out = s.measure();
    m + s.measure()
}

#[device]
pub fn measured_plus<S: Measure + Copy>(s: S, extra: <S as Measure>::Out) -> <S as Measure>::Out {
    s.measure_plus(extra) + measured_twice(&s)
}

#[kernel]
fn measures(circles: &[Circle], rects: &[Rect], lengths: &mut [f32], counts: &mut [u32]) {
    let i = global_index();
    if i >= circles.len() {
        return;
    }
    let c = circles[i];
    let r = rects[i];
    lengths[2 * i] = measured_twice(&c) + c.measure_plus(0.25);
    lengths[2 * i + 1] = measured_plus(c, 1.5);
    counts[2 * i] = measured_twice(&r) + r.measure_plus(2);
    counts[2 * i + 1] = measured_plus(r, 7);
}

/// An associated type that is a struct.
#[device]
pub trait Labelled {
    type Label;
    fn label(&self) -> Self::Label;
}

#[device]
impl Labelled for Circle {
    type Label = Rect;
    fn label(&self) -> Rect {
        Rect {
            w: self.r,
            h: self.r * 0.5,
        }
    }
}

#[device]
pub fn label_of<S: Labelled>(s: &S) -> S::Label {
    let label: S::Label = s.label();
    label
}

#[kernel]
fn struct_labels(circles: &[Circle], out: &mut [f32]) {
    let i = global_index();
    if i < circles.len() {
        let label = label_of(&circles[i]);
        out[i] = label.w + label.area();
    }
}

#[kernel]
fn dyn_shapes(circles: &[Circle], rects: &[Rect], out: &mut [f32]) {
    let i = global_index();
    if i >= circles.len() {
        return;
    }
    let c = circles[i];
    let r = rects[i];
    out[8 * i] = area_of(&c) + area_of(&r);
    out[8 * i + 1] = passed_on(&c, 1.5) - passed_on(&r, 0.25);
    out[8 * i + 2] = larger(&c, &r) + larger(&r, &circles[0]);
    let mut g = c;
    grow_twice(&mut g, 0.75);
    let mut h = r;
    grow_twice(&mut h, 0.5);
    out[8 * i + 3] = g.r + h.w * h.h;
    let s: &dyn Shape = &c;
    let t: &dyn Shape = &rects[i];
    out[8 * i + 4] = s.area() + t.weighted(2.0) + Shape::area(t);
    out[8 * i + 5] = area_of(s) + larger(s, t) + generic_area(t);
    let u: &dyn Shape = s;
    let s = 2.0f32;
    out[8 * i + 6] =
        u.area() * s + squares_past(c.r) as u32 as f32 + squares_past(r.w as f64) as u32 as f32;
    out[8 * i + 7] = impl_area(c, &r) + impl_area(r, &c) + c.covers(&r) + c.covers(u) + c.plus(r);
}

fn reference(circles: &[Circle], rects: &[Rect], i: usize) -> [f32; 8] {
    let c = circles[i];
    let r = rects[i];
    let mut g = c;
    grow_twice(&mut g, 0.75);
    let mut h = r;
    grow_twice(&mut h, 0.5);
    let s: &dyn Shape = &c;
    let t: &dyn Shape = &rects[i];
    let u: &dyn Shape = s;
    [
        area_of(&c) + area_of(&r),
        passed_on(&c, 1.5) - passed_on(&r, 0.25),
        larger(&c, &r) + larger(&r, &circles[0]),
        g.r + h.w * h.h,
        s.area() + t.weighted(2.0) + Shape::area(t),
        area_of(s) + larger(s, t) + generic_area(t),
        u.area() * 2.0 + squares_past(c.r) as u32 as f32 + squares_past(r.w as f64) as u32 as f32,
        impl_area(c, &r) + impl_area(r, &c) + c.covers(&r) + c.covers(u) + c.plus(r),
    ]
}

fn inputs(n: usize) -> (Vec<Circle>, Vec<Rect>) {
    let circles = (0..n)
        .map(|i| Circle {
            r: (i as f32 - 6.0) * 0.375,
        })
        .collect();
    let rects = (0..n)
        .map(|i| Rect {
            w: i as f32 * 0.5,
            h: 2.0 - i as f32 * 0.25,
        })
        .collect();
    (circles, rects)
}

fn check_dyn(stream: &Stream) {
    let n = 13;
    let (circles, rects) = inputs(n);
    let dc = stream.clone_htod(&circles).unwrap();
    let dr = stream.clone_htod(&rects).unwrap();
    let mut out = stream.alloc_zeros::<f32>(8 * n).unwrap();
    dyn_shapes::launch(stream, LaunchConfig::for_elements(n), &dc, &dr, &mut out).unwrap();
    let got = stream.clone_dtoh(&out).unwrap();
    let want: Vec<f32> = (0..n)
        .flat_map(|i| reference(&circles, &rects, i))
        .collect();
    for (k, (g, w)) in got.iter().zip(&want).enumerate() {
        assert_eq!(g.to_bits(), w.to_bits(), "out[{k}]: cudajit {g}, rustc {w}");
    }
}

fn check_measures(stream: &Stream) {
    let n = 13;
    let (circles, rects) = inputs(n);
    let dc = stream.clone_htod(&circles).unwrap();
    let dr = stream.clone_htod(&rects).unwrap();
    let mut lengths = stream.alloc_zeros::<f32>(2 * n).unwrap();
    let mut counts = stream.alloc_zeros::<u32>(2 * n).unwrap();
    let config = LaunchConfig::for_elements(n);
    measures::launch(stream, config, &dc, &dr, &mut lengths, &mut counts).unwrap();
    let got_lengths = stream.clone_dtoh(&lengths).unwrap();
    let got_counts = stream.clone_dtoh(&counts).unwrap();
    for i in 0..n {
        let (c, r) = (circles[i], rects[i]);
        let want = [
            measured_twice(&c) + c.measure_plus(0.25),
            measured_plus(c, 1.5),
        ];
        for k in 0..2 {
            let got = got_lengths[2 * i + k];
            assert_eq!(
                got.to_bits(),
                want[k].to_bits(),
                "lengths[{}]: cudajit {got}, rustc {}",
                2 * i + k,
                want[k]
            );
        }
        let want = [measured_twice(&r) + r.measure_plus(2), measured_plus(r, 7)];
        assert_eq!(got_counts[2 * i..2 * i + 2], want, "counts of thread {i}");
    }
}

/// `check` on the GPU when there is one, bit for bit: built without FMA contraction, so
/// it rounds each operation as Rust does.
fn on_the_gpu(check: fn(&Stream)) {
    let Some(context) = common::gpu_or_skip() else {
        return;
    };
    std::env::set_var("CUDAJIT_FMA", "0");
    check(&Stream::from_cuda(context.default_stream()));
}

#[test]
fn dyn_traits_on_the_simulator() {
    check_dyn(&Stream::simulator());
}

#[test]
fn associated_types_on_the_simulator() {
    check_measures(&Stream::simulator());
}

#[test]
fn associated_types_on_the_gpu() {
    on_the_gpu(check_measures);
}

#[test]
fn dyn_traits_on_the_gpu() {
    on_the_gpu(check_dyn);
}

fn check_labels(stream: &Stream) {
    let (circles, _) = inputs(13);
    let dc = stream.clone_htod(&circles).unwrap();
    let mut out = stream.alloc_zeros::<f32>(circles.len()).unwrap();
    struct_labels::launch(
        stream,
        LaunchConfig::for_elements(circles.len()),
        &dc,
        &mut out,
    )
    .unwrap();
    let got = stream.clone_dtoh(&out).unwrap();
    for (i, c) in circles.iter().enumerate() {
        let label = label_of(c);
        let want = label.w + label.area();
        assert_eq!(
            got[i].to_bits(),
            want.to_bits(),
            "out[{i}]: cudajit {}, rustc {want}",
            got[i]
        );
    }
}

#[test]
fn associated_struct_types_on_the_simulator() {
    check_labels(&Stream::simulator());
}

#[test]
fn associated_struct_types_on_the_gpu() {
    on_the_gpu(check_labels);
}

/// The NVVM writer's side: `&dyn` is static dispatch, so the release-build PTX of each
/// kernel has no call left (no vtable, no indirect call) and no local memory (the structs
/// behind the trait objects live in registers).
#[test]
fn trait_objects_compile_to_direct_inlined_code() {
    for kernel in [
        &dyn_shapes::KERNEL,
        &measures::KERNEL,
        &struct_labels::KERNEL,
    ] {
        let Some(ptx) = common::sm90_ptx_or_skip(kernel.captured()) else {
            return;
        };
        assert!(
            !ptx.contains("call"),
            "{}: a call left:\n{ptx}",
            kernel.name()
        );
        assert!(
            !ptx.contains(".local"),
            "{}: local memory:\n{ptx}",
            kernel.name()
        );
    }
}
