use cudajit::prelude::*;

#[derive(Clone, Copy, DeviceCopy)]
#[repr(C)]
struct Point {
    x: f32,
    y: f32,
}

#[device]
fn nested(p: (f32, (f32, f32))) -> f32 {
    p.0
}

#[device]
fn with_struct(a: f32) -> (Point, f32) {
    (Point { x: a, y: a }, a)
}

#[kernel]
fn pairs(p: (f32, u32), y: &mut [f32]) {
    let i = global_index();
    if i < y.len() {
        y[i] = p.0;
    }
}

fn main() {}
