//! A kernel of arrays of arrays as locals (`[[f32; 4]; 4]` register tiles, `m[i][j]`,
//! `.len()` of the array and of a row), with the host's run of the same code:
//! `tests/nested_arrays.rs` runs it on the simulator and the GPU, `tests/differential.rs`
//! compares the two.
#![allow(dead_code)]

use cudajit::prelude::*;
use cudajit::{Error, Stream};

use super::cases::{Output, Outputs, Tolerance, Values};

/// `c = a * b` of 4x4 tiles read from `x`, kept in registers, plus a run-time-indexed
/// read (local memory there, as in CUDA C++), written to `out[18 * i ..]`.
#[kernel]
pub fn tiles(x: &[f32], out: &mut [f32]) {
    let i = global_index();
    if 16 * (i + 2) <= x.len() {
        let mut a = [[0.0f32; 4]; 4];
        let mut b: [[f32; 4]; 4] = [[1.0; 4]; 4];
        for r in 0..a.len() {
            for c in 0..a[r].len() {
                a[r][c] = x[16 * i + 4 * r + c];
                b[r][c] += x[16 * (i + 1) + 4 * c + r];
            }
        }
        let mut m = [[0.0f32; 4]; 4];
        for r in 0..4 {
            for c in 0..4 {
                for k in 0..4 {
                    m[r][c] += a[r][k] * b[k][c];
                }
            }
        }
        m[3][0] -= 1.5;
        for r in 0..4 {
            for c in 0..4 {
                out[18 * i + 4 * r + c] = m[r][c];
            }
        }
        out[18 * i + 16] = (m.len() * 10 + m[0].len()) as f32;
        out[18 * i + 17] = m[i % 4][(i / 4) % 4];
    }
}

pub fn tiles_on_host(x: &[f32], out: &mut [f32]) {
    for i in 0..out.len() / 18 {
        let mut a = [[0.0f32; 4]; 4];
        let mut b: [[f32; 4]; 4] = [[1.0; 4]; 4];
        for r in 0..4 {
            for c in 0..4 {
                a[r][c] = x[16 * i + 4 * r + c];
                b[r][c] += x[16 * (i + 1) + 4 * c + r];
            }
        }
        let mut m = [[0.0f32; 4]; 4];
        for r in 0..4 {
            for c in 0..4 {
                for k in 0..4 {
                    m[r][c] += a[r][k] * b[k][c];
                }
            }
        }
        m[3][0] -= 1.5;
        for r in 0..4 {
            for c in 0..4 {
                out[18 * i + 4 * r + c] = m[r][c];
            }
        }
        out[18 * i + 16] = (m.len() * 10 + m[0].len()) as f32;
        out[18 * i + 17] = m[i % 4][(i / 4) % 4];
    }
}

pub fn x_values(n: usize) -> Vec<f32> {
    (0..n).map(|k| ((k * 7) % 13) as f32 * 0.25 - 1.0).collect()
}

/// `tiles` over `blocks` tiles: the input and the output.
pub fn run_tiles(stream: &Stream, blocks: usize) -> Result<(Vec<f32>, Vec<f32>), Error> {
    let x = x_values(16 * (blocks + 1));
    let dx = stream.clone_htod(&x)?;
    let mut dout = stream.alloc_zeros::<f32>(18 * blocks)?;
    tiles::launch(stream, LaunchConfig::for_elements(blocks), &dx, &mut dout)?;
    Ok((x, stream.clone_dtoh(&dout)?))
}

/// The differential case: exact (no libdevice; no contraction under `CUDAJIT_FMA=0`).
pub fn nested_arrays_case(stream: &Stream) -> Result<Outputs, Error> {
    let (_, out) = run_tiles(stream, 40)?;
    Ok(vec![Output {
        name: "4x4 tiles of [[f32; 4]; 4]".into(),
        values: Values::F32(out),
        tolerance: Tolerance::Exact,
    }])
}
