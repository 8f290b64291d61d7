use cudajit::prelude::*;

#[derive(Clone, Copy, PartialEq)]
#[repr(u32)]
enum Mode {
    Fast,
    Exact,
}

#[kernel]
fn pick(x: &mut [u32]) {
    let i = global_index();
    if i < x.len() {
        x[i] = if Mode::Fast == Mode::Exact { 1 } else { 0 };
    }
}

fn main() {}
