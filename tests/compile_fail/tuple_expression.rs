use cudajit::prelude::*;

#[kernel]
fn pick(x: &[f32], y: &mut [f32]) {
    let i = global_index();
    if i < y.len() {
        y[i] = (x[i], 2.0f32).1 * x[i];
        let (a, b) = if x[i] > 0.0 { (x[i], 1.0f32) } else { x[i] };
        y[i] = a + b;
    }
}

fn main() {}
