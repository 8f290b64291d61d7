//! The kernel language a Rust programmer expects, on a GPU: every kernel of
//! `tests/common/language.rs` against its CPU reference. Skipped, saying why, without a
//! GPU. (`tests/sim_language.rs` runs the same kernels on the simulator.)

mod common;

use common::cases::{self, Values};
use common::iteration::*;
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

#[test]
fn array_literals_patterns_and_loops_over_arrays() {
    let Some(stream) = gpu() else {
        return;
    };
    let outputs = cases::array_forms_case(&stream).unwrap();
    let x = cases::iteration_inputs(cases::ARRAY_FORMS_LEN, 5);
    let (filtered, totals, ends) = array_forms_ref(&x);
    let (Values::F32(got_filtered), Values::F32(got_totals)) =
        (&outputs[0].values, &outputs[1].values)
    else {
        panic!("unexpected output types: {outputs:?}");
    };
    close(got_filtered, &filtered, 1e-6, "filtered");
    close(got_totals, &totals, 1e-6, "totals");
    assert_eq!(outputs[2].values, Values::I32(ends));
}

#[test]
fn iterator_loops_visit_what_rusts_iterators_visit() {
    let Some(stream) = gpu() else {
        return;
    };
    let outputs = cases::iterator_loops_case(&stream).unwrap();
    let (na, nb, nout) = cases::ITERATOR_LENGTHS;
    let a = cases::iteration_inputs(na, 11);
    let b = cases::iteration_inputs(nb, 12);
    let (out, hashes) = iterator_loops_ref(&a, &b, nout);
    let Values::F32(got_out) = &outputs[0].values else {
        panic!("unexpected output types: {outputs:?}");
    };
    close(got_out, &out, 1e-6, "out");
    assert_eq!(outputs[1].values, Values::U32(hashes));
}

#[test]
fn get_with_if_let_while_let_let_else_and_loop_values() {
    let Some(stream) = gpu() else {
        return;
    };
    let outputs = cases::option_forms_case(&stream).unwrap();
    let (nx, ny) = cases::OPTION_LENGTHS;
    let x = cases::iteration_inputs(nx, 21);
    let (y, runs, found) = option_forms_ref(&x, ny);
    assert_eq!(outputs[0].values, Values::F32(y));
    assert_eq!(outputs[1].values, Values::U32(runs));
    assert_eq!(outputs[2].values, Values::U32(found));
}
