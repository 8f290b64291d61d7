use cudajit::prelude::*;

#[kernel]
fn angles(x: &[f32], y: &mut [f32]) {
    let i = global_index();
    if i < y.len() {
        y[i] = x[i].to_degrees() + x[i].to_radians();
    }
}

fn main() {}
