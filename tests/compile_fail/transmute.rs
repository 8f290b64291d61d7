use cudajit::prelude::*;

#[kernel]
fn bits(x: &[f32], y: &mut [u32]) {
    let i = global_index();
    if i < y.len() {
        y[i] = core::mem::transmute::<f32, u32>(x[i]);
    }
}

fn main() {}
