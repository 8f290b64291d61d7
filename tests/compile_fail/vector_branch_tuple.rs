use cudajit::prelude::*;

#[kernel]
fn load(x: &[f32], y: &mut [f32]) {
    let i = global_index();
    let (a, b, c, d) = if i < y.len() { vload4(x, i) } else { (0.0, 0.0, 0.0, 0.0) };
    if i < y.len() {
        y[i] = a + b + c + d;
    }
}

fn main() {}
