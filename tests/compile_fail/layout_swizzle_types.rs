use cudajit::prelude::*;
use cudajit::tensor::layout::{SharedTileSw128, SharedTileSw64};
use cudajit::tensor_map::{TensorMapElement, TensorMapLayout};

/// The descriptor of slice `ks` of a tile TMA filled with the 128-byte swizzle.
#[device]
fn slice_descriptor(tile: SharedTileSw128, ks: u32) -> u64 {
    tile.k_major_descriptor(32 * ks)
}

// A tile declared 64-byte-swizzled is not a 128-byte one: its swizzle is its type.
#[kernel]
fn wrong_swizzle(address: u32, out: &mut [u64]) {
    let tile = SharedTileSw64::new(address);
    out[0] = slice_descriptor(tile, 0);
}

fn main() {
    // A tensor map takes its swizzle from a tile type, not from any type.
    let _ = TensorMapLayout::tiled(TensorMapElement::Bf16, &[64, 64], &[64, 64])
        .with_swizzle_of::<u32>();
}
