use cudajit::prelude::*;

#[kernel]
fn pair(x: &[f32], y: &mut [f32]) {
    let i = global_index();
    let mut grid = [[x[0], x[1]], [x[2], x[3]]];
    let first = grid[0][0];
    // A literal of arrays of arrays is a `let`'s value, not assigned later.
    grid = [[x[1], x[0]], [x[3], x[2]]];
    if i < y.len() {
        y[i] = grid[i % 2][0] + first;
    }
}

fn main() {}
