use cudajit::prelude::*;

#[derive(Clone, Copy, DeviceCopy)]
#[repr(u32)]
enum Shape {
    Circle(f32),
    Point,
}

fn main() {}
