use cudajit::prelude::*;

const WEIGHTS: [f32; 3] = [0.25, 0.5, 0.25];

#[kernel]
fn blur(x: &[f32], y: &mut [f32]) {
    let i = global_index();
    if i > 0 && i + 1 < y.len() {
        y[i] = x[i - 1] * WEIGHTS[0] + x[i] * WEIGHTS[1] + x[i + 1] * WEIGHTS[2];
    }
}

fn main() {}
