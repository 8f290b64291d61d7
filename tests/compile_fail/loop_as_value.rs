use cudajit::prelude::*;

// A `loop` that ends a function's body is its value in Rust; the kernel language needs it
// bound first (`let found = loop { .. }; found`).
#[device]
fn first_negative(x: &[f32]) -> usize {
    let mut j = 0;
    loop {
        if j >= x.len() || x[j] < 0.0 {
            break j;
        }
        j += 1;
    }
}

#[kernel]
fn mark_first_negative(x: &[f32], y: &mut [f32]) {
    let found = first_negative(x);
    if found < y.len() {
        y[found] = 1.0;
    }
}

fn main() {}
