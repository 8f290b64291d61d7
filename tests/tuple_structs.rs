//! Tuple structs and unit structs in kernels, each use checked against rustc running the
//! same `#[device]` functions on the host (as `rust_fidelity.rs` does): `Pair(a, b)` and
//! `Double` as values, `.0`/`.1` read and assigned, `let Pair(a, b) = p;`, methods and
//! operators of `#[device]` impl blocks, tuple and unit structs as parameters of device
//! functions, tuple structs as kernel parameters (a unit struct has no bytes to pass, and
//! is refused there with the alternative), slices of them (`&[Meters]`, `&mut [Pair]`), both given to a
//! generic function bounded by a `#[device]` trait they implement, and a call's
//! `Option` or tuple result passed straight on to a function taking one. On the CPU
//! simulator always, on a GPU when there is one.

// The forms are written the ways users write them, not always clippy's way.
#![allow(clippy::manual_unwrap_or)]

mod common;

use core::ops::{Add, Mul};

use cudajit::prelude::*;
use cudajit::Stream;

/// A length, a one-field tuple struct.
#[derive(Clone, Copy, Debug, PartialEq, DeviceCopy)]
#[repr(C)]
pub struct Meters(pub f32);

/// Two fields of different types.
#[derive(Clone, Copy, Debug, PartialEq, DeviceCopy)]
#[repr(C)]
pub struct Pair(pub u32, pub f32);

/// A tuple struct holding a tuple struct and an array.
#[derive(Clone, Copy, Debug, PartialEq, DeviceCopy)]
#[repr(C)]
pub struct Span2(pub Meters, pub [u32; 2]);

/// A unit struct: an operation chosen by type, with no data (no `repr` needed).
#[derive(Clone, Copy, Debug, DeviceCopy)]
pub struct Double;

#[device]
impl Meters {
    pub fn new(v: f32) -> Self {
        Self(v)
    }

    pub fn feet(&self) -> f32 {
        self.0 * 3.28084
    }

    pub fn stretch(&mut self, by: f32) {
        self.0 *= by;
    }
}

#[device]
impl Add for Meters {
    type Output = Meters;
    fn add(self, o: Meters) -> Meters {
        Meters(self.0 + o.0)
    }
}

#[device]
impl Mul<f32> for Meters {
    type Output = Meters;
    fn mul(self, k: f32) -> Meters {
        Meters(self.0 * k)
    }
}

#[device]
impl Double {
    pub fn apply(&self, x: f32) -> f32 {
        x * 2.0
    }
}

/// An operation chosen by type: unit and tuple structs implement it.
#[device]
pub trait Op {
    fn run(&self, x: f32) -> f32;
}

#[device]
impl Op for Double {
    fn run(&self, x: f32) -> f32 {
        self.apply(x) - 0.25
    }
}

#[device]
impl Op for Meters {
    fn run(&self, x: f32) -> f32 {
        x * self.0
    }
}

/// A generic function bounded by the trait, given a unit struct and a tuple struct.
#[device]
pub fn twice<O: Op>(op: O, x: f32) -> f32 {
    op.run(op.run(x))
}

/// A unit struct passed by value to a device function.
#[device]
pub fn run_op(op: Double, x: f32) -> f32 {
    op.apply(x) + 1.0
}

/// A tuple struct as a parameter and as the result.
#[device]
pub fn swap_halves(p: Pair) -> Pair {
    let Pair(a, b) = p;
    Pair(a / 2 + (b as u32), b * 0.5 + a as f32)
}

/// `x` halved when it is even.
#[device]
pub fn half(x: u32) -> Option<u32> {
    if x % 2 == 0 {
        Some(x / 2)
    } else {
        None
    }
}

/// An `Option` parameter.
#[device]
pub fn or_seven(o: Option<u32>) -> u32 {
    o.unwrap_or(7) * 3
}

/// A tuple result.
#[device]
pub fn div_mod(a: u32, b: u32) -> (u32, u32) {
    (a / b, a % b)
}

/// A tuple parameter.
#[device]
pub fn weigh(t: (u32, u32)) -> u32 {
    t.0 * 10 + t.1
}

/// `?` on an `Option` parameter.
#[device]
pub fn bumped(o: Option<u32>, by: u32) -> Option<u32> {
    let v = o?;
    Some(v + by)
}

/// An `Option<bool>` parameter, given `None` and a passed-on result.
#[device]
pub fn flag(o: Option<bool>, d: bool) -> u32 {
    o.unwrap_or(d) as u32 + 2 * o.is_some() as u32
}

/// `None` for an `Option<bool>`, the only rewritten call of its function.
#[device]
pub fn flag_none(d: bool) -> u32 {
    flag(None, d)
}

#[device]
pub fn odd(x: u32) -> Option<bool> {
    if x > 40 {
        return None;
    }
    Some(x % 2 == 1)
}

/// A tuple parameter and result.
#[device]
pub fn swap(t: (u32, u32)) -> (u32, u32) {
    (t.1, t.0)
}

/// Results passed on inside consumers and `let`s: `Some(..)` arguments that run code, a
/// passed-on call under `map`, `if let` and `unwrap_or`, a tuple result of a call given
/// a tuple result.
#[device]
pub fn passed_on(i: u32) -> u32 {
    let a = bumped(Some(i * 3 + 1), 2).map(|v| v * 2).unwrap_or(0);
    let b = bumped(half(i), 1).unwrap_or(3);
    let c = if let Some(v) = bumped(bumped(half(i + 1), 4), 5) {
        v
    } else {
        1
    };
    let s = swap(div_mod(i + 7, 3));
    let (p, q) = swap(swap(div_mod(i, 4)));
    let f = flag_none(i % 3 == 0) + 4 * flag(odd(i), false);
    a + 10 * b + 100 * c + 1000 * s.0 + 7 * s.1 + 3 * p + 5 * q + 11 * f
}

/// `match` on tuple and unit structs: literal, `|`, range and nested patterns, guards.
#[device]
pub fn classify(p: Pair, m: Meters, s: Span2) -> f32 {
    let a = match p {
        Pair(0, y) => y,
        Pair(1 | 2, _) => 10.0,
        Pair(k, y) if y > 2.0 => k as f32 + y,
        Pair(3..=9, y) => -y,
        Pair(k, _) => k as f32 * 0.5,
    };
    let mut b = 0.0;
    match m {
        Meters(v) if v < 0.0 => b -= v,
        Meters(v) => b += v * 2.0,
    }
    let c = match Double {
        Double => 1.5,
    };
    let d = match s {
        Span2(Meters(w), [_, 4]) => w * 8.0,
        Span2(Meters(w), _) if w > 1.0 => w,
        Span2(_, e) => e[0] as f32,
    };
    a + b + c + d
}

/// A step recorded in `log[i]`, so the order of calls shows.
#[device]
pub fn step(log: &mut [u32], i: usize, k: u32) -> u32 {
    log[i] = log[i] * 10 + k;
    log[i]
}

/// A recorded step giving an `Option`.
#[device]
pub fn step_option(log: &mut [u32], i: usize, k: u32) -> Option<u32> {
    log[i] = log[i] * 10 + k;
    if log[i] % 3 == 0 {
        Some(log[i] / 3)
    } else {
        None
    }
}

#[device]
pub fn combine(a: u32, o: Option<u32>, b: u32) -> u32 {
    a + o.unwrap_or(5) * 7 + b * 11
}

/// A function of no result taking an `Option`.
#[device]
pub fn record(log: &mut [u32], i: usize, o: Option<u32>) {
    log[i] += o.unwrap_or(9) * 100_000;
}

/// The calls among a passed-on `Option`'s neighbours run in Rust's order, left to right.
#[device]
pub fn in_order(log: &mut [u32], i: usize) {
    let v = combine(
        step(log, i, 1),
        step_option(log, i, 2 + i as u32 % 3),
        step(log, i, 3),
    );
    log[i] += v * 1000;
    record(log, i, half(i as u32));
}

/// Everything on one element; the kernel and the host both call it.
#[device]
pub fn tuple_values(x: f32, i: u32) -> f32 {
    let mut p = Pair(i, x);
    p.0 += 3;
    p.1 = p.1 * 2.0 - p.0 as f32;
    let Pair(a, mut b) = p;
    b += 1.0;
    let m = Meters::new(x) + Meters(1.5) * 2.0;
    let Meters(len) = m;
    let mut n = m;
    n.stretch(0.5);
    let ends = [i, i + 1];
    let s = Span2(Meters(x), ends);
    let inner = s.0 .0 + s.1[1] as f32;
    let q = swap_halves(p);
    let op = Double;
    let doubled = op.apply(x) + run_op(Double, len) + twice(op, x) + twice(Meters(0.5), len);
    // A call's `Option` and tuple results passed straight on.
    let sorted = classify(Pair(i % 12, x), Meters(x - 1.0), s);
    let passed = or_seven(half(i)) + weigh(div_mod(i + 11, 4)) + passed_on(i);
    a as f32
        + b
        + len
        + n.0
        + m.feet()
        + inner
        + q.0 as f32
        + q.1
        + doubled
        + passed as f32
        + sorted
}

#[kernel]
fn tuple_structs(
    x: &[f32],
    lengths: &[Meters],
    unit: Meters,
    out: &mut [f32],
    pairs: &mut [Pair],
    log: &mut [u32],
) {
    let i = global_index();
    if i >= x.len() {
        return;
    }
    in_order(log, i);
    let op = Double;
    out[i] = tuple_values(x[i], i as u32) + run_op(op, lengths[i].0) * unit.0;
    pairs[i] = swap_halves(Pair(i as u32, lengths[i].feet()));
    pairs[i].0 += 1;
}

fn inputs() -> (Vec<f32>, Vec<Meters>) {
    let x = (0..77)
        .map(|i| ((i * 37 % 77) as f32 - 38.0) * 0.3125)
        .collect();
    let lengths = (0..77).map(|i| Meters(i as f32 * 0.75 - 20.0)).collect();
    (x, lengths)
}

fn check(stream: &Stream) {
    let (x, lengths) = inputs();
    let n = x.len();
    let dx = stream.clone_htod(&x).unwrap();
    let dl = stream.clone_htod(&lengths).unwrap();
    let mut out = stream.alloc_zeros::<f32>(n).unwrap();
    let mut pairs = stream.alloc_zeros::<Pair>(n).unwrap();
    let mut log = stream.alloc_zeros::<u32>(n).unwrap();
    tuple_structs::launch(
        stream,
        LaunchConfig::for_elements(n),
        &dx,
        &dl,
        Meters(0.75),
        &mut out,
        &mut pairs,
        &mut log,
    )
    .unwrap();
    let got_log = stream.clone_dtoh(&log).unwrap();
    let mut want_log = vec![0u32; n];
    for i in 0..n {
        in_order(&mut want_log, i);
    }
    assert_eq!(got_log, want_log);
    let got = stream.clone_dtoh(&out).unwrap();
    let got_pairs = stream.clone_dtoh(&pairs).unwrap();
    for i in 0..n {
        let want = tuple_values(x[i], i as u32) + run_op(Double, lengths[i].0) * 0.75;
        assert_eq!(
            got[i].to_bits(),
            want.to_bits(),
            "out[{i}]: cudajit {}, rustc {want}",
            got[i]
        );
        let mut want_pair = swap_halves(Pair(i as u32, lengths[i].feet()));
        want_pair.0 += 1;
        assert_eq!(got_pairs[i].0, want_pair.0, "pairs[{i}].0");
        assert_eq!(
            got_pairs[i].1.to_bits(),
            want_pair.1.to_bits(),
            "pairs[{i}].1: cudajit {}, rustc {}",
            got_pairs[i].1,
            want_pair.1
        );
    }
}

/// A unit struct as a kernel parameter: no bytes to pass, refused at the launch.
#[kernel]
fn unit_parameter(op: Double, out: &mut [f32]) {
    let i = global_index();
    if i < out.len() {
        out[i] = op.apply(i as f32);
    }
}

#[test]
fn a_unit_struct_kernel_parameter_is_refused_with_the_alternative() {
    let stream = Stream::simulator();
    let mut out = stream.alloc_zeros::<f32>(4).unwrap();
    let error = unit_parameter::launch(&stream, LaunchConfig::for_elements(4), Double, &mut out)
        .expect_err("a unit struct has no bytes to pass");
    let text = error.to_string();
    assert!(
        text.contains("kernel parameter `op` is the unit struct `Double`")
            && text.contains("let op = Double;"),
        "{text}"
    );
}

#[test]
fn tuple_and_unit_structs_on_the_simulator() {
    check(&Stream::simulator());
}

#[test]
fn tuple_and_unit_structs_on_the_gpu() {
    let Some(context) = common::gpu_or_skip() else {
        return;
    };
    std::env::set_var("CUDAJIT_FMA", "0");
    check(&Stream::from_cuda(context.default_stream()));
}

/// The kernel (a unit struct built in it, a tuple struct parameter) compiles through libNVVM and
/// nvJitLink for sm_90, its structs in registers: no local memory, no calls left.
#[test]
fn tuple_structs_compile_without_local_memory() {
    let Some(ptx) = common::sm90_ptx_or_skip(tuple_structs::KERNEL.captured()) else {
        return;
    };
    assert!(!ptx.contains(".local"), "local memory:\n{ptx}");
    assert!(!ptx.contains("call.uni"), "a call left:\n{ptx}");
}
