use cudajit::prelude::*;

#[kernel]
fn total(x: &[f32], y: &mut [f32]) {
    let mut sum = 0.0;
    for v in x.iter().copied() {
        sum += v;
    }
    y[0] = sum;
}

fn main() {}
