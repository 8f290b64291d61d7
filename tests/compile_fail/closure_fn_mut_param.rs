use cudajit::prelude::*;

#[device]
fn apply<F: FnMut(f32) -> f32>(mut f: F, v: f32) -> f32 {
    f(v)
}

#[kernel]
fn run(x: &[f32], y: &mut [f32]) {
    let i = global_index();
    if i < y.len() {
        y[i] = apply(|v| v + 1.0, x[i]);
    }
}

fn main() {}
