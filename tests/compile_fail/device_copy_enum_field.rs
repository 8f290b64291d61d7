use cudajit::prelude::*;

#[derive(Clone, Copy, PartialEq, DeviceCopy)]
#[repr(u8)]
enum Kind {
    Star = 1,
    Planet = 2,
}

#[derive(Clone, Copy, DeviceCopy)]
#[repr(C)]
struct Vec2 {
    x: f32,
    y: f32,
}

// An enum field: a kernel could store an integer that is no variant.
#[derive(Clone, Copy, DeviceCopy)]
#[repr(C)]
struct Body {
    pos: Vec2,
    kind: Kind,
}

// A field of a type that is not `DeviceCopy`.
#[derive(Clone, Copy, DeviceCopy)]
#[repr(C)]
struct Tagged {
    name: &'static str,
    values: [Vec2; 2],
}

fn main() {}
