use cudajit::prelude::*;

#[kernel]
fn odd_down(y: &mut [u32]) {
    let mut k = 0;
    for v in (0..10u32).step_by(3).rev() {
        y[k] = v;
        k += 1;
    }
}

fn main() {}
