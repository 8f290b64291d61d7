use cudajit::prelude::*;

#[kernel]
fn clamp_all(x: &[f32], y: &mut [f32]) {
    let clamp = |v: f32| {
        if v < 0.0 {
            return 0.0;
        }
        v
    };
    let i = global_index();
    if i < y.len() {
        y[i] = clamp(x[i]);
    }
}

fn main() {}
