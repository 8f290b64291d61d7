use cudajit::prelude::*;

#[kernel]
fn add(x: &[f32], y: &mut [f32]) {
    let i = global_index();
    if i < y.len() {
        let ((a, b), c) = ((x[i], y[i]), 1.0);
        y[i] = a + b + c;
    }
}

fn main() {}
