use cudajit::prelude::*;

#[kernel]
fn add(x: &[f32], y: &mut [f32]) {
    let i = global_index();
    if i < y.len() {
        let (a, b) = (x[i], y[i]);
        y[i] = a + b;
    }
}

fn main() {}
