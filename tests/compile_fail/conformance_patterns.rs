// The patterns of docs/language.md's conformance table that kernels refuse (its "no"
// rows; tests/conformance.rs checks that each has its error here).
use cudajit::prelude::*;

#[derive(Clone, Copy, DeviceCopy)]
#[repr(C)]
pub struct Pair {
    pub a: f32,
    pub b: u32,
}

const LIMIT: u32 = 5;

#[device]
fn wildcard_let(v: f32) -> f32 {
    let _ = v * 2.0;
    v
}

#[device]
fn tuple_rest(v: f32) -> f32 {
    let (a, ..) = (v, 2.0f32, 3.0f32);
    a
}

#[device]
fn half_open_range(v: u32) -> u32 {
    match v {
        0..6 => 1,
        6.. => 2,
    }
}

#[device]
fn ref_binding(v: f32) -> f32 {
    let ref w = v;
    *w
}

#[device]
fn constant_pattern(v: u32) -> u32 {
    match v {
        LIMIT => 1,
        _ => 0,
    }
}

#[device]
fn path_in_range(v: i32) -> u32 {
    match v {
        i32::MIN..=-1 => 1,
        _ => 0,
    }
}

fn main() {}
