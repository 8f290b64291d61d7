use cudajit::prelude::*;

#[kernel]
fn fill(y: &mut [f32])
where
    f32: Copy,
{
    let i = global_index();
    if i < y.len() {
        y[i] = 1.0;
    }
}

fn main() {}
