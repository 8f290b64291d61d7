//! Struct operators beyond by-value methods (`tests/common/struct_operators.rs`): a scalar
//! on the left (`2.0 * v`), `==`/`!=` through `#[device] impl PartialEq`, `v[i]` through
//! `Index`/`IndexMut` (a `match` over fields and an array field), and slices of structs as
//! `#[device]` parameters; on the simulator and the GPU against the host's run of the same
//! impls, and in the PTX: inlined, no call, no local memory.

mod common;

use common::struct_operators::*;

/// Runs the operators on `stream` against the host: bit for bit, or, with `fma`, within
/// a relative 1e-6 (a GPU contracts `a * b + c` into one FMA, which rounds once where the
/// host rounds twice; the differential test runs the same case with `CUDAJIT_FMA=0`
/// bit for bit).
fn operators_match_the_host(stream: &cudajit::Stream, fma: bool) {
    let n = 257;
    let out = run_struct_operators(stream, n).unwrap();
    let (xs, cells) = inputs(n);
    let mut expected = vec![0.0f32; PER_ELEMENT * n];
    struct_operators_on_host(&xs, &cells, &mut expected);
    // The `==` outputs are not all equal: the inputs exercise both answers.
    assert!((0..n - 1).any(|i| expected[PER_ELEMENT * i + 3] == 1.0));
    assert!((0..n - 1).any(|i| expected[PER_ELEMENT * i + 3] == 0.0));
    assert!((0..n - 1).any(|i| expected[PER_ELEMENT * i + 5] == 1.0));
    for (k, (got, want)) in out.iter().zip(&expected).enumerate() {
        let close = fma && (got - want).abs() <= 1e-6 * want.abs().max(1.0);
        assert!(
            got.to_bits() == want.to_bits() || close,
            "out[{k}] (element {}, output {}): {got} != {want}",
            k / PER_ELEMENT,
            k % PER_ELEMENT
        );
    }
}

fn body_slices_match_the_host(stream: &cudajit::Stream) {
    let n = 100;
    let (moved, out) = run_body_slices(stream, n).unwrap();
    let mut bodies_host = bodies(n);
    let mut out_host = vec![0.0f32; 2 * n];
    body_slices_on_host(0.25, &mut bodies_host, &mut out_host);
    assert_eq!(moved, bodies_host);
    assert_eq!(out, out_host);
}

#[test]
fn struct_operators_run_on_the_simulator() {
    operators_match_the_host(&cudajit::Stream::simulator(), false);
}

#[test]
fn struct_operators_on_the_gpu() {
    let Ok(stream) = cudajit::Stream::gpu(0) else {
        eprintln!("skipped: no GPU");
        return;
    };
    // Bit for bit unless the GPU may contract into FMAs (`CUDAJIT_FMA=0` turns that off).
    let fma = std::env::var("CUDAJIT_FMA").as_deref() != Ok("0");
    operators_match_the_host(&stream, fma);
}

#[test]
fn slices_of_structs_as_device_parameters_run_on_the_simulator() {
    body_slices_match_the_host(&cudajit::Stream::simulator());
}

#[test]
fn slices_of_structs_as_device_parameters_on_the_gpu() {
    let Ok(stream) = cudajit::Stream::gpu(0) else {
        eprintln!("skipped: no GPU");
        return;
    };
    body_slices_match_the_host(&stream);
}

/// `Index`/`IndexMut` inline to the places they return, as nvcc inlines a `float&
/// operator[]`: `row[k]` of the array field in a loop unrolled to constant indices stays in
/// registers; `b[i % 3]` (a run-time index) is a `match` of the fields, selects and
/// branches, not an array in local memory. Nothing is called.
#[test]
fn indexing_operators_inline_without_local_memory() {
    use cudajit::codegen::compile::{linked_ptx, CompileOptions};
    if common::toolchain_or_skip().is_none() {
        return;
    }
    let options = CompileOptions {
        bounds_checks: false,
        ..CompileOptions::default()
    };
    for kernel in [&struct_operators::KERNEL, &body_slices::KERNEL] {
        let ptx = linked_ptx(
            kernel.captured(),
            &cudajit::Specialization::default(),
            cudajit::Arch::SM_90,
            &options,
        )
        .unwrap_or_else(|e| panic!("{}: {e}", kernel.name()));
        assert!(
            !ptx.contains(".local"),
            "{}: local memory:\n{ptx}",
            kernel.name()
        );
        assert!(
            !ptx.contains("call"),
            "{}: a call left:\n{ptx}",
            kernel.name()
        );
    }
}

/// `==` of a struct whose `PartialEq` is host code (a derive): an error when the kernel is
/// compiled, naming the `#[device]` impl to write.
#[cudajit::kernel]
fn compares_derived(bodies: &[Body], out: &mut [u32]) {
    let i = cudajit::prelude::global_index();
    if i + 1 < bodies.len() && bodies[i] == bodies[i + 1] {
        out[i] = 1;
    }
}

#[test]
fn comparing_a_struct_without_a_device_partial_eq_names_the_impl() {
    let stream = cudajit::Stream::simulator();
    let bodies = stream.clone_htod(&bodies(4)).unwrap();
    let mut out = stream.alloc_zeros::<u32>(4).unwrap();
    let error = compares_derived::launch(
        &stream,
        cudajit::prelude::LaunchConfig::for_elements(4),
        &bodies,
        &mut out,
    )
    .unwrap_err()
    .to_string();
    assert!(
        error.contains("`Body` has no `#[device]` impl of `PartialEq`: add `#[device]` to `impl PartialEq for Body"),
        "{error}"
    );
}

/// An `index` body with a statement: not one place expression, so it cannot be inlined.
#[derive(Clone, Copy, Debug, cudajit::DeviceCopy)]
#[repr(C)]
pub struct Shifted {
    pub data: [f32; 4],
}

#[cudajit::device]
impl std::ops::Index<usize> for Shifted {
    type Output = f32;
    fn index(&self, i: usize) -> &f32 {
        let k = (i + 1) % 4;
        &self.data[k]
    }
}

#[cudajit::device]
fn twice(k: usize) -> usize {
    2 * k
}

#[cudajit::kernel]
fn index_with_statements(out: &mut [f32]) {
    let s = Shifted { data: [1.0; 4] };
    out[0] = s[1];
}

#[cudajit::kernel]
fn index_by_a_call(xs: &[V3], out: &mut [f32]) {
    out[0] = xs[0][twice(1) % 3];
}

fn compile_error(launch: impl FnOnce(&cudajit::Stream) -> Result<(), cudajit::Error>) -> String {
    launch(&cudajit::Stream::simulator())
        .unwrap_err()
        .to_string()
}

#[test]
fn index_bodies_and_indices_that_cannot_be_inlined_are_named() {
    let error = compile_error(|stream| {
        let mut out = stream.alloc_zeros::<f32>(1)?;
        index_with_statements::launch(
            stream,
            cudajit::prelude::LaunchConfig::for_elements(1),
            &mut out,
        )
    });
    assert!(
        error.contains("is inlined where `Shifted` is indexed, so its body is one place expression: `&self.field`, `&self.array[i]`"),
        "{error}"
    );
    let error = compile_error(|stream| {
        let xs = stream.clone_htod(&inputs(2).0)?;
        let mut out = stream.alloc_zeros::<f32>(1)?;
        index_by_a_call::launch(
            stream,
            cudajit::prelude::LaunchConfig::for_elements(1),
            &xs,
            &mut out,
        )
    });
    assert!(
        error.contains("so it cannot call a function: bind it first (`let k = ..; v[k]`)"),
        "{error}"
    );
}
