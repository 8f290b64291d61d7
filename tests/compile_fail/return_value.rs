use cudajit::prelude::*;

#[kernel]
fn fill(y: &mut [f32]) {
    let i = global_index();
    if i >= y.len() {
        return ();
    }
    y[i] = 1.0;
}

fn main() {}
