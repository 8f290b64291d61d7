//! Tensor maps on the simulator: what a TMA copy (`cp.async.bulk.tensor`) needs to know of
//! the tensor, in the 128 bytes a kernel's `TensorMap` parameter occupies.
//!
//! The driver's encoding (`cuTensorMapEncodeTiled`) is opaque and needs a GPU, so the
//! simulator has its own: a tag, the tensor's address, and the layout's fields. The host
//! makes one over a simulator buffer (`cudajit::TensorMap::encode_sim`); a launch binds the
//! buffer as a read-only region of its own, writes that region's address into the map,
//! and gives the kernel the map's address, which `tensor_map_address(&map)` returns.

/// The tag of a simulator tensor map (its first 8 bytes).
pub const SIM_TENSOR_MAP_TAG: u64 = u64::from_le_bytes(*b"cjsimTM1");
/// The size of a tensor map.
pub const TENSOR_MAP_BYTES: usize = 128;
/// The largest rank.
pub const MAX_RANK: usize = 5;

/// A tiled tensor map as the simulator runs it: dimension 0 innermost.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SimTensorMap {
    /// Bytes per element (1, 2, 4 or 8).
    pub element_bytes: u32,
    /// The bits an element outside the tensor reads as: 0, or a NaN of the element type.
    pub fill: u64,
    /// Elements per dimension.
    pub dims: Vec<u64>,
    /// Bytes between consecutive indices of dimensions 1.. (one fewer than `dims`).
    pub strides: Vec<u64>,
    /// The box, in elements per dimension.
    pub boxes: Vec<u32>,
    /// The shared-memory swizzle's span in bytes: 0 (none), 32, 64 or 128.
    pub swizzle: u32,
}

impl SimTensorMap {
    /// The bytes of one box in shared memory (out-of-bounds fill included): what the
    /// copy completes on its mbarrier.
    pub fn box_bytes(&self) -> u64 {
        self.boxes.iter().map(|&b| u64::from(b)).product::<u64>() * u64::from(self.element_bytes)
    }

    /// The map's 128 bytes, with `tensor` (an address the reader understands) as the
    /// tensor's.
    pub fn to_bytes(&self, tensor: u64) -> [u8; TENSOR_MAP_BYTES] {
        let mut bytes = [0u8; TENSOR_MAP_BYTES];
        let mut put = |at: usize, value: &[u8]| bytes[at..at + value.len()].copy_from_slice(value);
        put(0, &SIM_TENSOR_MAP_TAG.to_le_bytes());
        put(8, &tensor.to_le_bytes());
        put(16, &self.element_bytes.to_le_bytes());
        put(20, &self.swizzle.to_le_bytes());
        put(24, &self.fill.to_le_bytes());
        put(32, &[self.dims.len() as u8]);
        for (i, dim) in self.dims.iter().enumerate() {
            put(40 + 8 * i, &dim.to_le_bytes());
        }
        for (i, stride) in self.strides.iter().enumerate() {
            put(80 + 8 * i, &stride.to_le_bytes());
        }
        for (i, extent) in self.boxes.iter().enumerate() {
            put(112 + 2 * i, &(*extent as u16).to_le_bytes());
        }
        bytes
    }

    /// The map and its tensor's address, if `bytes` are a simulator map.
    pub fn from_bytes(bytes: &[u8; TENSOR_MAP_BYTES]) -> Option<(SimTensorMap, u64)> {
        let u64_at = |at: usize| u64::from_le_bytes(bytes[at..at + 8].try_into().unwrap_or([0; 8]));
        let u32_at = |at: usize| u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap_or([0; 4]));
        if u64_at(0) != SIM_TENSOR_MAP_TAG {
            return None;
        }
        let rank = usize::from(bytes[32]);
        if !(1..=MAX_RANK).contains(&rank) {
            return None;
        }
        let map = SimTensorMap {
            element_bytes: u32_at(16),
            swizzle: u32_at(20),
            fill: u64_at(24),
            dims: (0..rank).map(|i| u64_at(40 + 8 * i)).collect(),
            strides: (0..rank - 1).map(|i| u64_at(80 + 8 * i)).collect(),
            boxes: (0..rank)
                .map(|i| u32::from(u16::from_le_bytes([bytes[112 + 2 * i], bytes[113 + 2 * i]])))
                .collect(),
        };
        Some((map, u64_at(8)))
    }

    /// Whether `bytes` are a simulator map (the tag), for a launch telling the driver's
    /// maps apart.
    pub fn is_sim_map(bytes: &[u8; TENSOR_MAP_BYTES]) -> bool {
        bytes[..8] == SIM_TENSOR_MAP_TAG.to_le_bytes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_map_round_trips_through_its_bytes() {
        let map = SimTensorMap {
            element_bytes: 2,
            fill: 0x7fff,
            dims: vec![4096, 512, 3],
            strides: vec![8192, 8192 * 512],
            boxes: vec![64, 256, 1],
            swizzle: 128,
        };
        let bytes = map.to_bytes(0xdead_0000);
        assert!(SimTensorMap::is_sim_map(&bytes));
        assert_eq!(
            SimTensorMap::from_bytes(&bytes),
            Some((map.clone(), 0xdead_0000))
        );
        assert_eq!(map.box_bytes(), 64 * 256 * 2);
        assert_eq!(SimTensorMap::from_bytes(&[0; 128]), None);
    }
}
