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

#[test]
fn sub_slices_passed_to_device_functions_view_the_right_elements() {
    let stream = SimStream::new();
    let x: Vec<f32> = (0..40).map(|i| i as f32 * 0.5).collect();
    let width = 6usize;
    let threads = 32usize;
    let row = 10usize;
    let dx = stream.clone_htod(&x).unwrap();
    let mut sums = stream.alloc_zeros::<f32>(threads).unwrap();
    let mut rows = stream.alloc_zeros::<f32>(threads * row).unwrap();
    windows::launch(
        &stream,
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
