use cudajit::prelude::*;

#[kernel]
fn root(x: &[f32], y: &mut [f32]) {
    let i = global_index();
    if i < y.len() {
        y[i] = f32::to_degrees(x[i]);
    }
}

fn main() {}
