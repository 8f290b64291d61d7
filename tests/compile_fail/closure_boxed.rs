use cudajit::prelude::*;

#[device]
fn apply(f: &dyn Fn(f32) -> f32, v: f32) -> f32 {
    f(v)
}

#[kernel]
fn run(x: &[f32], y: &mut [f32]) {
    let i = global_index();
    if i < y.len() {
        let f: Box<dyn Fn(f32) -> f32> = Box::new(|v| v + 1.0);
        y[i] = apply(&*f, x[i]);
    }
}

fn main() {}
