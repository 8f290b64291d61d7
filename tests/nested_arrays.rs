//! Arrays of arrays as locals (`let mut m = [[0.0f32; 4]; 4];`, `m[i][j]`, `m.len()`,
//! `m[i].len()`): on the simulator and the GPU against the same code run on the host, each
//! index checked against its own length, and in the PTX: a 4x4 register tile indexed by
//! constants after unrolling lives in registers, as `float m[4][4]` does in CUDA C++.

mod common;

use common::nested_arrays::{run_tiles, tiles, tiles_on_host};
use cudajit::prelude::*;

/// Only the tile product, for the PTX check: every index a constant after unrolling.
#[kernel]
fn register_tile(x: &[f32], out: &mut [f32]) {
    let i = global_index();
    if 16 * (i + 1) <= x.len() {
        let mut a = [[0.0f32; 4]; 4];
        for r in 0..4 {
            for c in 0..4 {
                a[r][c] = x[16 * i + 4 * r + c];
            }
        }
        let mut sum = 0.0f32;
        for r in 0..4 {
            for c in 0..4 {
                sum += a[r][c] * a[c][r];
            }
        }
        out[i] = sum;
    }
}

/// `m[0][j]` with `j` past the row but inside the whole array: Rust's index check is per
/// dimension, so this is out of bounds, not `m[1][0]`.
#[kernel]
fn column_past_the_row(j: usize, out: &mut [f32]) {
    let m = [[2.0f32; 4]; 3];
    out[0] = m[0][j];
}

fn tiles_match_the_host(stream: &cudajit::Stream) {
    let blocks = 40;
    let (x, out) = run_tiles(stream, blocks).unwrap();
    let mut expected = vec![0.0f32; 18 * blocks];
    tiles_on_host(&x, &mut expected);
    assert_eq!(expected[16], 44.0);
    for (k, (got, want)) in out.iter().zip(&expected).enumerate() {
        assert!(
            (got - want).abs() <= 1e-5 * (1.0 + want.abs()),
            "out[{k}]: {got} != {want}"
        );
    }
}

#[test]
fn arrays_of_arrays_run_on_the_simulator() {
    tiles_match_the_host(&cudajit::Stream::simulator());
}

#[test]
fn arrays_of_arrays_on_the_gpu() {
    let Ok(stream) = cudajit::Stream::gpu(0) else {
        eprintln!("skipped: no GPU");
        return;
    };
    tiles_match_the_host(&stream);
}

#[test]
fn each_index_of_an_array_of_arrays_is_checked_against_its_own_length() {
    let stream = cudajit::Stream::simulator();
    let mut out = stream.alloc_zeros::<f32>(1).unwrap();
    column_past_the_row::launch(&stream, LaunchConfig::new(1, 1), 3, &mut out).unwrap();
    assert_eq!(stream.clone_dtoh(&out).unwrap(), [2.0]);
    let error = column_past_the_row::launch(&stream, LaunchConfig::new(1, 1), 4, &mut out)
        .map(|_| stream.synchronize())
        .err()
        .map(|e| e.to_string())
        .or_else(|| stream.synchronize().err().map(|e| e.to_string()))
        .expect("m[0][4] of a [[f32; 4]; 3] is out of bounds");
    assert!(error.contains("the len is 4 but the index is 4"), "{error}");
}

#[test]
fn a_register_tile_of_arrays_of_arrays_has_no_local_memory() {
    use cudajit::codegen::compile::{linked_ptx, CompileOptions};
    if common::toolchain_or_skip().is_none() {
        return;
    }
    let options = CompileOptions {
        bounds_checks: false,
        ..CompileOptions::default()
    };
    let ptx = linked_ptx(
        register_tile::KERNEL.captured(),
        &cudajit::Specialization::default(),
        cudajit::Arch::SM_90,
        &options,
    )
    .unwrap();
    assert!(!ptx.contains(".local"), "local memory:\n{ptx}");
    assert!(!ptx.contains("call"), "a call left:\n{ptx}");
    // And the run-time-indexed kernel compiles too (its `m[i % 4][..]` is local memory).
    linked_ptx(
        tiles::KERNEL.captured(),
        &cudajit::Specialization::default(),
        cudajit::Arch::SM_90,
        &options,
    )
    .unwrap();
}
