use cudajit::prelude::*;

#[kernel]
fn fill(y: &mut [f32]) {
    let _tid = thread_idx();
    let i = global_index();
    if i < y.len() {
        y[i] = 1.0;
    }
}

fn main() {}
