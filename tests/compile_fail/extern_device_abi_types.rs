use cudajit::prelude::*;
use cudajit::{f16, DeviceLibrary, LibraryKind};

static LIB: DeviceLibrary = DeviceLibrary::file("lib", LibraryKind::Fatbin, "lib.fatbin");

#[derive(Clone, Copy)]
#[repr(C)]
struct Pair {
    a: f32,
    b: f32,
}

#[extern_device(library = LIB)]
extern "C" {
    fn takes_slice(x: &[f32]) -> f32;
    fn takes_struct(p: Pair);
    fn returns_half(x: f32) -> f16;
    fn takes_pointer(p: *const f32) -> f32;
    fn generic<T>(x: T) -> T;
}

fn main() {}
