use cudajit::prelude::*;

#[kernel]
struct Fill {
    value: f32,
}

fn main() {}
