use cudajit::prelude::*;

// Rust walks a copy of `acc`, so the writes do not change what the loop sees; the kernel
// does not copy arrays.
#[kernel]
fn prefix(x: &[f32], y: &mut [f32]) {
    let i = global_index();
    let mut acc = [x[0]; 4];
    for v in acc {
        acc[1] += v;
    }
    if i < y.len() {
        y[i] = acc[1];
    }
}

fn main() {}
