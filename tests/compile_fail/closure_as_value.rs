use cudajit::prelude::*;

#[kernel]
fn double(x: &[f32], y: &mut [f32]) {
    let twice = |v: f32| v * 2.0;
    let copy = twice;
    let i = global_index();
    if i < y.len() {
        y[i] = copy(x[i]);
    }
}

fn main() {}
