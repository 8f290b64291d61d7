//! The swizzles of TMA and `wgmma`: a byte offset within a tile (from an address aligned
//! to the swizzle's repeat) to where the byte is stored. Bits 4 .. 4 + n of the offset
//! (the 16-byte chunk within a `16 · 2^n`-byte row) are XORed with bits 7 .. 7 + n (the
//! row within its group of 8): `Swizzle<n, 4, 3>` in CuTe's notation. Each is its own
//! inverse. `#[device]` functions, so kernels and the host compute the same offsets.

use cudajit::device;

/// The 128-byte swizzle (`CU_TENSOR_MAP_SWIZZLE_128B`, descriptor layout 1): chunk bits
/// 4–6 XOR bits 7–9; repeats every 1024 bytes.
#[device]
pub fn swizzle_128(offset: u32) -> u32 {
    offset ^ (((offset >> 7) & 7) << 4)
}

/// The 64-byte swizzle (`CU_TENSOR_MAP_SWIZZLE_64B`, descriptor layout 2): chunk bits 4–5
/// XOR bits 7–8; repeats every 512 bytes.
#[device]
pub fn swizzle_64(offset: u32) -> u32 {
    offset ^ (((offset >> 7) & 3) << 4)
}

/// The 32-byte swizzle (`CU_TENSOR_MAP_SWIZZLE_32B`, descriptor layout 3): chunk bit 4
/// XOR bit 7; repeats every 256 bytes.
#[device]
pub fn swizzle_32(offset: u32) -> u32 {
    offset ^ (((offset >> 7) & 1) << 4)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_swizzle_permutes_chunks_within_its_rows_and_is_its_own_inverse() {
        for (swizzle, width) in [
            (swizzle_128 as fn(u32) -> u32, 128u32),
            (swizzle_64, 64),
            (swizzle_32, 32),
        ] {
            for offset in 0..16 * width {
                let stored = swizzle(offset);
                assert_eq!(swizzle(stored), offset);
                // The same 128-byte line (the row of 128 B), the same byte in its chunk.
                assert_eq!(stored / 128, offset / 128);
                assert_eq!(stored % 16, offset % 16);
            }
        }
        // Row 3 of a 128-byte-swizzled tile: chunk c is stored at chunk c ^ 3.
        assert_eq!(swizzle_128(3 * 128 + 16), 3 * 128 + 2 * 16);
        // Row 1 of rows of 64 bytes is the upper half of line 0: unswizzled (bit 7 is 0).
        assert_eq!(swizzle_64(64 + 16), 64 + 16);
        assert_eq!(swizzle_64(2 * 64 + 16), 2 * 64);
    }
}
