//! The swizzled shared tiles: one type per swizzle, each with its offsets, its `wgmma`
//! descriptors and (for the host) its tensor-map swizzle.

use super::swizzle::{swizzle_128, swizzle_32, swizzle_64};
// The trait is the runtime's, where `TensorMapLayout::with_swizzle_of` reads it; the tile
// types implement it here.
use cudajit::tensor_map::TensorMapSwizzle;
pub use cudajit::tensor_map::TileSwizzle;
use cudajit::{device, DeviceCopy};

/// A `wgmma` shared-memory matrix descriptor (PTX ISA, "Matrix Descriptor Format"): the
/// start address (bits 0–13), leading byte offset (16–29) and stride byte offset (32–45),
/// each in 16-byte units, base offset 0 (the tile is aligned to its repeat) and the layout
/// type (bits 62–63: 1 for 128-byte, 2 for 64-byte, 3 for 32-byte swizzle).
#[device]
fn matrix_descriptor(start: u32, leading: u32, stride: u32, layout: u64) -> u64 {
    let start = ((start & 0x3ffff) >> 4) as u64;
    let leading = ((leading >> 4) & 0x3fff) as u64;
    let stride = ((stride >> 4) & 0x3fff) as u64;
    start | (leading << 16) | (stride << 32) | (layout << 62)
}
/// A K-major (or MN-major) tile in shared memory, 128-byte swizzled: rows of 128 bytes (64
/// bf16), groups of 8 rows 1024 bytes apart, at `address` (1024-byte aligned, the swizzle's
/// repeat). What TMA writes for a box whose inner dimension is 128 bytes with
/// `TensorMapSwizzle::B128`, and what a `wgmma` descriptor of layout type 1 reads.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, DeviceCopy)]
#[repr(C)]
pub struct SharedTileSw128 {
    /// The tile's `.shared` address.
    pub address: u32,
}

#[device]
impl SharedTileSw128 {
    /// The tile at `.shared` address `address` (1024-byte aligned).
    pub fn new(address: u32) -> Self {
        Self { address }
    }

    /// Where byte `byte` (0–127) of row `row` is stored, from the tile's start.
    pub fn byte_offset(&self, row: u32, byte: u32) -> u32 {
        swizzle_128(row * 128 + byte)
    }

    /// The `.shared` address of byte `byte` of row `row`.
    pub fn address_of(&self, row: u32, byte: u32) -> u32 {
        self.address + self.byte_offset(row, byte)
    }

    /// The `wgmma` descriptor of the K-major operand whose k slice starts `k_byte` bytes
    /// into every row (`32 ks` for the bf16 slice `ks` of 16): the start moves linearly,
    /// the hardware swizzles the final addresses. Leading byte offset 16 (unused by
    /// swizzled K-major layouts), stride byte offset 1024 between 8-row groups.
    pub fn k_major_descriptor(&self, k_byte: u32) -> u64 {
        matrix_descriptor(self.address + k_byte, 16, 1024, 1)
    }

    /// The `wgmma` descriptor of the MN-major operand whose k slice starts at row `k`
    /// (one row per k, 64 bf16 of M or N in a row), with consecutive 64-wide chunks of M
    /// or N `chunk_bytes` apart (the leading byte offset) and 8-row groups of k 1024 bytes
    /// apart. `wgmma` reads it with its transpose flag set.
    pub fn mn_major_descriptor(&self, k: u32, chunk_bytes: u32) -> u64 {
        matrix_descriptor(self.address + k * 128, chunk_bytes, 1024, 1)
    }
}

impl TileSwizzle for SharedTileSw128 {
    const SWIZZLE: TensorMapSwizzle = TensorMapSwizzle::B128;
    const ROW_BYTES: u32 = 128;
    const REPEAT_BYTES: u32 = 1024;
}
/// A K-major (or MN-major) tile in shared memory, 64-byte swizzled: rows of 64 bytes (32
/// bf16), groups of 8 rows 512 bytes apart, at `address` (512-byte aligned, the swizzle's
/// repeat). What TMA writes for a box whose inner dimension is 64 bytes with
/// `TensorMapSwizzle::B64`, and what a `wgmma` descriptor of layout type 2 reads.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, DeviceCopy)]
#[repr(C)]
pub struct SharedTileSw64 {
    /// The tile's `.shared` address.
    pub address: u32,
}

#[device]
impl SharedTileSw64 {
    /// The tile at `.shared` address `address` (512-byte aligned).
    pub fn new(address: u32) -> Self {
        Self { address }
    }

    /// Where byte `byte` (0–63) of row `row` is stored, from the tile's start.
    pub fn byte_offset(&self, row: u32, byte: u32) -> u32 {
        swizzle_64(row * 64 + byte)
    }

    /// The `.shared` address of byte `byte` of row `row`.
    pub fn address_of(&self, row: u32, byte: u32) -> u32 {
        self.address + self.byte_offset(row, byte)
    }

    /// The `wgmma` descriptor of the K-major operand whose k slice starts `k_byte` bytes
    /// into every row (`32 ks` for the bf16 slice `ks` of 16): the start moves linearly,
    /// the hardware swizzles the final addresses. Leading byte offset 16 (unused by
    /// swizzled K-major layouts), stride byte offset 512 between 8-row groups.
    pub fn k_major_descriptor(&self, k_byte: u32) -> u64 {
        matrix_descriptor(self.address + k_byte, 16, 512, 2)
    }

    /// The `wgmma` descriptor of the MN-major operand whose k slice starts at row `k`
    /// (one row per k, 32 bf16 of M or N in a row), with consecutive 32-wide chunks of M
    /// or N `chunk_bytes` apart (the leading byte offset) and 8-row groups of k 512 bytes
    /// apart. `wgmma` reads it with its transpose flag set.
    pub fn mn_major_descriptor(&self, k: u32, chunk_bytes: u32) -> u64 {
        matrix_descriptor(self.address + k * 64, chunk_bytes, 512, 2)
    }
}

impl TileSwizzle for SharedTileSw64 {
    const SWIZZLE: TensorMapSwizzle = TensorMapSwizzle::B64;
    const ROW_BYTES: u32 = 64;
    const REPEAT_BYTES: u32 = 512;
}
/// A K-major (or MN-major) tile in shared memory, 32-byte swizzled: rows of 32 bytes (16
/// bf16), groups of 8 rows 256 bytes apart, at `address` (256-byte aligned, the swizzle's
/// repeat). What TMA writes for a box whose inner dimension is 32 bytes with
/// `TensorMapSwizzle::B32`, and what a `wgmma` descriptor of layout type 3 reads.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, DeviceCopy)]
#[repr(C)]
pub struct SharedTileSw32 {
    /// The tile's `.shared` address.
    pub address: u32,
}

#[device]
impl SharedTileSw32 {
    /// The tile at `.shared` address `address` (256-byte aligned).
    pub fn new(address: u32) -> Self {
        Self { address }
    }

    /// Where byte `byte` (0–31) of row `row` is stored, from the tile's start.
    pub fn byte_offset(&self, row: u32, byte: u32) -> u32 {
        swizzle_32(row * 32 + byte)
    }

    /// The `.shared` address of byte `byte` of row `row`.
    pub fn address_of(&self, row: u32, byte: u32) -> u32 {
        self.address + self.byte_offset(row, byte)
    }

    /// The `wgmma` descriptor of the K-major operand whose k slice starts `k_byte` bytes
    /// into every row (`32 ks` for the bf16 slice `ks` of 16): the start moves linearly,
    /// the hardware swizzles the final addresses. Leading byte offset 16 (unused by
    /// swizzled K-major layouts), stride byte offset 256 between 8-row groups.
    pub fn k_major_descriptor(&self, k_byte: u32) -> u64 {
        matrix_descriptor(self.address + k_byte, 16, 256, 3)
    }

    /// The `wgmma` descriptor of the MN-major operand whose k slice starts at row `k`
    /// (one row per k, 16 bf16 of M or N in a row), with consecutive 16-wide chunks of M
    /// or N `chunk_bytes` apart (the leading byte offset) and 8-row groups of k 256 bytes
    /// apart. `wgmma` reads it with its transpose flag set.
    pub fn mn_major_descriptor(&self, k: u32, chunk_bytes: u32) -> u64 {
        matrix_descriptor(self.address + k * 32, chunk_bytes, 256, 3)
    }
}

impl TileSwizzle for SharedTileSw32 {
    const SWIZZLE: TensorMapSwizzle = TensorMapSwizzle::B32;
    const ROW_BYTES: u32 = 32;
    const REPEAT_BYTES: u32 = 256;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tensor::wgmma::{k_major_sw128, mn_major_sw128};

    #[test]
    fn the_128_byte_tile_gives_the_gemms_descriptors() {
        for address in (0..0x3_0000u32).step_by(1024) {
            let tile = SharedTileSw128::new(address);
            for ks in 0..4 {
                assert_eq!(
                    tile.k_major_descriptor(32 * ks),
                    k_major_sw128(address + 32 * ks)
                );
                assert_eq!(
                    tile.mn_major_descriptor(16 * ks, 8192),
                    mn_major_sw128(address + 2048 * ks, 8192)
                );
            }
        }
    }

    #[test]
    fn descriptors_name_their_swizzle_and_repeat() {
        let fields = |d: u64| (d & 0x3fff, (d >> 16) & 0x3fff, (d >> 32) & 0x3fff, d >> 62);
        assert_eq!(
            fields(SharedTileSw64::new(0x800).k_major_descriptor(32)),
            ((0x800 + 32) >> 4, 1, 512 >> 4, 2)
        );
        assert_eq!(
            fields(SharedTileSw32::new(0x400).mn_major_descriptor(8, 4096)),
            ((0x400 + 8 * 32) >> 4, 4096 >> 4, 256 >> 4, 3)
        );
        assert_eq!(SharedTileSw64::new(512).address_of(2, 16), 512 + 2 * 64);
    }
}
