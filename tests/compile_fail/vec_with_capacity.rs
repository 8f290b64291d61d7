use cudajit::prelude::*;

#[kernel]
fn gather(x: &[f32], y: &mut [f32]) {
    let i = global_index();
    let v = Vec::<f32>::with_capacity(4);
    if i < y.len() {
        y[i] = x[i] + v.len() as f32;
    }
}

fn main() {}
