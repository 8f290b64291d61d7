use cudajit::prelude::*;

#[kernel]
fn count(y: &mut [u32]) {
    let old = y[0];
    let _previous = atomic_add(old, 1);
}

fn main() {}
