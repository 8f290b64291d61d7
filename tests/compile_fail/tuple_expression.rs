use cudajit::prelude::*;

#[kernel]
fn copy(x: &[f32], y: &mut [f32]) {
    let i = global_index();
    if i < y.len() {
        let _pair = (x[i], y[i]);
        y[i] = x[i];
    }
}

fn main() {}
