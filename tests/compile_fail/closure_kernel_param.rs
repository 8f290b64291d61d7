use cudajit::prelude::*;

#[kernel]
fn run<F: Fn(f32) -> f32>(f: F, x: &[f32], y: &mut [f32]) {
    let i = global_index();
    if i < y.len() {
        y[i] = f(x[i]);
    }
}

fn main() {}
