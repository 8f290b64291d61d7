use cudajit::prelude::*;

#[kernel]
fn scale(x: &[f32], y: &mut [f32]) {
    const FACTOR: f32 = 2.0;
    let i = global_index();
    if i < y.len() {
        y[i] = x[i] * FACTOR;
    }
}

fn main() {}
