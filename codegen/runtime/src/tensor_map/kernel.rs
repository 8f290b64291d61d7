//! A tensor map in a kernel: `map: TensorMap` in a `#[kernel]`'s signature crosses as a
//! 128-byte, 64-byte-aligned grid-constant parameter, and [`tensor_map_address`] gives its
//! address for the `cp.async.bulk.tensor` of inline PTX.

use super::TensorMap;

/// The generic address of the kernel's tensor-map parameter `map` (`&map` of
/// `map: TensorMap`), for the `[tensorMap, {..}]` operand of `cp.async.bulk.tensor`
/// and `prefetch.tensormap` in `ptx!`.
///
/// The map stays in the kernel's parameter memory (the parameter is `grid_constant`), so
/// this is CUDA C++'s `reinterpret_cast<uint64_t>(&map)` of a
/// `const __grid_constant__ CUtensorMap map`: no copy, no fence needed.
pub fn tensor_map_address(map: &TensorMap<'_>) -> u64 {
    let _ = map;
    panic!(
        "`tensor_map_address()` is a device intrinsic: it only has a meaning inside a \
         `#[kernel]` function launched on the GPU"
    )
}
