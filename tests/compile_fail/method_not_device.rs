use cudajit::prelude::*;

#[derive(Clone, Copy, DeviceCopy)]
#[repr(C)]
struct Vec2 {
    x: f32,
    y: f32,
}

// Not `#[device]`: kernels cannot call `norm`.
impl Vec2 {
    fn norm(self) -> f32 {
        (self.x * self.x + self.y * self.y).sqrt()
    }
}

#[kernel]
fn norms(v: &[Vec2], y: &mut [f32]) {
    let i = global_index();
    if i < y.len() {
        y[i] = v[i].norm();
    }
}

fn main() {}
