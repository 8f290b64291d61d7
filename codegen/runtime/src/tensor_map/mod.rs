//! TMA tensor maps: the 128-byte descriptors Hopper's tensor memory accelerator reads to
//! copy boxes of a tensor between global and shared memory (`cp.async.bulk.tensor`).
//!
//! - [`layout`]: what a tiled map describes (element type, dimensions, strides, box,
//!   swizzle, L2 promotion, out-of-bounds fill) and every rule of the CUDA driver API's
//!   `cuTensorMapEncodeTiled` checked on the host, each violation named, before the driver
//!   sees it (no GPU needed);
//! - [`encode`]: the encoded map ([`TensorMap`]), made by the driver from a validated
//!   layout and a device buffer that covers it;
//! - [`kernel`]: the map as a kernel parameter (`map: TensorMap`, grid-constant) and
//!   [`tensor_map_address`] for inline PTX;
//! - [`simulator`]: the same map over a simulator buffer (`TensorMap::encode_sim`, or
//!   `encode_buffer` for either backend), so such kernels run on the CPU simulator.

pub mod encode;
pub mod kernel;
pub mod layout;
pub mod simulator;

pub use encode::{TensorMap, TENSOR_MAP_ALIGN, TENSOR_MAP_BYTES};
pub use kernel::tensor_map_address;
pub use layout::{
    L2Promotion, OutOfBoundsFill, TensorMapElement, TensorMapError, TensorMapLayout,
    TensorMapSwizzle, TileSwizzle,
};
