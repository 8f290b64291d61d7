use cudajit::prelude::*;

#[kernel]
fn fill(y: &mut [f32]) {
    let i = global_index();
    println!("thread {}", i);
    if i < y.len() {
        y[i] = 1.0;
    }
}

fn main() {}
