use cudajit::prelude::*;

mod util {
    pub fn twice(x: f32) -> f32 {
        2.0 * x
    }
}

#[device]
fn helper(x: f32) -> f32 {
    util::twice(x)
}

#[kernel]
fn apply(x: &[f32], y: &mut [f32]) {
    let i = global_index();
    if i < y.len() {
        y[i] = helper(x[i]) + util::twice(x[i]);
    }
}

fn main() {}
