use cudajit::prelude::*;

#[device]
fn bump(v: f32) -> f32 {
    v + 1.0
}

#[device]
fn mix(a: f32, w: [f32; 2]) -> f32 {
    a * w[0] + w[1]
}

#[kernel]
fn ordered(x: &[f32], y: &mut [f32]) {
    let i = global_index();
    if i < y.len() {
        // Binding the literal first would run its `bump` before the first argument's.
        y[i] = mix(bump(x[i]), [bump(2.0), 1.0]);
    }
}

fn main() {}
