//! Generic `DeviceCopy` structs and generic `#[device]` impl blocks: `Pair<T>` with
//! `impl<T> Pair<T>` methods, two instances (`Pair<f32>`, `Pair<u32>`) in one kernel, as
//! kernel parameters (slices and by value), locals, fields of other generic structs
//! (`Seg<T>`), parameters and results of generic device functions, struct literals with
//! inferred and explicit arguments, user traits and operators implemented generically,
//! const generic arrays (`Row<N>`) and two parameters (`KV<K, V>`). Each kernel's results
//! are checked against rustc running the same functions on the host; on the CPU simulator
//! always, on a GPU when there is one, and through libNVVM and nvJitLink to sm_90 PTX.

mod common;

use core::ops::Add;

use cudajit::prelude::*;
use cudajit::Stream;

#[derive(Clone, Copy, Debug, PartialEq, DeviceCopy)]
#[repr(C)]
pub struct Pair<T> {
    pub a: T,
    pub b: T,
}

#[device]
impl<T: DeviceScalar + Add<Output = T>> Pair<T> {
    pub fn new(a: T, b: T) -> Self {
        Pair { a, b }
    }

    pub fn sum(&self) -> T {
        self.a + self.b
    }

    pub fn swap(self) -> Pair<T> {
        Pair {
            a: self.b,
            b: self.a,
        }
    }
}

#[device]
pub fn total<T: DeviceScalar + Add<Output = T>>(ps: &[Pair<T>], start: T) -> T {
    let mut acc = start;
    for k in 0..ps.len() {
        acc = acc + ps[k].sum();
    }
    acc
}

#[kernel]
fn pairs(x: &[Pair<f32>], y: &mut [f32], z: &[Pair<u32>], w: &mut [u32]) {
    let i = global_index();
    if i >= x.len() {
        return;
    }
    let p: Pair<f32> = Pair::new(x[i].a, 2.0);
    y[i] = p.swap().sum() + x[i].sum() + total(x, 0.5);
    w[i] = Pair::<u32>::new(z[i].a, z[i].b).sum() + total(z, 1);
}

fn host_pairs(x: &[Pair<f32>], z: &[Pair<u32>]) -> (Vec<f32>, Vec<u32>) {
    let y = (0..x.len())
        .map(|i| {
            let p: Pair<f32> = Pair::new(x[i].a, 2.0);
            p.swap().sum() + x[i].sum() + total(x, 0.5)
        })
        .collect();
    let w = (0..x.len())
        .map(|i| Pair::<u32>::new(z[i].a, z[i].b).sum() + total(z, 1))
        .collect();
    (y, w)
}

fn check_pairs(stream: &Stream) {
    let n = 37;
    let x: Vec<Pair<f32>> = (0..n)
        .map(|i| Pair::new(i as f32 * 0.25 - 3.0, 1.5 - i as f32 * 0.125))
        .collect();
    let z: Vec<Pair<u32>> = (0..n).map(|i| Pair::new(i as u32 * 3, 100 - i as u32)).collect();
    let dx = stream.clone_htod(&x).unwrap();
    let dz = stream.clone_htod(&z).unwrap();
    let mut y = stream.alloc_zeros::<f32>(n).unwrap();
    let mut w = stream.alloc_zeros::<u32>(n).unwrap();
    pairs::launch(stream, LaunchConfig::for_elements(n), &dx, &mut y, &dz, &mut w).unwrap();
    let (want_y, want_w) = host_pairs(&x, &z);
    let got_y = stream.clone_dtoh(&y).unwrap();
    for i in 0..n {
        assert_eq!(got_y[i].to_bits(), want_y[i].to_bits(), "y[{i}]: {} vs {}", got_y[i], want_y[i]);
    }
    assert_eq!(stream.clone_dtoh(&w).unwrap(), want_w);
}

#[test]
fn pairs_on_the_simulator() {
    check_pairs(&Stream::simulator());
}

#[test]
fn pairs_on_the_gpu() {
    let Some(context) = common::gpu_or_skip() else {
        return;
    };
    std::env::set_var("CUDAJIT_FMA", "0");
    check_pairs(&Stream::from_cuda(context.default_stream()));
}

#[test]
fn pairs_compile_to_ptx() {
    let Some(ptx) = common::sm90_ptx_or_skip(pairs::KERNEL.captured()) else {
        return;
    };
    assert!(!ptx.contains(".local"), "local memory:\n{ptx}");
}
