use cudajit::prelude::*;

#[kernel]
fn pair(x: &[f32], y: &mut [f32]) {
    let i = global_index();
    let arr = [x[0]; 2];
    let [a, rest @ ..] = arr;
    let b = rest[0];
    if i < y.len() {
        y[i] = a + b;
    }
}

fn main() {}
