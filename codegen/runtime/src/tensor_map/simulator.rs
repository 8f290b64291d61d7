//! Tensor maps for the CPU simulator: the same [`TensorMapLayout`] over a simulator buffer,
//! encoded without the driver, so a kernel taking `map: TensorMap` launches on both kinds
//! of stream.
//!
//! The 128 bytes carry the simulator's tag, the address of the buffer's memory on the host
//! and the layout (`cudajit_sim::tensor_map`); the map borrows the buffer for its lifetime,
//! so that address stays valid while the map can be used. A launch on the simulator binds
//! the buffer and gives the kernel the map's address; the TMA copies in the kernel's inline
//! PTX read boxes from it and write them to it (as a driver map of a `CudaSlice` borrowed
//! the same way lets TMA stores write the GPU buffer).

use cudajit_sim::tensor_map::SimTensorMap;
use cudajit_sim::{DeviceMemory, SimArg};

use super::encode::TensorMap;
use super::layout::{OutOfBoundsFill, TensorMapElement, TensorMapError, TensorMapLayout};
use crate::backend::Buffer;
use crate::sim::{BufferElement, SimBuffer};

/// The address the simulator treats every buffer as starting at, for the layout's
/// alignment rules (its allocations are 256-byte aligned).
const SIM_BUFFER_ADDRESS: u64 = 256;

impl<'buf> TensorMap<'buf> {
    /// Encodes `layout` over a simulator buffer, after the same checks as
    /// [`TensorMap::encode`]: every rule of the layout, the element size, and that the
    /// buffer holds the whole tensor. Element strides other than 1 are not simulated.
    pub fn encode_sim<T: BufferElement>(
        layout: &TensorMapLayout,
        buffer: &'buf SimBuffer<T>,
    ) -> Result<Self, TensorMapError> {
        let memory = buffer.memory();
        let buffer_element = T::ELEMENT.size() as u64;
        if buffer_element != layout.element.size() {
            return Err(TensorMapError::ElementSize {
                element: layout.element,
                map_element: layout.element.size(),
                buffer_element,
            });
        }
        let buffer_bytes = memory.len() as u64;
        let extent_bytes = layout.extent_bytes();
        if extent_bytes > buffer_bytes {
            return Err(TensorMapError::BufferTooSmall {
                buffer_bytes,
                extent_bytes,
            });
        }
        layout.validate(SIM_BUFFER_ADDRESS)?;
        if layout.element_strides.iter().any(|&s| s != 1) {
            return Err(TensorMapError::NotSimulated {
                what: format!(
                    "element strides {:?} (the simulator's TMA copies every element: 1 in each dimension)",
                    layout.element_strides
                ),
            });
        }
        let fill = match (layout.oob_fill, layout.element) {
            (OutOfBoundsFill::Zero, _) => 0,
            (OutOfBoundsFill::Nan, TensorMapElement::F16 | TensorMapElement::Bf16) => 0x7fff,
            (OutOfBoundsFill::Nan, TensorMapElement::F64) => 0x7fff_ffff_ffff_ffff,
            (OutOfBoundsFill::Nan, _) => 0x7fff_ffff,
        };
        let map = SimTensorMap {
            element_bytes: layout.element.size() as u32,
            fill,
            dims: layout.global_dims.clone(),
            strides: layout.global_strides.clone(),
            boxes: layout.box_dims.clone(),
            swizzle: layout.swizzle.bytes().unwrap_or(0) as u32,
        };
        // The host address of the buffer's memory, read back by `sim_arg` while the map
        // (and so the borrow of the buffer) lives.
        let bytes = map.to_bytes(memory as *const DeviceMemory as u64);
        let mut opaque = [0u64; 16];
        for (word, chunk) in opaque.iter_mut().zip(bytes.chunks(8)) {
            *word = u64::from_le_bytes(chunk.try_into().unwrap_or([0; 8]));
        }
        Ok(TensorMap::from_opaque(opaque))
    }

    /// Encodes `layout` over a buffer of either backend: [`TensorMap::encode`] (the
    /// driver) for GPU memory, [`TensorMap::encode_sim`] for simulator memory.
    pub fn encode_buffer<T: BufferElement>(
        layout: &TensorMapLayout,
        buffer: &'buf Buffer<T>,
    ) -> Result<Self, TensorMapError> {
        match (buffer.cuda(), buffer.sim()) {
            (Some(slice), _) => TensorMap::encode(layout, slice),
            (_, Some(sim)) => TensorMap::encode_sim(layout, sim),
            _ => unreachable!("a buffer is GPU memory or simulator memory"),
        }
    }

    /// Whether this map was made for the simulator ([`TensorMap::encode_sim`]).
    pub fn is_sim(&self) -> bool {
        SimTensorMap::is_sim_map(self.as_bytes())
    }

    /// The map as a simulator launch argument, if it is a simulator map.
    pub(crate) fn sim_arg(&self) -> Option<SimArg<'buf>> {
        let (map, address) = SimTensorMap::from_bytes(self.as_bytes())?;
        // SAFETY: only `encode_sim` writes the simulator's tag (a map has no other
        // constructor from bytes, and the driver's encoding starts with the tensor's GPU
        // address, which is never the tag), and it writes the address of the memory of a
        // `SimBuffer` that `self` borrows for `'buf`: the memory is alive and unmoved.
        let memory = unsafe { &*(address as *const DeviceMemory) };
        Some(SimArg::TensorMap { memory, map })
    }
}
