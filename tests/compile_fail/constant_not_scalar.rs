use cudajit::prelude::*;

#[derive(Clone, Copy)]
struct Weights {
    left: f32,
    right: f32,
}

const WEIGHTS: Weights = Weights {
    left: 0.25,
    right: 0.75,
};

#[kernel]
fn blur(x: &[f32], y: &mut [f32]) {
    let i = global_index();
    if i > 0 && i + 1 < y.len() {
        y[i] = x[i - 1] * WEIGHTS.left + x[i + 1] * WEIGHTS.right;
    }
}

fn main() {}
