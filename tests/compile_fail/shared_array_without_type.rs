use cudajit::prelude::*;

#[kernel]
fn fill(y: &mut [f32]) {
    let tile: &mut [f32] = shared_array(64);
    tile[0] = 1.0;
    y[0] = tile[0];
}

fn main() {}
