//! Closures passed to generic `#[device]` functions in every parameter position: first,
//! in the middle, last, two in one call, through a method, and made inside a device
//! function from its own parameters; capturing scalars of several types, slices and
//! structs. The instance of the function takes each closure's captured values in the
//! closure parameter's own place, so the call must pass them there (a call that appended
//! them after the other arguments once gave `1.5·x²` for `apply_twice(|s| s * k, x)`).
//!
//! The reference is rustc: the same `#[device]` functions, called on the host with the
//! same closures. Run on the simulator (always) and a GPU (skipped without one).

mod common;

use cudajit::codegen::compile::{linked_ptx, CompileOptions};
use cudajit::prelude::*;
use cudajit::{Arch, Specialization, Stream};

#[derive(Clone, Copy, Debug, PartialEq, DeviceCopy)]
#[repr(C)]
pub struct Affine {
    pub scale: f32,
    pub shift: f32,
}

#[device]
impl Affine {
    /// `f(self.scale * v)` plus `shift`: the closure in the middle of a method's
    /// parameters, after `self`.
    pub fn through<F: Fn(f32) -> f32>(&self, v: f32, f: F, extra: f32) -> f32 {
        f(self.scale * v) + self.shift + extra
    }
}

#[device]
fn apply_twice<F: Fn(f32) -> f32>(f: F, a: f32) -> f32 {
    f(f(a))
}

#[device]
fn apply_twice_bound<F: Fn(f32) -> f32>(f: F, a: f32) -> f32 {
    let b = f(a);
    f(b)
}

#[device]
fn first1<F: Fn(f32) -> f32>(f: F, a: f32, b: f32) -> f32 {
    f(a) - b
}

#[device]
fn mid1<F: Fn(f32) -> f32>(a: f32, f: F, b: f32) -> f32 {
    f(a) * 2.0 - b
}

/// Two closures around other parameters, each capturing values of other types than the
/// parameters next to them (a misplaced capture is a type error, or a wrong value).
#[device]
fn two_closures<F: Fn(u32) -> u32, G: Fn(f32) -> f32>(f: F, a: u32, g: G, b: f32) -> f32 {
    g(f(a) as f32) + b
}

/// A closure made inside a device function from that function's own parameters, passed
/// first to another generic device function.
#[device]
fn shifted_twice(a: f32, by: f32) -> f32 {
    apply_twice(|v: f32| v + by, a)
}

/// A tuple parameter (passed as its elements) before the closure, another after it.
#[device]
fn around_tuples<F: Fn(f32) -> f32>(pair: (f32, u32), f: F, last: (u32, f32)) -> f32 {
    f(pair.0) + pair.1 as f32 - last.0 as f32 * last.1
}

/// A closure capturing a struct the function was given by reference.
#[device]
fn through_reference(affine: &Affine, v: f32) -> f32 {
    first1(|s: f32| s * affine.scale, v, affine.shift)
}

/// Thread `i` writes twelve results of `x[i]` to `out[12 i..12 i + 12]`.
#[kernel]
fn closure_positions(
    x: &[f32],
    k: f32,
    m: u32,
    offset: f64,
    table: &[f32],
    affine: Affine,
    out: &mut [f32],
) {
    let i = global_index();
    if i >= x.len() {
        return;
    }
    let v = x[i];
    let scale = |s: f32| s * k;
    let o = 12 * i;
    out[o] = apply_twice(scale, v);
    out[o + 1] = apply_twice_bound(|s: f32| s * k + table[0], v);
    out[o + 2] = first1(|s: f32| s * k, v, x[(i + 1) % x.len()]);
    out[o + 3] = mid1(v, |s: f32| s * k - affine.shift, 0.5);
    out[o + 4] = two_closures(
        |n: u32| n * m + 1,
        i as u32,
        |s: f32| (s as f64 * offset) as f32 + table[1],
        v,
    );
    out[o + 5] = affine.through(v, |s: f32| s * k + table[i % table.len()], 0.25);
    out[o + 6] = shifted_twice(v, k);
    out[o + 7] = first1(|s: f32| affine.scale * s + table[0], v, k);
    out[o + 8] = around_tuples((v, m), |s: f32| s * k, (m + 1, 0.5));
    out[o + 9] = through_reference(&affine, v);
    let mut acc = 0.0f32;
    for j in 0..3u32 {
        acc += mid1(v, |s: f32| s + j as f32 * k, acc);
    }
    out[o + 10] = acc;
    let tile = shared_array::<f32>(128);
    tile[thread_idx().x as usize] = v;
    sync_threads();
    let next = (thread_idx().x as usize + 1) % block_dim().x as usize;
    out[o + 11] = apply_twice(|s: f32| s + tile[next], v);
}

/// The same twelve results computed by rustc on the host: the device functions are
/// ordinary Rust.
fn expected(x: &[f32], k: f32, m: u32, offset: f64, table: &[f32], affine: Affine) -> Vec<f32> {
    let mut out = Vec::new();
    for (i, &v) in x.iter().enumerate() {
        let scale = |s: f32| s * k;
        out.push(apply_twice(scale, v));
        out.push(apply_twice_bound(|s: f32| s * k + table[0], v));
        out.push(first1(|s: f32| s * k, v, x[(i + 1) % x.len()]));
        out.push(mid1(v, |s: f32| s * k - affine.shift, 0.5));
        out.push(two_closures(
            |n: u32| n * m + 1,
            i as u32,
            |s: f32| (s as f64 * offset) as f32 + table[1],
            v,
        ));
        out.push(affine.through(v, |s: f32| s * k + table[i % table.len()], 0.25));
        out.push(shifted_twice(v, k));
        out.push(first1(|s: f32| affine.scale * s + table[0], v, k));
        out.push(around_tuples((v, m), |s: f32| s * k, (m + 1, 0.5)));
        out.push(through_reference(&affine, v));
        let mut acc = 0.0f32;
        for j in 0..3u32 {
            acc += mid1(v, |s: f32| s + j as f32 * k, acc);
        }
        out.push(acc);
        // Threads of one block of `BLOCK`, each reading its neighbour's element.
        let block_start = i - i % BLOCK;
        let next = x[block_start + (i - block_start + 1) % BLOCK];
        out.push(apply_twice(|s: f32| s + next, v));
    }
    out
}

/// Threads per block of the launches here.
const BLOCK: usize = 32;

fn check(stream: &Stream) {
    let x: Vec<f32> = (0..2 * BLOCK).map(|i| (i as f32 - 30.0) * 0.375).collect();
    let (k, m, offset) = (1.5f32, 3u32, 0.25f64);
    let table = [0.5f32, -2.0, 4.0];
    let affine = Affine {
        scale: 2.0,
        shift: -1.0,
    };
    let dx = stream.clone_htod(&x).unwrap();
    let dtable = stream.clone_htod(&table).unwrap();
    let mut out = stream.alloc_zeros::<f32>(12 * x.len()).unwrap();
    closure_positions::launch(
        stream,
        LaunchConfig::new(2, BLOCK as u32),
        &dx,
        k,
        m,
        offset,
        &dtable,
        affine,
        &mut out,
    )
    .unwrap();
    let got = stream.clone_dtoh(&out).unwrap();
    let want = expected(&x, k, m, offset, &table, affine);
    for (n, (g, e)) in got.iter().zip(&want).enumerate() {
        // The simulator is IEEE operation for operation; a GPU may contract into FMAs.
        assert!(
            (g - e).abs() <= 1e-5 * e.abs().max(1.0),
            "out[{n}] (thread {}, result {}): {g} != {e}",
            n / 12,
            n % 12
        );
    }
}

#[test]
fn closures_in_every_parameter_position_on_the_simulator() {
    check(&Stream::simulator());
}

#[test]
fn closures_in_every_parameter_position_on_the_gpu() {
    let Some(context) = common::gpu_or_skip() else {
        return;
    };
    check(&Stream::from_cuda(context.default_stream()));
}

/// The first report, value for value: 1, 2, 3, -4 through `apply_twice` with
/// k = 1.5 give 2.25 times themselves.
#[test]
fn apply_twice_scales_twice() {
    let stream = Stream::simulator();
    let x = [1.0f32, 2.0, 3.0, -4.0];
    let dx = stream.clone_htod(&x).unwrap();
    let dtable = stream.clone_htod(&[0.0f32, 0.0]).unwrap();
    let mut out = stream.alloc_zeros::<f32>(12 * x.len()).unwrap();
    let affine = Affine {
        scale: 1.0,
        shift: 0.0,
    };
    closure_positions::launch(
        &stream,
        LaunchConfig::new(1, x.len() as u32),
        &dx,
        1.5,
        1,
        1.0,
        &dtable,
        affine,
        &mut out,
    )
    .unwrap();
    let got = stream.clone_dtoh(&out).unwrap();
    let first: Vec<f32> = got.iter().step_by(12).copied().collect();
    assert_eq!(first, [2.25, 4.5, 6.75, -9.0]);
}

/// Every instance inlined into the kernel: no call, no local memory.
#[test]
fn closure_positions_compile_to_inlined_code() {
    if common::toolchain_or_skip().is_none() {
        return;
    }
    let ptx = linked_ptx(
        closure_positions::KERNEL.captured(),
        &Specialization::default(),
        Arch::SM_90,
        &CompileOptions::default(),
    )
    .expect("linking");
    assert!(!ptx.contains(".local"), "local memory:\n{ptx}");
    assert!(!ptx.contains("call"), "a call:\n{ptx}");
    assert!(!ptx.contains(".func"), "a device function left:\n{ptx}");
}
