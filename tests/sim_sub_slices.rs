//! Sub-slices (`&x[a..b]`, `&mut y[a..]`, `&x[..b]`) passed to `#[device]` functions, on
//! the CPU simulator: their values, and a range past the end or reversed reported with
//! the range. No GPU needed.

use cudajit::prelude::*;
use cudajit::{Error, SimError, SimStream};

/// The sum of a slice: what a sub-slice is handed to.
#[device]
fn sum(values: &[f32]) -> f32 {
    let mut total = 0.0f32;
    for i in 0..values.len() {
        total += values[i];
    }
    total
}

/// Writes `value` to every element of `out`.
#[device]
fn fill(out: &mut [f32], value: f32) {
    for i in 0..out.len() {
        out[i] = value;
    }
}

/// Thread `t` sums the window `x[t..t + width]`, then the first and last halves of it
/// (`&x[..]`/`&x[a..]` forms), and fills the tail of its row of `rows` from `width`.
#[kernel]
fn windows(x: &[f32], width: usize, sums: &mut [f32], rows: &mut [f32]) {
    let t = thread_idx().x as usize;
    let row = rows.len() / block_dim().x as usize;
    if t + width <= x.len() {
        let head = sum(&x[t..t + width / 2]);
        let tail = sum(&x[t + width / 2..t + width]);
        sums[t] = head + tail + sum(&x[..0]);
    }
    fill(&mut rows[t * row + width..(t + 1) * row], t as f32);
    fill(&mut rows[t * row..t * row + width], sum(&x[x.len() - 1..]));
}

/// `&x[start..end]` with the host's bounds.
#[kernel]
fn window_of(x: &[f32], start: usize, end: usize, out: &mut [f32]) {
    if thread_idx().x == 0 {
        out[0] = sum(&x[start..end]);
    }
}

/// `windows` on `stream`, every output against the host's slices.
fn windows_match_the_host(stream: &cudajit::Stream) {
    let x: Vec<f32> = (0..40).map(|i| i as f32 * 0.5).collect();
    let width = 6usize;
    let threads = 32usize;
    let row = 10usize;
    let dx = stream.clone_htod(&x).unwrap();
    let mut sums = stream.alloc_zeros::<f32>(threads).unwrap();
    let mut rows = stream.alloc_zeros::<f32>(threads * row).unwrap();
    windows::launch(
        stream,
        LaunchConfig::new(1, threads as u32),
        &dx,
        width,
        &mut sums,
        &mut rows,
    )
    .unwrap();
    let expected: Vec<f32> = (0..threads).map(|t| x[t..t + width].iter().sum()).collect();
    assert_eq!(stream.clone_dtoh(&sums).unwrap(), expected);
    let mut expected_rows = vec![0.0f32; threads * row];
    for t in 0..threads {
        expected_rows[t * row..t * row + width].fill(x[x.len() - 1]);
        expected_rows[t * row + width..(t + 1) * row].fill(t as f32);
    }
    assert_eq!(stream.clone_dtoh(&rows).unwrap(), expected_rows);
}

#[test]
fn sub_slices_passed_to_device_functions_view_the_right_elements() {
    windows_match_the_host(&cudajit::Stream::simulator());
}

#[test]
fn sub_slices_on_the_gpu() {
    let Ok(stream) = cudajit::Stream::gpu(0) else {
        eprintln!("skipped: no GPU");
        return;
    };
    windows_match_the_host(&stream);
}

fn window_error(start: usize, end: usize) -> (u64, u64, u64) {
    let stream = SimStream::new();
    let dx = stream.clone_htod(&[1.0f32; 8]).unwrap();
    let mut out = stream.alloc_zeros::<f32>(1).unwrap();
    let error = window_of::launch(&stream, LaunchConfig::new(1, 32), &dx, start, end, &mut out)
        .unwrap_err();
    let Error::Simulator(SimError::RangeOutOfBounds {
        start, end, len, ..
    }) = &error
    else {
        panic!("expected a range out of bounds, got {error}");
    };
    eprintln!("reported: {error}");
    (*start, *end, *len)
}

#[test]
fn a_range_past_the_end_or_reversed_is_reported() {
    assert_eq!(window_error(2, 9), (2, 9, 8));
    assert_eq!(window_error(5, 3), (5, 3, 8));
    let stream = SimStream::new();
    let dx = stream.clone_htod(&[1.0f32; 8]).unwrap();
    let mut out = stream.alloc_zeros::<f32>(1).unwrap();
    window_of::launch(&stream, LaunchConfig::new(1, 32), &dx, 8, 8, &mut out).unwrap();
    assert_eq!(stream.clone_dtoh(&out).unwrap(), vec![0.0]);
}

/// The NVVM writer's side: both kernels compile to sm_90 PTX with and without bounds checks
/// (the range check's message and trap); without them (release builds) no local memory and
/// no call is left.
#[test]
fn sub_slices_compile_to_pointer_arithmetic() {
    use cudajit::codegen::compile::{linked_ptx, CompileOptions};
    if cudajit::codegen::toolchain::Toolchain::global().is_err()
        && std::env::var("CUDAJIT_REQUIRE_TOOLCHAIN").as_deref() != Ok("1")
    {
        eprintln!("skipped: no NVIDIA toolchain (run scripts/test.sh to install it)");
        return;
    }
    for kernel in [&windows::KERNEL, &window_of::KERNEL] {
        for bounds_checks in [false, true] {
            let options = CompileOptions {
                bounds_checks,
                ..CompileOptions::default()
            };
            let ptx = linked_ptx(
                kernel.captured(),
                &cudajit::Specialization::default(),
                cudajit::Arch::SM_90,
                &options,
            )
            .unwrap_or_else(|e| panic!("{}: {e}", kernel.name()));
            if bounds_checks {
                // The failure message goes through `vprintf`, whose arguments live in local
                // memory, as every bounds check's does.
                let ir = cudajit::codegen::compile::nvvm_ir_with(
                    kernel.captured(),
                    &cudajit::Specialization::default(),
                    &options,
                )
                .unwrap_or_else(|e| panic!("{}: {e}", kernel.name()));
                assert!(
                    ir.contains("range out of bounds"),
                    "{}: no range check in\n{ir}",
                    kernel.name()
                );
            } else {
                assert!(
                    !ptx.contains(".local"),
                    "{}: local memory:\n{ptx}",
                    kernel.name()
                );
                assert!(
                    !ptx.contains("call.uni"),
                    "{}: a call left:\n{ptx}",
                    kernel.name()
                );
            }
        }
    }
}
