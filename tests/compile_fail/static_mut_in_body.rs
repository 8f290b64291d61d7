use cudajit::prelude::*;

#[kernel]
fn scale(x: &[f32], y: &mut [f32]) {
    static mut CALLS: u32 = 0;
    const OFFSET: f32 = 1.0;
    let i = global_index();
    if i < y.len() {
        const OFFSET: f32 = 2.0;
        y[i] = x[i] + OFFSET;
    }
}

fn main() {}
