use cudajit::prelude::*;

#[kernel]
fn show(x: &[f32]) {
    let i = global_index();
    println!("x[{}] = {:>8}", i, x[i]);
}

fn main() {}
