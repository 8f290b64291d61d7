use cudajit::prelude::*;

#[kernel]
fn pick(x: &[f32], y: &mut [f32]) {
    let i = global_index();
    if i < y.len() {
        let pair = if x[i] > 0.0 { (x[i], 1.0) } else { (0.0, x[i]) };
        y[i] = pair.0 * pair.1;
    }
}

fn main() {}
