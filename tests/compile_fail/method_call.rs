use cudajit::prelude::*;

#[kernel]
fn root(x: &[f32], y: &mut [f32]) {
    let i = global_index();
    if i < y.len() {
        y[i] = x[i].to_degrees();
    }
}

fn main() {}
