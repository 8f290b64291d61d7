use cudajit::prelude::*;

#[derive(Clone, Copy, DeviceCopy)]
#[repr(C)]
struct Point {
    x: f32,
    y: f32,
}

#[kernel]
fn fill(y: &mut [f32]) {
    let a = Point { x: 1.0, y: 2.0 };
    let _b = Point { x: 0.0, ..a };
    let _origin = Dim3 { x: 0, y: 0, z: 0 };
    let i = global_index();
    if i < y.len() {
        y[i] = a.x;
    }
}

fn main() {}
