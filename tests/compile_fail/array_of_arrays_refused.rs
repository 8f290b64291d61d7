use cudajit::prelude::*;

#[kernel]
fn cube(y: &mut [f32]) {
    // Three levels.
    let c: [[[f32; 2]; 2]; 2] = [[[0.0; 2]; 2]; 2];
    y[0] = c[0][0][0];
}

fn main() {}
