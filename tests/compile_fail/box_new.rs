use cudajit::prelude::*;

#[kernel]
fn boxed(x: &[f32], y: &mut [f32]) {
    let i = global_index();
    if i < y.len() {
        let _boxed = Box::new(x[i]);
        y[i] = x[i];
    }
}

fn main() {}
