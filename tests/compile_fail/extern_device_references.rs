use cudajit::prelude::*;
use cudajit::{DeviceLibrary, LibraryKind};

static LIB: DeviceLibrary = DeviceLibrary::file("lib", LibraryKind::Fatbin, "lib.fatbin");

#[derive(Clone, Copy, DeviceCopy)]
#[repr(C)]
struct State {
    a: u64,
    b: u64,
}

#[extern_device(library = LIB)]
extern "C" {
    fn takes_state(state: &State) -> u64;
    fn takes_words(words: &mut [u64; 4]);
    fn takes_slice_ref(x: &[f32]) -> f32;
    fn takes_array_of_len(words: &mut [u64; N]);
}

const N: usize = 4;

#[kernel]
fn calls(state: State, out: &mut [u64]) {
    // A reference of a value that is not a named struct or array.
    out[0] = takes_state(&out[0]);
}

fn main() {}
