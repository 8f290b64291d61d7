use cudajit::prelude::*;

#[kernel]
const fn first(y: &mut [f32]) {
    y[0] = 1.0;
}

fn main() {}
