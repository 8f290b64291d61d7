use cudajit::prelude::*;

#[derive(Clone, Copy, DeviceCopy)]
#[repr(C)]
pub struct P {
    pub x: f32,
}

#[kernel]
fn show(x: &[f32], p: P) {
    let i = global_index();
    let a = [1.0f32, 2.0];
    // Each is a scalar-only `printf` argument on the device: the slice and the array are
    // errors here, at the argument, not at the first launch.
    println!("{} {:?} {:?} {}", i, x, a, p.x);
}

fn main() {}
