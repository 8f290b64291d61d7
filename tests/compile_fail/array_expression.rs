use cudajit::prelude::*;

#[kernel]
fn smooth(x: &[f32], y: &mut [f32]) {
    let i = global_index();
    if i < y.len() {
        y[i] = x[i] * [0.25f32, 0.5, 0.25][i % 3];
    }
}

fn main() {}
