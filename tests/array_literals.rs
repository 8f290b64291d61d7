//! Array literals as values: passed to functions and methods (by value, also arrays of
//! arrays and `[v; N]`, and by reference, `&[..]`, `&mut [..]`), returned (`return [..]`
//! and at the end), walked by `for`, inside `&&`, and as struct fields (`Taps { w: [..],
//! .. }`, bound or passed; `&Point { .. }` passed), each checked against rustc running the
//! same `#[device]` functions on the host. On the CPU simulator always, on a GPU when there is one.

mod common;

use cudajit::prelude::*;
use cudajit::Stream;

#[derive(Clone, Copy, Debug, PartialEq, DeviceCopy)]
#[repr(C)]
pub struct Point {
    pub x: f32,
    pub y: f32,
    pub z: f32,
}

#[device]
impl Point {
    pub fn weigh(&self, w: [f32; 3]) -> f32 {
        self.x * w[0] + self.y * w[1] + self.z * w[2]
    }
}

#[derive(Clone, Copy, Debug, PartialEq, DeviceCopy)]
#[repr(C)]
pub struct Taps {
    pub w: [f32; 3],
    pub bias: f32,
}

#[device]
pub fn apply(t: Taps, v: f32) -> f32 {
    t.w[0] * v + t.w[1] * v * v + t.w[2] + t.bias
}

#[device]
pub fn first_of(v: &[f32; 3]) -> f32 {
    v[0] * 2.0 + v[2]
}

#[device]
pub fn fill(out: &mut [f32; 2], v: f32) {
    out[0] += v;
    out[1] = out[0] * 3.0;
}

#[device]
pub fn sum_n<const N: usize>(v: [f32; N]) -> f32 {
    let mut s = 0.0;
    for k in 0..N {
        s += v[k];
    }
    s
}

#[device]
pub fn swapped(v: [f32; 2]) -> [f32; 2] {
    [v[1], v[0]]
}

#[device]
pub fn split(v: f32) -> [f32; 2] {
    if v > 3.0 {
        return [v, 0.0];
    }
    [0.0, v]
}

#[device]
pub fn trace(m: [[f32; 2]; 2]) -> f32 {
    m[0][0] + m[1][1]
}

#[device]
pub fn literals(x: &[f32], i: usize) -> f32 {
    let v = x[i];
    let p = Point {
        x: v,
        y: 2.0,
        z: 3.0,
    };
    let s = swapped([v, 1.0]);
    let e = split(v);
    let mut walked = 0.0;
    for w in [1.0f32, 2.0, 4.0] {
        walked += w * v;
    }
    let mut r = [0.0f32; 2];
    r = swapped([r[0] + v, 5.0]);
    // The literal inside `&&` is built only when `i + 1 < x.len()`: `x[i + 1]` is in
    // bounds there.
    let guarded = i + 1 < x.len() && sum_n::<2>([x[i + 1], v]) > 0.0;
    // Struct literals with array fields, as values and as arguments; references to
    // literals (`&[..]`, `&mut [..]`, `&Point { .. }`), which Rust keeps alive for the call.
    let taps = Taps {
        w: [0.5, v, -1.0],
        bias: 0.25,
    };
    let passed = apply(
        Taps {
            w: [v, 1.0, 2.0],
            bias: v,
        },
        0.5,
    ) + apply(taps, v);
    let referenced = first_of(&[v, 4.0, 0.5])
        + Point::weigh(
            &Point {
                x: 1.0,
                y: v,
                z: 2.0,
            },
            [v; 3],
        );
    fill(&mut [v, 0.0], 2.0);
    // A literal inside a closure of an iterator chain is built per element, in the closure.
    // `N` inferred from the array's length, as rustc does: two instances, N = 4 and 3.
    let w3 = [v, 0.5, 0.25];
    let chained: f32 = x[i..].iter().take(3).map(|&u| sum_n::<2>([u, v])).sum();
    p.weigh([1.0, v, 0.5])
        + sum_n([v, 2.0, 3.0, 4.0])
        + sum_n(w3)
        + s[0] * 3.0
        + e[1]
        + walked
        + r[0] * 7.0
        + trace([[v, 1.0], [2.0, 5.0]])
        + sum_n::<4>([0.5f32; 4])
        + guarded as u32 as f32
        + passed
        + referenced
        + chained
}

#[kernel]
fn array_literals(x: &[f32], out: &mut [f32]) {
    let i = global_index();
    if i >= x.len() {
        return;
    }
    out[i] = literals(x, i);
}

fn check(stream: &Stream) {
    let x: Vec<f32> = (0..53)
        .map(|i| ((i * 29 % 53) as f32 - 26.0) * 0.375)
        .collect();
    let dx = stream.clone_htod(&x).unwrap();
    let mut out = stream.alloc_zeros::<f32>(x.len()).unwrap();
    array_literals::launch(stream, LaunchConfig::for_elements(x.len()), &dx, &mut out).unwrap();
    let got = stream.clone_dtoh(&out).unwrap();
    for (i, g) in got.iter().enumerate() {
        let w = literals(&x, i);
        assert_eq!(g.to_bits(), w.to_bits(), "out[{i}]: cudajit {g}, rustc {w}");
    }
}

#[test]
fn array_literals_on_the_simulator() {
    check(&Stream::simulator());
}

#[test]
fn array_literals_on_the_gpu() {
    let Some(context) = common::gpu_or_skip() else {
        return;
    };
    std::env::set_var("CUDAJIT_FMA", "0");
    check(&Stream::from_cuda(context.default_stream()));
}

/// The hidden locals are registers: no local memory, and every call inlined.
#[test]
fn array_literals_compile_without_local_memory() {
    let Some(ptx) = common::sm90_ptx_or_skip(array_literals::KERNEL.captured()) else {
        return;
    };
    assert!(!ptx.contains(".local"), "local memory:\n{ptx}");
    assert!(!ptx.contains("call.uni"), "a call left:\n{ptx}");
}
