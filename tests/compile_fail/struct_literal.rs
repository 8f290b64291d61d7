use cudajit::prelude::*;

#[kernel]
fn fill(y: &mut [f32]) {
    let _origin = Dim3 { x: 0, y: 0, z: 0 };
    let i = global_index();
    if i < y.len() {
        y[i] = 1.0;
    }
}

fn main() {}
