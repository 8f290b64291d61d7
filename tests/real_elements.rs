//! Kernels generic over their element type with `T: Real` (`f16`, `bf16`, `f32`, `f64`):
//! elements read as `x.to_f32()` and written as `T::from_f32(v)`, each instance checked
//! against rustc running the same functions on the host; on the CPU simulator always, on
//! a GPU when there is one.

mod common;

use cudajit::prelude::*;
use cudajit::{bf16, f16, Stream};

/// `a · x + y` in `f32`, stored as the element type.
#[device]
pub fn axpy_element<T: Real>(a: f32, x: T, y: T) -> T {
    T::from_f32(a * x.to_f32() + y.to_f32())
}

/// The softmax weight of element `i` of a row, computed in `f64` and stored as `T`.
#[device]
pub fn weight<T: Real>(row: &[T], i: usize) -> T {
    let mut max = f64::MIN;
    for v in row.iter() {
        max = max.max(v.to_f64());
    }
    let mut total = 0.0f64;
    for v in row.iter() {
        total += (v.to_f64() - max).exp();
    }
    T::from_f64((row[i].to_f64() - max).exp() / total)
}

#[kernel]
fn generic_elements<T: Real>(a: f32, x: &[T], y: &[T], out: &mut [T], weights: &mut [T]) {
    let i = global_index();
    if i < x.len() {
        out[i] = axpy_element(a, x[i], y[i]);
        weights[i] = weight(x, i);
    }
}

fn check<T: Real + PartialEq + core::fmt::Debug + cudajit::BufferElement>(stream: &Stream) {
    let n = 37;
    let x: Vec<T> = (0..n)
        .map(|i| T::from_f32((i as f32 - 18.0) * 0.37))
        .collect();
    let y: Vec<T> = (0..n)
        .map(|i| T::from_f32((i * 7 % 11) as f32 * 0.5))
        .collect();
    let dx = stream.clone_htod(&x).unwrap();
    let dy = stream.clone_htod(&y).unwrap();
    let mut out = stream.alloc_zeros::<T>(n).unwrap();
    let mut weights = stream.alloc_zeros::<T>(n).unwrap();
    generic_elements::launch::<T>(
        stream,
        LaunchConfig::for_elements(n),
        1.25,
        &dx,
        &dy,
        &mut out,
        &mut weights,
    )
    .unwrap();
    let got = stream.clone_dtoh(&out).unwrap();
    let got_weights = stream.clone_dtoh(&weights).unwrap();
    for i in 0..n {
        assert_eq!(got[i], axpy_element(1.25, x[i], y[i]), "out[{i}]");
        let want = weight(&x, i).to_f64();
        let error = (got_weights[i].to_f64() - want).abs();
        // `exp` is libdevice's on the GPU (within 2 ulp of f64), then rounded to `T`.
        assert!(
            error <= want.abs() * 1e-12 + 1e-300 || got_weights[i] == weight(&x, i),
            "weights[{i}]: {:?} against {want}",
            got_weights[i]
        );
    }
}

fn every_type(stream: &Stream) {
    check::<f32>(stream);
    check::<f64>(stream);
    check::<f16>(stream);
    check::<bf16>(stream);
}

#[test]
fn generic_elements_on_the_simulator() {
    every_type(&Stream::simulator());
}

#[test]
fn generic_elements_on_the_gpu() {
    common::on_gpu_without_fma(every_type);
}
