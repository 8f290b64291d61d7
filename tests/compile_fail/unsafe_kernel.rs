use cudajit::prelude::*;

#[kernel]
unsafe fn fill(y: &mut [f32]) {
    let i = global_index();
    if i < y.len() {
        y[i] = 1.0;
    }
}

fn main() {}
