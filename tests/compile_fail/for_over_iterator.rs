use cudajit::prelude::*;

#[kernel]
fn total(x: &[f32], y: &mut [f32]) {
    let mut sum = 0.0;
    for pair in x.chunks(2) {
        sum += pair[0];
    }
    y[0] = sum;
}

fn main() {}
