use cudajit::prelude::*;

#[kernel]
fn fill(y: &mut [f32]) {
    let i = global_index();
    let _v = vec![i];
    if i < y.len() {
        y[i] = 1.0;
    }
}

fn main() {}
