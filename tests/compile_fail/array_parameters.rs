use cudajit::prelude::*;

// Kernels take slices, not arrays.
#[kernel]
fn takes_array(weights: [f32; 4], out: &mut [f32]) {
    out[0] = weights[0];
}

fn main() {}
