use cudajit::prelude::*;

#[kernel]
fn alternate(y: &mut [f32]) {
    let i = global_index();
    if i < y.len() {
        y[i] = match i % 2 {
            0 => 1.0,
            _ => -1.0,
        };
    }
}

fn main() {}
