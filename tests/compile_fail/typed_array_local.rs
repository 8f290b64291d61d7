use cudajit::prelude::*;

#[kernel]
fn accumulate(x: &[f32], y: &mut [f32]) {
    let i = global_index();
    let mut acc: [f32; 4] = [0.0; 4];
    acc[0] = x[i];
    let copy: [f32; 4] = acc;
    if i < y.len() {
        y[i] = copy[0];
    }
}

fn main() {}
