use cudajit::prelude::*;

// A unit struct without `#[derive(DeviceCopy)]`.
#[derive(Clone, Copy)]
pub struct Halve;

#[derive(Clone, Copy, DeviceCopy)]
#[repr(C)]
pub struct Meters(pub f32);

#[derive(Clone, Copy, DeviceCopy)]
#[repr(C)]
pub struct Pair(pub Meters, pub u32);

#[kernel]
fn unit_without_derive(y: &mut [f32]) {
    let _op = Halve;
    y[0] = 1.0;
}

#[kernel]
fn nested_let_pattern(p: &[Pair], y: &mut [f32]) {
    let i = global_index();
    // A nested pattern in a `let`: bind the field, then destructure it.
    let Pair(Meters(m), k) = p[i];
    y[i] = m + k as f32;
}

#[kernel]
fn binding_subpattern(p: &[Pair], y: &mut [f32]) {
    let i = global_index();
    y[i] = match p[i] {
        Pair(_, k @ 1..=3) => k as f32,
        Pair(m, _) => m.0,
    };
}

fn main() {}
