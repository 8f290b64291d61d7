use cudajit::prelude::*;

#[kernel]
fn swap_pairs(y: &mut [f32]) {
    let i = 2 * global_index();
    if i + 1 < y.len() {
        [y[i], y[i + 1]] = [y[i + 1], y[i]];
    }
}

fn main() {}
