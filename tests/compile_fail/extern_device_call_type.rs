use cudajit::prelude::*;
use cudajit::{DeviceLibrary, LibraryKind};

static LIB: DeviceLibrary = DeviceLibrary::file("lib", LibraryKind::Fatbin, "lib.fatbin");

#[extern_device(library = LIB)]
extern "C" {
    fn scale(x: f32, factor: i32) -> f32;
}

#[kernel]
fn apply(y: &mut [f32]) {
    let i = global_index();
    if i < y.len() {
        y[i] = scale(y[i], 2.0);
    }
}

fn main() {}
