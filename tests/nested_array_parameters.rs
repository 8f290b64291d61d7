//! Arrays of arrays crossing `#[device]` function boundaries, as Rust passes them: by
//! value (`m: [[f32; N]; N]`, a copy the callee may change), by reference (`&[[f32; 2]; 2]`,
//! `&mut [[f32; 2]; 2]`, written in place), returned (`-> [[f32; 2]; 2]`), and whole
//! arrays of arrays copied and assigned (`let c = m;`, `m = u;`), and as fields of
//! `DeviceCopy` structs (read through a slice, copied, written by element and by row); on
//! the simulator and the GPU against the same functions run on the host, and in the PTX
//! without local memory.

mod common;

use cudajit::prelude::*;

#[device]
fn trace<const N: usize>(m: [[f32; N]; N]) -> f32 {
    let mut t = 0.0f32;
    for k in 0..N {
        t += m[k][k];
    }
    t
}

#[device]
fn bump(m: &mut [[f32; 2]; 2], by: f32) {
    m[0][1] += by;
    let swapped = [m[1][1], m[1][0]];
    m[1] = swapped;
}

#[device]
fn transposed(mut m: [[f32; 2]; 2]) -> [[f32; 2]; 2] {
    let t = m[0][1];
    m[0][1] = m[1][0];
    m[1][0] = t;
    m
}

#[device]
fn reads(m: &[[f32; 2]; 2]) -> f32 {
    m[1][0] * m.len() as f32 + m[0].len() as f32
}

/// Every form above on one input; the caller's arrays change only where Rust says.
#[device]
fn combined(x: f32) -> f32 {
    let mut m = [[x, 2.0], [3.0, x * x]];
    let copy = m;
    bump(&mut m, 0.5);
    let t = transposed(m);
    let mut u = t;
    u[0][0] = -1.0;
    m = u;
    trace::<2>(m) + trace::<2>(copy) + t[0][1] + reads(&m) + copy[1][1] * 10.0
}

#[kernel]
fn nested_parameters(x: &[f32], y: &mut [f32]) {
    let i = global_index();
    if i < x.len() {
        y[i] = combined(x[i]);
    }
}

#[derive(Clone, Copy, Debug, DeviceCopy)]
#[repr(C)]
pub struct Tile {
    pub m: [[f32; 2]; 2],
    pub s: f32,
}

#[device]
fn tile_value(tiles: &[Tile], i: usize) -> f32 {
    let mut a = tiles[i];
    a.m[1][0] += 5.0;
    let r = a.m[1];
    a.m[0] = r;
    a.m[0][1] + a.m[1][0] * a.s + tiles[i].m[1][1] + r[0] + trace::<2>(a.m)
}

#[kernel]
fn tile_fields(tiles: &[Tile], y: &mut [f32]) {
    let i = global_index();
    if i < tiles.len() {
        y[i] = tile_value(tiles, i);
    }
}

fn nested_parameters_match_the_host(stream: &cudajit::Stream) {
    let tiles: Vec<Tile> = (0..16)
        .map(|k| Tile {
            m: [[k as f32, 1.0], [2.0, 3.0 + k as f32]],
            s: 0.5,
        })
        .collect();
    let dt = stream.clone_htod(&tiles).unwrap();
    let mut dy = stream.alloc_zeros::<f32>(tiles.len()).unwrap();
    tile_fields::launch(
        stream,
        LaunchConfig::for_elements(tiles.len()),
        &dt,
        &mut dy,
    )
    .unwrap();
    let y = stream.clone_dtoh(&dy).unwrap();
    for (i, v) in y.iter().enumerate() {
        assert_eq!(*v, tile_value(&tiles, i), "tile {i}");
    }

    let x: Vec<f32> = (0..64).map(|k| k as f32 * 0.25 - 3.0).collect();
    let dx = stream.clone_htod(&x).unwrap();
    let mut dy = stream.alloc_zeros::<f32>(x.len()).unwrap();
    nested_parameters::launch(stream, LaunchConfig::for_elements(x.len()), &dx, &mut dy).unwrap();
    let y = stream.clone_dtoh(&dy).unwrap();
    for (i, v) in x.iter().enumerate() {
        assert_eq!(y[i], combined(*v), "y[{i}]");
    }
}

#[test]
fn nested_array_parameters_run_on_the_simulator() {
    nested_parameters_match_the_host(&cudajit::Stream::simulator());
}

#[test]
fn nested_array_parameters_on_the_gpu() {
    let Ok(stream) = cudajit::Stream::gpu(0) else {
        eprintln!("skipped: no GPU");
        return;
    };
    nested_parameters_match_the_host(&stream);
}

/// Once the calls inline, every array is the caller's, indexed by constants: registers.
#[test]
fn nested_array_parameters_compile_without_local_memory() {
    let Some(ptx) = common::sm90_ptx_or_skip(nested_parameters::KERNEL.captured()) else {
        return;
    };
    assert!(!ptx.contains(".local"), "local memory:\n{ptx}");
    assert!(!ptx.contains("call.uni"), "a call left:\n{ptx}");
    let Some(ptx) = common::sm90_ptx_or_skip(tile_fields::KERNEL.captured()) else {
        return;
    };
    assert!(!ptx.contains(".local"), "local memory:\n{ptx}");
}
