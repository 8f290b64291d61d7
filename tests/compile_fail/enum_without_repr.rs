use cudajit::prelude::*;

#[derive(Clone, Copy, DeviceCopy)]
enum Mode {
    Fast,
    Exact,
}

fn main() {}
