use cudajit::prelude::*;

#[kernel]
fn clear(y: &mut [f32]) {
    let mut n = y.len();
    while let Some(m) = n.checked_sub(1) {
        y[m] = 0.0;
        n = m;
    }
}

fn main() {}
