use cudajit::prelude::*;

// An array of arrays as a device function's parameter: locals only for now.
#[device]
fn trace(m: [[f32; 2]; 2]) -> f32 {
    m[0][0] + m[1][1]
}

#[kernel]
fn cube(y: &mut [f32]) {
    // Three levels.
    let c: [[[f32; 2]; 2]; 2] = [[[0.0; 2]; 2]; 2];
    y[0] = c[0][0][0];
}

fn main() {}
