//! Sub-slices bound to names (`let row = &x[a..b];`, views of views) and
//! `split_at`/`split_at_mut`: indexed, measured, written, looped over and passed to
//! `#[device]` functions, on the simulator (always) and on a GPU (skipped without one);
//! ranges past the end reported; the PTX is pointer arithmetic (no local memory, no calls).

mod common;

use cudajit::codegen::compile::{linked_ptx, CompileOptions};
use cudajit::prelude::*;
use cudajit::{Arch, Error, SimError, SimStream, Specialization, Stream};

#[device]
fn sum(values: &[f32]) -> f32 {
    let mut total = 0.0f32;
    for i in 0..values.len() {
        total += values[i];
    }
    total
}

#[device]
fn fill(out: &mut [f32], value: f32) {
    for i in 0..out.len() {
        out[i] = value;
    }
}

/// Thread `t` views row `t` of `x` (rows of `width`), and a view of that view without
/// its first element; it writes statistics of both into `stats[4t..4t + 4]` through a
/// mutable view.
#[kernel]
fn row_stats(x: &[f32], width: usize, stats: &mut [f32]) {
    let t = thread_idx().x as usize;
    let row = &x[t * width..(t + 1) * width];
    let tail = &row[1..];
    let out = &mut stats[4 * t..];
    let mut largest = row[0];
    for v in row.iter() {
        largest = largest.max(*v);
    }
    out[0] = sum(row);
    out[1] = sum(tail) + tail.len() as f32 * 1000.0;
    out[2] = largest;
    out[3] = tail[tail.len() - 1] - row[0];
}

/// `split_at_mut` of an output and `split_at` of an input: the low half doubles `x`'s
/// low half, the high half is filled by a device function, and the split of a shared
/// array carries values between the halves of the block.
#[kernel]
fn halves(x: &[f32], mid: usize, y: &mut [f32], moved: &mut [f32]) {
    let t = thread_idx().x as usize;
    let (x_lo, x_hi) = x.split_at(mid);
    let (lo, hi) = y.split_at_mut(mid);
    if t < lo.len() {
        lo[t] = 2.0 * x_lo[t];
    }
    if t == 0 {
        fill(hi, x_hi[0] + x_hi.len() as f32);
    }
    let tile = shared_array::<f32>(64);
    let (left, right) = tile.split_at_mut(32);
    if t < 32 {
        left[t] = t as f32;
    } else {
        right[t - 32] = 100.0 + t as f32;
    }
    sync_threads();
    // Each thread reads the other half's element.
    moved[t] = if t < 32 { right[t] } else { left[t - 32] };
}

/// `&x[start..end]` bound to a name, with the host's bounds.
#[kernel]
fn bound_window(x: &[f32], start: usize, end: usize, out: &mut [f32]) {
    let window = &x[start..end];
    if thread_idx().x == 0 {
        out[0] = sum(window);
    }
}

/// `split_at_mut(mid)` with the host's `mid`.
#[kernel]
fn split_by(y: &mut [f32], mid: usize) {
    let (lo, hi) = y.split_at_mut(mid);
    if thread_idx().x == 0 {
        lo[0] = hi.len() as f32;
    }
}

fn check_row_stats(stream: &Stream) {
    let (rows, width) = (16usize, 9usize);
    let x: Vec<f32> = (0..rows * width).map(|i| ((i * 7) % 23) as f32).collect();
    let dx = stream.clone_htod(&x).unwrap();
    let mut stats = stream.alloc_zeros::<f32>(4 * rows).unwrap();
    row_stats::launch(
        stream,
        LaunchConfig::new(1, rows as u32),
        &dx,
        width,
        &mut stats,
    )
    .unwrap();
    let mut expected = Vec::new();
    for row in x.chunks(width) {
        let tail = &row[1..];
        expected.push(row.iter().sum::<f32>());
        expected.push(tail.iter().sum::<f32>() + tail.len() as f32 * 1000.0);
        expected.push(row.iter().copied().fold(row[0], f32::max));
        expected.push(tail[tail.len() - 1] - row[0]);
    }
    assert_eq!(stream.clone_dtoh(&stats).unwrap(), expected);
}

fn check_halves(stream: &Stream) {
    let (n, mid) = (80usize, 50usize);
    let x: Vec<f32> = (0..n).map(|i| i as f32 * 0.5).collect();
    let dx = stream.clone_htod(&x).unwrap();
    let mut y = stream.alloc_zeros::<f32>(n).unwrap();
    let mut moved = stream.alloc_zeros::<f32>(64).unwrap();
    halves::launch(
        stream,
        LaunchConfig::new(1, 64),
        &dx,
        mid,
        &mut y,
        &mut moved,
    )
    .unwrap();
    let mut expected: Vec<f32> = x[..mid].iter().map(|v| 2.0 * v).collect();
    expected.resize(n, x[mid] + (n - mid) as f32);
    assert_eq!(stream.clone_dtoh(&y).unwrap(), expected);
    let expected_moved: Vec<f32> = (0..64)
        .map(|t| {
            if t < 32 {
                100.0 + (t + 32) as f32
            } else {
                (t - 32) as f32
            }
        })
        .collect();
    assert_eq!(stream.clone_dtoh(&moved).unwrap(), expected_moved);
}

#[test]
fn bound_sub_slices_on_the_simulator() {
    check_row_stats(&Stream::simulator());
}

#[test]
fn split_at_on_the_simulator() {
    check_halves(&Stream::simulator());
}

#[test]
fn bound_sub_slices_and_split_at_on_the_gpu() {
    let Some(context) = common::gpu_or_skip() else {
        return;
    };
    let stream = Stream::from_cuda(context.default_stream());
    check_row_stats(&stream);
    check_halves(&stream);
}

fn range_error(error: Error) -> (u64, u64, u64) {
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
fn a_bound_range_past_the_end_is_reported_with_the_range() {
    let stream = SimStream::new();
    let dx = stream.clone_htod(&[1.0f32; 8]).unwrap();
    let mut out = stream.alloc_zeros::<f32>(1).unwrap();
    let config = LaunchConfig::new(1, 32);
    bound_window::launch(&stream, config, &dx, 2, 8, &mut out).unwrap();
    assert_eq!(stream.clone_dtoh(&out).unwrap(), [6.0]);
    let error = bound_window::launch(&stream, config, &dx, 3, 9, &mut out).unwrap_err();
    assert_eq!(range_error(error), (3, 9, 8));
    let error = bound_window::launch(&stream, config, &dx, 5, 4, &mut out).unwrap_err();
    assert_eq!(range_error(error), (5, 4, 8));
}

#[test]
fn split_at_past_the_end_is_reported() {
    let stream = SimStream::new();
    let mut y = stream.alloc_zeros::<f32>(8).unwrap();
    split_by::launch(&stream, LaunchConfig::new(1, 32), &mut y, 8).unwrap();
    assert_eq!(stream.clone_dtoh(&y).unwrap()[0], 0.0);
    split_by::launch(&stream, LaunchConfig::new(1, 32), &mut y, 3).unwrap();
    assert_eq!(stream.clone_dtoh(&y).unwrap()[0], 5.0);
    let error = split_by::launch(&stream, LaunchConfig::new(1, 32), &mut y, 9).unwrap_err();
    assert_eq!(range_error(error), (0, 9, 8));
}

#[test]
fn bound_sub_slices_compile_to_pointer_arithmetic() {
    if common::toolchain_or_skip().is_none() {
        return;
    }
    let spec = Specialization {
        types: Vec::new(),
        structs: Vec::new(),
        consts: Vec::new(),
    };
    for kernel in [row_stats::KERNEL.captured(), halves::KERNEL.captured()] {
        let ptx =
            linked_ptx(kernel, &spec, Arch::SM_90, &CompileOptions::default()).expect("linking");
        assert!(!ptx.contains(".local"), "local memory:\n{ptx}");
        assert!(!ptx.contains("call"), "a call:\n{ptx}");
        // With checks on, the range checks compile too.
        let checked = CompileOptions {
            bounds_checks: true,
            ..CompileOptions::default()
        };
        let ptx = linked_ptx(kernel, &spec, Arch::SM_90, &checked).expect("linking");
        assert!(ptx.contains("__assertfail"), "{ptx}");
    }
}
