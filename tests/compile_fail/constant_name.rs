use cudajit::prelude::*;

const SCALE: f32 = 2.0;

#[kernel]
fn scale(x: &[f32], y: &mut [f32]) {
    let i = global_index();
    if i < y.len() {
        y[i] = x[i] * SCALE;
    }
}

fn main() {}
