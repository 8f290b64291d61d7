use cudajit::prelude::*;

#[kernel]
fn copy<'a>(x: &'a [f32], y: &mut [f32]) {
    let i = global_index();
    if i < y.len() {
        y[i] = x[i];
    }
}

fn main() {}
