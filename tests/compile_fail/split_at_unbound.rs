use cudajit::prelude::*;

#[kernel]
fn halves(x: &[f32], y: &mut [f32]) {
    let parts = x.split_at(4);
    y[0] = parts.0[0];
}

fn main() {}
