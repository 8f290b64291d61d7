use cudajit::prelude::*;

#[kernel]
fn clear_prefix(y: &mut [f32]) {
    let mut j = 0;
    loop {
        if j >= y.len() || y[j] < 0.0 {
            break j;
        }
        y[j] = 0.0;
        j += 1;
    };
}

fn main() {}
