//! Closures: closures bound with `let` and called in the body (inlined where they are
//! called; `FnMut` ones that change a local too), and `#[device]` functions generic over
//! `F: Fn(..) -> R` called with closures (one instance per closure, inlined: no indirect
//! call, no local memory in the PTX), on the simulator (always) and a GPU (skipped
//! without one).

mod common;

use cudajit::codegen::compile::{linked_ptx, CompileOptions};
use cudajit::prelude::*;
use cudajit::{Arch, Specialization, Stream};

/// Folds `x[start..start + len]` with `op`, from `init`.
#[device]
fn fold<T: DeviceScalar, F: Fn(T, T) -> T>(x: &[T], start: usize, len: usize, init: T, op: F) -> T {
    let mut acc = init;
    for i in start..start + len {
        acc = op(acc, x[i]);
    }
    acc
}

/// `f(x[i])`, with the closure taken as `impl Fn`.
#[device]
fn apply_at(x: &[f32], i: usize, f: impl Fn(f32) -> f32) -> f32 {
    f(x[i])
}

/// Thread `t` reduces row `t` of `x` (rows of `width`) with several operators through one
/// generic `fold`: a sum, a maximum, a sum weighted by a captured scalar and a captured
/// slice, and a named closure local passed by name.
#[kernel]
fn row_reductions(x: &[f32], width: usize, scale: f32, weights: &[f32], out: &mut [f32]) {
    let t = thread_idx().x as usize;
    let start = t * width;
    let weighted = |acc: f32, v: f32| acc + v * scale * weights[0];
    out[5 * t] = fold(x, start, width, 0.0, |a, b| a + b);
    out[5 * t + 1] = fold(x, start, width, f32::NEG_INFINITY, |a: f32, b: f32| {
        a.max(b)
    });
    out[5 * t + 2] = fold(x, start, width, 0.0, weighted);
    out[5 * t + 3] = fold(x, start, width, 1.0, |a, b| a * (1.0 + b * 0.001));
    out[5 * t + 4] = apply_at(x, start, |v| v * scale + weights[1]);
}

/// A module constant a closure names: it crosses into the instance as a captured value.
const WEIGHT: f64 = 0.125;

/// The same generic `fold` over `f64` and `u32`.
#[kernel]
fn typed_folds(a: &[f64], b: &[u32], out_a: &mut [f64], out_b: &mut [u32]) {
    if thread_idx().x == 0 {
        out_a[0] = fold(a, 0, a.len(), 0.0, |p, q| p + q * q * WEIGHT);
        out_b[0] = fold(b, 0, b.len(), 0, |p, q| p ^ q.rotate_left(3));
    }
}

/// Closures called in the body: one capturing parameters and locals, one calling
/// another, and an `FnMut` one that counts into a local.
#[kernel]
fn local_closures(x: &[f32], a: f32, b: f32, y: &mut [f32], counts: &mut [u32]) {
    let i = global_index();
    if i < x.len() {
        let offset = b * 2.0;
        let affine = |v: f32| v * a + offset;
        let twice = |v| affine(affine(v));
        // A block body: statements, then the value.
        let clamp_twice = |v: f32| {
            let t = twice(v);
            if t < 0.0 {
                0.0
            } else {
                t
            }
        };
        let mut positives = 0u32;
        let mut count = |v: f32| {
            if v > 0.0 {
                positives += 1;
            }
        };
        count(x[i]);
        count(affine(x[i]));
        count(-1.0);
        y[i] = twice(x[i]) + affine(1.0) + clamp_twice(-x[i]);
        counts[i] = positives;
    }
}

fn check_row_reductions(stream: &Stream) {
    let (rows, width) = (8usize, 7usize);
    let x: Vec<f32> = (0..rows * width)
        .map(|i| ((i * 5) % 11) as f32 - 3.0)
        .collect();
    let (scale, weights) = (0.5f32, [2.0f32, 0.25]);
    let dx = stream.clone_htod(&x).unwrap();
    let dw = stream.clone_htod(&weights).unwrap();
    let mut out = stream.alloc_zeros::<f32>(5 * rows).unwrap();
    let config = LaunchConfig::new(1, rows as u32);
    row_reductions::launch(stream, config, &dx, width, scale, &dw, &mut out).unwrap();
    let mut expected = Vec::new();
    for row in x.chunks(width) {
        expected.push(row.iter().fold(0.0, |a, b| a + b));
        expected.push(row.iter().fold(f32::NEG_INFINITY, |a, &b| a.max(b)));
        expected.push(row.iter().fold(0.0, |acc, v| acc + v * scale * weights[0]));
        expected.push(row.iter().fold(1.0, |a, b| a * (1.0 + b * 0.001)));
        expected.push(row[0] * scale + weights[1]);
    }
    let got = stream.clone_dtoh(&out).unwrap();
    for (k, (g, e)) in got.iter().zip(&expected).enumerate() {
        // The products fold in one order on both sides; FMA contraction on the GPU may
        // round the last bit differently.
        assert!(
            (g - e).abs() <= 1e-5 * e.abs().max(1.0),
            "out[{k}]: {g} != {e}"
        );
    }
}

fn check_typed_folds(stream: &Stream) {
    let a: Vec<f64> = (0..20).map(|i| i as f64 * 0.25).collect();
    let b: Vec<u32> = (0..20u32)
        .map(|i| 0x9e37_79b9u32.wrapping_mul(i + 1))
        .collect();
    let da = stream.clone_htod(&a).unwrap();
    let db = stream.clone_htod(&b).unwrap();
    let mut out_a = stream.alloc_zeros::<f64>(1).unwrap();
    let mut out_b = stream.alloc_zeros::<u32>(1).unwrap();
    typed_folds::launch(
        stream,
        LaunchConfig::new(1, 32),
        &da,
        &db,
        &mut out_a,
        &mut out_b,
    )
    .unwrap();
    let expected_a = a.iter().fold(0.0, |p, q| p + q * q * WEIGHT);
    let expected_b = b.iter().fold(0u32, |p, q| p ^ q.rotate_left(3));
    assert_eq!(stream.clone_dtoh(&out_a).unwrap(), [expected_a]);
    assert_eq!(stream.clone_dtoh(&out_b).unwrap(), [expected_b]);
}

fn check_local_closures(stream: &Stream) {
    let n = 300;
    let (a, b) = (1.5f32, -0.75f32);
    let x: Vec<f32> = (0..n).map(|i| (i as f32 - 150.0) * 0.1).collect();
    let dx = stream.clone_htod(&x).unwrap();
    let mut y = stream.alloc_zeros::<f32>(n).unwrap();
    let mut counts = stream.alloc_zeros::<u32>(n).unwrap();
    local_closures::launch(
        stream,
        LaunchConfig::for_elements(n),
        &dx,
        a,
        b,
        &mut y,
        &mut counts,
    )
    .unwrap();
    let affine = |v: f32| v * a + b * 2.0;
    let clamp_twice = |v: f32| affine(affine(v)).max(0.0);
    let expected: Vec<f32> = x
        .iter()
        .map(|&v| affine(affine(v)) + affine(1.0) + clamp_twice(-v))
        .collect();
    let got = stream.clone_dtoh(&y).unwrap();
    for (k, (g, e)) in got.iter().zip(&expected).enumerate() {
        assert!(
            (g - e).abs() <= 1e-5 * e.abs().max(1.0),
            "y[{k}]: {g} != {e}"
        );
    }
    let expected_counts: Vec<u32> = x
        .iter()
        .map(|&v| u32::from(v > 0.0) + u32::from(affine(v) > 0.0))
        .collect();
    assert_eq!(stream.clone_dtoh(&counts).unwrap(), expected_counts);
}

#[test]
fn device_functions_generic_over_closures_on_the_simulator() {
    let stream = Stream::simulator();
    check_row_reductions(&stream);
    check_typed_folds(&stream);
}

#[test]
fn closures_called_in_the_body_on_the_simulator() {
    check_local_closures(&Stream::simulator());
}

#[test]
fn closures_on_the_gpu() {
    let Some(context) = common::gpu_or_skip() else {
        return;
    };
    let stream = Stream::from_cuda(context.default_stream());
    check_row_reductions(&stream);
    check_typed_folds(&stream);
    check_local_closures(&stream);
}

#[test]
fn closures_compile_to_inlined_code() {
    if common::toolchain_or_skip().is_none() {
        return;
    }
    let spec = Specialization {
        types: Vec::new(),
        structs: Vec::new(),
        consts: Vec::new(),
    };
    for kernel in [
        row_reductions::KERNEL.captured(),
        typed_folds::KERNEL.captured(),
        local_closures::KERNEL.captured(),
    ] {
        let ptx =
            linked_ptx(kernel, &spec, Arch::SM_90, &CompileOptions::default()).expect("linking");
        assert!(!ptx.contains(".local"), "local memory:\n{ptx}");
        assert!(!ptx.contains("call"), "a call:\n{ptx}");
        // One function in the PTX: the kernel, every instance inlined into it.
        assert_eq!(ptx.matches(".entry").count(), 1, "{ptx}");
        assert!(!ptx.contains(".func"), "a device function left:\n{ptx}");
    }
}
