use cudajit::prelude::*;

#[kernel]
fn copy(x: &[f32], y: &mut [f32]) {
    let i = global_index();
    let xs = &x;
    if i < xs.len() {
        y[i] = xs[i];
    }
}

fn main() {}
