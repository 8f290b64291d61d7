use cudajit::prelude::*;

fn twice(v: f32) -> f32 {
    v * 2.0
}

#[kernel]
fn apply(x: &[f32], y: &mut [f32]) {
    let i = global_index();
    if i < y.len() {
        y[i] = twice(x[i]);
    }
}

fn main() {}
