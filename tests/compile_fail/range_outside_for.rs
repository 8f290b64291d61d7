use cudajit::prelude::*;

#[kernel]
fn shift(x: &[f32], y: &mut [f32]) {
    let i = global_index();
    if i < x[1..].len() {
        y[i] = x[i + 1];
    }
}

fn main() {}
