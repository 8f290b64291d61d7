use cudajit::prelude::*;

#[kernel]
fn copy(x: &[f32], y: &mut [f32]) {
    let i = global_index();
    if i < y.len() && i < x.len() {
        y[i] = unsafe { *x.get_unchecked(i) };
    }
}

fn main() {}
