use cudajit::prelude::*;

static NOT_A_LIBRARY: &str = "lib.fatbin";

#[extern_device(library = NOT_A_LIBRARY)]
extern "C" {
    fn scale(x: f32) -> f32;
}

#[kernel]
fn apply(y: &mut [f32]) {
    let i = global_index();
    if i < y.len() {
        y[i] = scale(y[i]);
    }
}

fn main() {}
