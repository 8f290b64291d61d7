use cudajit::prelude::*;

#[kernel]
fn double(x: &[f32], y: &mut [f32]) {
    let i = global_index();
    if i < y.len() {
        y[i] = (|v: f32| v * 2.0)(x[i]);
    }
}

fn main() {}
