use cudajit::prelude::*;

#[kernel]
fn smooth(x: &[f32], y: &mut [f32]) {
    let i = global_index();
    let weights = [0.25f32, 0.5, 0.25];
    if i < y.len() {
        y[i] = x[i] * weights[i % 3];
    }
}

fn main() {}
