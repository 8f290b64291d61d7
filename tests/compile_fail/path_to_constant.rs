use cudajit::prelude::*;

#[kernel]
fn circle(r: &[f32], area: &mut [f32]) {
    let i = global_index();
    if i < area.len() {
        area[i] = core::f32::consts::PI * r[i] * r[i];
    }
}

fn main() {}
