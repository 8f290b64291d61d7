use cudajit::prelude::*;

#[kernel]
fn store(x: &[f32], y: &mut [f32]) {
    let i = global_index();
    if i < y.len() {
        let pair = (x[i], 2.0f32);
        y[i] = pair;
        let (a, b, c) = pair;
        y[i] = a + b + c + pair.2;
    }
}

fn main() {}
