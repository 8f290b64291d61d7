use cudajit::prelude::*;

#[derive(Clone, Copy, DeviceCopy)]
#[repr(C)]
#[device_drop]
struct Session {
    word: u64,
}

#[derive(Clone, Copy, DeviceCopy)]
#[repr(C)]
#[device_drop(end_a)]
#[device_drop(end_b)]
struct Twice {
    word: u64,
}

fn main() {}
