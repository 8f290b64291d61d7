//! Arrays as `#[device]` parameters and results: by value (`fn dot4(a: [f32; 4], b:
//! [f32; 4]) -> f32`, a copy, so the caller's array is unchanged), by reference
//! (`acc: &mut [f32; 16]`, written in place, passed on), of const generic length
//! (`[f32; N]`), of structs, and returned (`-> [f32; 16]`); on the CPU simulator and the
//! GPU against the same functions run on the host, and in the PTX without local memory.

use cudajit::prelude::*;

#[derive(Clone, Copy, Debug, Default, PartialEq, DeviceCopy)]
#[repr(C)]
pub struct Point {
    pub x: f32,
    pub y: f32,
}

#[device]
fn dot4(a: [f32; 4], b: [f32; 4]) -> f32 {
    let mut sum = 0.0f32;
    for k in 0..4 {
        sum += a[k] * b[k];
    }
    sum
}

/// By value and changed: the caller's array stays as it was.
#[device]
fn scaled<const N: usize>(mut v: [f32; N], s: f32) -> [f32; N] {
    for k in 0..N {
        v[k] *= s;
    }
    v
}

#[device]
fn accumulate(acc: &mut [f32; 4], x: [f32; 4]) {
    for k in 0..x.len() {
        acc[k] += x[k];
    }
}

/// The shape of a tensor-core step: an accumulator tile in, a new one out.
#[device]
fn mma_tile(acc: [f32; 16], a: f32, b: f32) -> [f32; 16] {
    let mut out = [0.0f32; 16];
    for k in 0..16 {
        out[k] = acc[k] + a * b * k as f32;
    }
    out
}

#[device]
fn last_down(acc: &mut [f32; 16]) {
    acc[15] -= 1.0;
}

/// Writes in place and passes the reference on.
#[device]
fn bump(acc: &mut [f32; 16]) {
    acc[0] += 1.0;
    last_down(acc);
}

#[device]
fn centroid(points: [Point; 3]) -> Point {
    let mut c = Point { x: 0.0, y: 0.0 };
    for p in points {
        c.x += p.x / 3.0;
        c.y += p.y / 3.0;
    }
    c
}

/// Every form above on thread `i`'s four inputs.
#[device]
fn combine(x0: f32, x1: f32, x2: f32, x3: f32) -> f32 {
    let a = [x0, x1, x2, x3];
    let b = [1.0f32, 2.0, 3.0, 4.0];
    let d = dot4(a, b);
    let s = scaled::<4>(a, 0.5);
    let mut acc = [0.0f32; 4];
    accumulate(&mut acc, s);
    accumulate(&mut acc, b);
    let mut tile = [0.0f32; 16];
    for k in 0..16 {
        tile[k] = k as f32 * x1;
    }
    let t = mma_tile(tile, d, 2.0);
    bump(&mut tile);
    let points = [
        Point { x: x0, y: x1 },
        Point { x: x2, y: x3 },
        Point { x: 1.0, y: -1.0 },
    ];
    let c = centroid(points);
    d + acc[0] + acc[3] + t[5] + t.len() as f32 + tile[0] + tile[15] + a[0] + c.x * c.y
}

#[kernel]
fn arrays(x: &[f32], out: &mut [f32]) {
    let i = global_index();
    if i < out.len() && 4 * i + 3 < x.len() {
        out[i] = combine(x[4 * i], x[4 * i + 1], x[4 * i + 2], x[4 * i + 3]);
    }
}

fn arrays_match_the_host(stream: &cudajit::Stream) {
    let n = 64;
    let x: Vec<f32> = (0..4 * n).map(|k| (k % 13) as f32 * 0.5 - 2.0).collect();
    let dx = stream.clone_htod(&x).unwrap();
    let mut dout = stream.alloc_zeros::<f32>(n).unwrap();
    arrays::launch(stream, LaunchConfig::for_elements(n), &dx, &mut dout).unwrap();
    let out = stream.clone_dtoh(&dout).unwrap();
    for i in 0..n {
        let expected = combine(x[4 * i], x[4 * i + 1], x[4 * i + 2], x[4 * i + 3]);
        let close = (out[i] - expected).abs() <= 1e-4 * (1.0 + expected.abs());
        assert!(close, "out[{i}]: {} != {expected}", out[i]);
    }
}

#[test]
fn array_parameters_and_results_run_on_the_simulator() {
    arrays_match_the_host(&cudajit::Stream::simulator());
}

#[test]
fn array_parameters_and_results_on_the_gpu() {
    let Ok(stream) = cudajit::Stream::gpu(0) else {
        eprintln!("skipped: no GPU");
        return;
    };
    arrays_match_the_host(&stream);
}

/// Release builds: every array is indexed by constants once the calls inline and the
/// loops unroll, so none is in local memory, and no call is left.
#[test]
fn array_parameters_compile_without_local_memory() {
    use cudajit::codegen::compile::{linked_ptx, CompileOptions};
    if cudajit::codegen::toolchain::Toolchain::global().is_err()
        && std::env::var("CUDAJIT_REQUIRE_TOOLCHAIN").as_deref() != Ok("1")
    {
        eprintln!("skipped: no NVIDIA toolchain (run scripts/test.sh to install it)");
        return;
    }
    let options = CompileOptions {
        bounds_checks: false,
        ..CompileOptions::default()
    };
    let ptx = linked_ptx(
        arrays::KERNEL.captured(),
        &cudajit::Specialization::default(),
        cudajit::Arch::SM_90,
        &options,
    )
    .unwrap_or_else(|e| panic!("arrays: {e}"));
    assert!(!ptx.contains(".local"), "local memory:\n{ptx}");
    assert!(!ptx.contains("call.uni"), "a call left:\n{ptx}");
}
