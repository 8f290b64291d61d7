//! A small simulation step written as a user writes one from docs/language.md, combining
//! features, on the simulator and the GPU against the same functions run on the host: a
//! `#[device]` trait with two implementors used through a generic function, a capturing
//! closure passed to a generic function in the middle of its parameters (the class of the
//! old capture miscompile), a struct holding an array field, array literals passed and
//! returned, an iterator chain over a sub-slice (`zip`, `map`, `sum`), `position` giving an
//! `Option`, `loop` with a `break` value and an early return.

mod common;

use cudajit::prelude::*;
use cudajit::Stream;

#[device]
pub trait Force {
    fn at(&self, x: f32) -> f32;
    fn scaled(&self, x: f32, k: f32) -> f32 {
        self.at(x) * k
    }
}

#[derive(Clone, Copy, Debug, PartialEq, DeviceCopy)]
#[repr(C)]
pub struct Spring {
    pub stiffness: f32,
    pub rest: f32,
}

#[derive(Clone, Copy, Debug, PartialEq, DeviceCopy)]
#[repr(C)]
pub struct Field {
    pub g: [f32; 2],
}

#[device]
impl Force for Spring {
    fn at(&self, x: f32) -> f32 {
        -self.stiffness * (x - self.rest)
    }
}

#[device]
impl Force for Field {
    fn at(&self, x: f32) -> f32 {
        self.g[0] + self.g[1] * x
    }
}

/// `f` sits between two scalars: its captures must not take their places.
#[device]
pub fn integrate<F: Fn(f32) -> f32>(x: f32, f: F, dt: f32) -> f32 {
    let mut v = x;
    for _ in 0..3 {
        v += f(v) * dt;
    }
    v
}

#[device]
pub fn total<A: Force, B: Force>(a: &A, b: &B, x: f32, k: f32) -> f32 {
    let damping = 0.25 * k;
    integrate(x, |v| a.at(v) + b.scaled(v, k) - damping * v, 0.125)
}

#[device]
pub fn blend(w: [f32; 3], v: f32) -> [f32; 2] {
    if v < 0.0 {
        return [w[0] * v, w[2]];
    }
    [w[1] * v, w[0] + w[2]]
}

#[device]
pub fn step(x: &[f32], i: usize) -> f32 {
    let spring = Spring {
        stiffness: 2.0,
        rest: 0.5,
    };
    let field = Field { g: [0.25, -0.5] };
    let t = total(&spring, &field, x[i], 1.5);
    let gravity = Field::at(&Field { g: [0.125, x[i]] }, 2.0);
    let b = blend([0.5, x[i], 2.0], t);
    let lo = i.saturating_sub(2);
    let hi = (i + 3).min(x.len());
    let weights = [0.5f32, 1.0, 2.0, 1.0, 0.5];
    let smooth: f32 = x[lo..hi]
        .iter()
        .zip(weights.iter())
        .map(|(a, w)| a * w)
        .sum();
    let first_negative = x[lo..hi].iter().position(|&v| v < 0.0);
    let mut k = 0u32;
    let doubled = loop {
        k += 1;
        if k * k > i as u32 + 3 {
            break k * 2;
        }
    };
    if x[i] > 7.0 {
        return t + gravity;
    }
    t + b[0] - b[1] + smooth + first_negative.map_or(-1.0, |p| p as f32) + doubled as f32 + gravity
}

#[kernel]
fn forces(x: &[f32], out: &mut [f32]) {
    let i = global_index();
    if i >= x.len() {
        return;
    }
    out[i] = step(x, i);
}

fn check(stream: &Stream) {
    let x: Vec<f32> = (0..67)
        .map(|i| ((i * 31 % 67) as f32 - 30.0) * 0.28125)
        .collect();
    let dx = stream.clone_htod(&x).unwrap();
    let mut out = stream.alloc_zeros::<f32>(x.len()).unwrap();
    forces::launch(stream, LaunchConfig::for_elements(x.len()), &dx, &mut out).unwrap();
    let got = stream.clone_dtoh(&out).unwrap();
    for (i, g) in got.iter().enumerate() {
        let w = step(&x, i);
        assert_eq!(g.to_bits(), w.to_bits(), "out[{i}]: cudajit {g}, rustc {w}");
    }
}

#[test]
fn forces_on_the_simulator() {
    check(&Stream::simulator());
}

#[test]
fn forces_on_the_gpu() {
    let Some(context) = common::gpu_or_skip() else {
        return;
    };
    std::env::set_var("CUDAJIT_FMA", "0");
    check(&Stream::from_cuda(context.default_stream()));
}
