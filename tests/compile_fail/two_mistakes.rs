use cudajit::prelude::*;

// Both mistakes are reported in one compilation.
#[kernel]
fn root(x: Vec<f32>, y: &mut [f32]) {
    let i = global_index();
    if i < y.len() {
        let _label = "root";
        y[i] = x[i];
    }
}

fn main() {}
