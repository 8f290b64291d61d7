use cudajit::prelude::*;

#[kernel]
fn scale((a, b): (f32, f32), y: &mut [f32]) {
    let i = global_index();
    if i < y.len() {
        y[i] = a * b;
    }
}

fn main() {}
