//! The kernel language a Rust programmer expects, on a GPU: every kernel of
//! `tests/common/language.rs` against its CPU reference. Skipped, saying why, without a
//! GPU. (`tests/sim_language.rs` runs the same kernels on the simulator.)

mod common;

use common::cases::{self, Values};
use common::language::*;
use cudajit::Stream;

fn gpu() -> Option<Stream> {
    common::gpu_or_skip()?;
    Some(Stream::gpu(0).expect("GPU 0"))
}

/// `got` within a relative `tolerance` of `expected`, element by element (the GPU may
/// contract `a * b + c` into an FMA).
fn close<T: Copy + Into<f64>>(got: &[T], expected: &[T], tolerance: f64, what: &str) {
    assert_eq!(got.len(), expected.len(), "{what}: lengths");
    for (i, (&g, &e)) in got.iter().zip(expected).enumerate() {
        let (g, e): (f64, f64) = (g.into(), e.into());
        let scale = 1f64.max(g.abs()).max(e.abs());
        assert!(
            g == e || (g.is_nan() && e.is_nan()) || (g - e).abs() <= tolerance * scale,
            "{what}[{i}]: {g} on the GPU, {e} on the CPU"
        );
    }
}

#[test]
fn a_module_level_const_sizes_a_shared_tile() {
    let Some(stream) = gpu() else {
        return;
    };
    let outputs = cases::transpose_const_tile_case(&stream).unwrap();
    let (rows, cols) = cases::CONST_TILE_MATRIX;
    let input: Vec<f32> = (0..rows * cols).map(|i| i as f32 * 0.5 - 3.0).collect();
    assert_eq!(
        outputs[0].values,
        Values::F32(transpose_ref(rows, cols, &input))
    );
}

#[test]
fn module_body_and_std_constants_have_rusts_values() {
    let Some(stream) = gpu() else {
        return;
    };
    let outputs = cases::named_constants_case(&stream).unwrap();
    let (x, ints) = named_constants_inputs();
    let (floats, wide, shifted, flags) = named_constants_ref(&x, &ints);
    let (Values::F32(got_floats), Values::F64(got_wide)) = (&outputs[0].values, &outputs[1].values)
    else {
        panic!("unexpected output types: {outputs:?}");
    };
    close(got_floats, &floats, 1e-6, "floats");
    close(got_wide, &wide, 1e-15, "wide");
    assert_eq!(outputs[2].values, Values::I32(shifted));
    assert_eq!(outputs[3].values, Values::U32(flags));
}
