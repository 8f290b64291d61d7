use cudajit::prelude::*;
use cudajit::{DeviceLibrary, LibraryKind};

static LIB: DeviceLibrary = DeviceLibrary::file("lib", LibraryKind::Fatbin, "lib.fatbin");

#[extern_device]
extern "C" {
    fn no_library(x: f32) -> f32;
}

#[extern_device(library = LIB, symbol = "x")]
extern "C" {
    fn unknown_argument(x: f32) -> f32;
}

#[extern_device(library = LIB)]
extern "Rust" {
    fn rust_abi(x: f32) -> f32;
}

#[extern_device(library = LIB)]
extern "C" {
    #[link_name = 3]
    fn bad_link_name(x: f32) -> f32;
    static COUNTER: i32;
}

fn main() {}
