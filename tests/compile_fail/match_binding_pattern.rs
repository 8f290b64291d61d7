use cudajit::prelude::*;

#[kernel]
fn bucket(x: &[u32], y: &mut [u32]) {
    let i = global_index();
    if i < y.len() {
        y[i] = match x[i] {
            0 => 1,
            n => n * 2,
        };
    }
}

fn main() {}
