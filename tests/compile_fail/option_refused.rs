use cudajit::prelude::*;

// An `Option` holds a value, not a slice.
#[device]
fn window(x: &[f32], n: usize) -> Option<&[f32]> {
    if n <= x.len() {
        Some(x)
    } else {
        None
    }
}

// `?` applies in device functions returning `Option`, not in kernels.
#[device]
fn half(x: u32) -> Option<u32> {
    if x % 2 == 0 {
        Some(x / 2)
    } else {
        None
    }
}

#[kernel]
fn halves(x: &[u32], y: &mut [u32]) {
    let i = global_index();
    let h = half(x[i])?;
    y[i] = h;
}

// A kernel cannot take an `Option`.
#[kernel]
fn maybe(o: Option<u32>, y: &mut [u32]) {
    y[0] = o.unwrap_or(0);
}

fn main() {}
