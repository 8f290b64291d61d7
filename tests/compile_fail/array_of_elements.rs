use cudajit::prelude::*;

#[kernel]
fn pair(x: &[f32], y: &mut [f32]) {
    let i = global_index();
    let grid = [[x[0], x[1]], [x[2], x[3]]];
    if i < y.len() {
        y[i] = grid[i % 2][0];
    }
}

fn main() {}
