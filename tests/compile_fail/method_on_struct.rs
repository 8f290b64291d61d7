use cudajit::prelude::*;

#[derive(Clone, Copy, DeviceCopy)]
#[repr(C)]
struct Vec2 {
    x: f32,
    y: f32,
}

// Not `#[device]`: the host can call these, kernels cannot.
impl Vec2 {
    fn new(x: f32, y: f32) -> Self {
        Self { x, y }
    }
}

#[kernel]
fn norms(v: &[Vec2], y: &mut [f32]) {
    let i = global_index();
    if i < y.len() {
        let w = Vec2::new(v[i].x, 1.0);
        y[i] = w.x;
    }
}

fn main() {}
