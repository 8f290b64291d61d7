use cudajit::prelude::*;

// A reference to an array of a const generic length.
#[device]
fn clear<const N: usize>(acc: &mut [f32; N]) {
    for k in 0..N {
        acc[k] = 0.0;
    }
}

// Kernels take slices, not arrays.
#[kernel]
fn takes_array(weights: [f32; 4], out: &mut [f32]) {
    out[0] = weights[0];
}

fn main() {}
