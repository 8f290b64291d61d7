use cudajit::prelude::*;

#[kernel]
fn mark_first_negative(x: &[f32], y: &mut [f32]) {
    let mut j = 0;
    let found = loop {
        if j >= x.len() || x[j] < 0.0 {
            break j;
        }
        j += 1;
    };
    if found < y.len() {
        y[found] = 1.0;
    }
}

fn main() {}
