use cudajit::prelude::*;

#[kernel]
fn scale(s: f32, x: &[f32], y: &mut [f32]) {
    let times = move |v: f32| v * s;
    let i = global_index();
    if i < y.len() {
        y[i] = times(x[i]);
    }
}

fn main() {}
