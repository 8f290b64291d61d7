use cudajit::prelude::*;

#[kernel]
fn scale(x: &[f32], y: &mut [f32]) {
    let s = 2.0f32;
    let times = |v: f32| v * s;
    let s = 3.0f32;
    let i = global_index();
    if i < y.len() {
        y[i] = times(x[i]) + s;
    }
}

fn main() {}
