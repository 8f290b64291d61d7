//! Kernels written the way a Rust programmer writes them first: module-level and body
//! `const`s, the standard library's constants (`u32::MAX`, `f32::EPSILON`,
//! `core::f32::consts::PI`). Each has a CPU reference here; `tests/sim_language.rs` runs
//! them on the simulator, `tests/gpu_language.rs` on a GPU, and `cases.rs` lists them for
//! the differential test.
#![allow(dead_code)]

use cudajit::prelude::*;

/// The tile edge of [`transpose_const_tile`], a module-level constant.
pub const TILE: usize = 16;

/// The factor of [`named_constants`].
const SCALE: f32 = 0.5;

/// A `static` scalar, read like a constant.
static GAIN: f64 = 2.0;

/// Constants in a module of their own, named by path.
pub mod limits {
    pub const BIAS: i32 = -7;
}

/// Transpose through a padded shared-memory tile whose size a module-level `const`
/// gives: `shared_array::<f32>(TILE * (TILE + 1))`, as in CUDA C++'s
/// `__shared__ float tile[TILE][TILE + 1]`.
#[kernel]
pub fn transpose_const_tile(rows: u32, cols: u32, input: &[f32], output: &mut [f32]) {
    let tile = shared_array::<f32>(TILE * (TILE + 1));
    let t = TILE as u32;
    let tx = thread_idx().x;
    let ty = thread_idx().y;
    let c = block_idx().x * t + tx;
    let r = block_idx().y * t + ty;
    if r < rows && c < cols {
        tile[ty as usize * (TILE + 1) + tx as usize] = input[(r * cols + c) as usize];
    }
    sync_threads();
    let oc = block_idx().y * t + tx;
    let or = block_idx().x * t + ty;
    if or < cols && oc < rows {
        output[(or * rows + oc) as usize] = tile[tx as usize * (TILE + 1) + ty as usize];
    }
}

/// The transpose of a `rows` x `cols` matrix, on the CPU.
pub fn transpose_ref(rows: usize, cols: usize, input: &[f32]) -> Vec<f32> {
    let mut output = vec![0.0; rows * cols];
    for r in 0..rows {
        for c in 0..cols {
            output[c * rows + r] = input[r * cols + c];
        }
    }
    output
}

/// A device function naming `f64` constants of `core`.
#[device]
pub fn scaled_ln2(v: f64) -> f64 {
    v * core::f64::consts::LN_2 + f64::EPSILON
}

/// Constants of every kind in one kernel: a module-level `f32` and `static`, a path into
/// a module, `const` and `static` items of the body (one computed from another
/// constant), `std`/`core` constants of `f32`, `i32`, `u32`, a loop bound, and a device
/// function's own.
#[kernel]
pub fn named_constants(
    x: &[f32],
    ints: &[i32],
    floats: &mut [f32],
    wide: &mut [f64],
    shifted: &mut [i32],
    flags: &mut [u32],
) {
    const STEPS: u32 = 3;
    const HALF_PI: f32 = core::f32::consts::PI / 2.0;
    static BODY_OFFSET: f64 = 0.125;
    let i = global_index();
    if i < x.len() {
        let mut v = x[i] * SCALE;
        for _step in 0..STEPS {
            v -= std::f32::consts::E;
        }
        floats[i] = v + HALF_PI;
        wide[i] = scaled_ln2(x[i] as f64) * GAIN + BODY_OFFSET;
        let n = ints[i];
        shifted[i] = if n == i32::MIN {
            i32::MAX
        } else {
            n + limits::BIAS
        };
        let f = x[i];
        flags[i] = (f < f32::INFINITY) as u32
            + 2 * (f > f32::NEG_INFINITY) as u32
            + 4 * (f.abs() < f32::EPSILON) as u32
            + 8 * (f == f32::MAX) as u32
            + 16 * (f == f32::MIN) as u32
            + 32 * (n == i32::MAX) as u32
            + 64 * (u32::MAX - (n as u32) < 8) as u32
            + 128 * (u8::MAX as u32 + u16::MAX as u32 == 65790) as u32;
    }
}

/// The inputs of [`named_constants`]: ordinary values and every edge its flags test.
pub fn named_constants_inputs() -> (Vec<f32>, Vec<i32>) {
    let mut x: Vec<f32> = (0..200).map(|i| i as f32 * 0.37 - 30.0).collect();
    x.extend([
        0.0,
        1e-9,
        f32::MAX,
        f32::MIN,
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::EPSILON,
        -0.0,
    ]);
    let mut ints: Vec<i32> = (0..x.len() as i32).map(|i| i * 1_000_003 - 77).collect();
    ints[0] = i32::MIN;
    ints[1] = i32::MAX;
    ints[2] = -1;
    ints[3] = -5;
    (x, ints)
}

/// What [`named_constants`] writes, on the CPU: `(floats, wide, shifted, flags)`.
pub fn named_constants_ref(x: &[f32], ints: &[i32]) -> (Vec<f32>, Vec<f64>, Vec<i32>, Vec<u32>) {
    let mut out = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for (&f, &n) in x.iter().zip(ints) {
        let mut v = f * SCALE;
        for _ in 0..3 {
            v -= std::f32::consts::E;
        }
        out.0.push(v + core::f32::consts::PI / 2.0);
        out.1.push(scaled_ln2(f as f64) * GAIN + 0.125);
        out.2.push(if n == i32::MIN {
            i32::MAX
        } else {
            n + limits::BIAS
        });
        out.3.push(
            (f < f32::INFINITY) as u32
                + 2 * (f > f32::NEG_INFINITY) as u32
                + 4 * (f.abs() < f32::EPSILON) as u32
                + 8 * (f == f32::MAX) as u32
                + 16 * (f == f32::MIN) as u32
                + 32 * (n == i32::MAX) as u32
                + 64 * (u32::MAX - (n as u32) < 8) as u32
                + 128,
        );
    }
    out
}
