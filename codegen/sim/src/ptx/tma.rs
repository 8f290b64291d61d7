//! TMA loads (`cp.async.bulk.tensor.Nd.shared::cluster.global.mbarrier::complete_tx::bytes`):
//! one thread copies a box of a tensor into shared memory and completes its bytes on an
//! mbarrier.
//!
//! The box is read from the tensor the map describes ([`crate::tensor_map`]); elements
//! outside the tensor read as the map's fill (zeros, or NaN). It is stored densely,
//! innermost dimension first, with the map's swizzle applied to the shared addresses (16-byte
//! chunk bits 4–6, 4–5 or 4 XORed with the bits from 7, for 128-, 64- and 32-byte swizzles),
//! then the whole box's bytes complete the barrier's transaction count. The box is read at
//! the copy and lands when a thread waits on the barrier (`async_copy.rs`); reading it
//! before is reported. The rules the GPU enforces are checked: the box's innermost start is a
//! multiple of 16 bytes (the H200 stops the kernel otherwise, docs/tensor-cores.md), the
//! destination is aligned (128 bytes, or the swizzle's 8-row repeat), and the barrier is
//! initialised.

use super::super::memory::{AccessFault, MemoryView};
use super::super::program::Reg;
use super::super::tensor_map::{SimTensorMap, TENSOR_MAP_BYTES};
use super::super::thread::FaultKind;
use super::async_copy::PendingTma;

/// `cp.async.bulk.tensor` from global to shared memory, completing an mbarrier.
#[derive(Clone, Debug)]
pub(crate) struct TmaLoad {
    /// The `.shared` destination.
    pub destination: Reg,
    /// The map's address (`tensor_map_address(&map)`).
    pub map: Reg,
    /// The box's start, innermost first, as `i32`.
    pub coordinates: Vec<Reg>,
    pub barrier: Reg,
}

/// Runs `load` for the thread whose frame registers are `regs`.
pub(crate) fn run_tma_load(
    load: &TmaLoad,
    regs: &[u64],
    memory: &mut MemoryView<'_, '_>,
    site: u32,
) -> Result<(), FaultKind> {
    let instruction = |detail: String| FaultKind::Instruction { detail };
    let address = regs[load.map as usize];
    let mut bytes = [0u8; TENSOR_MAP_BYTES];
    for (i, word) in bytes.chunks_mut(8).enumerate() {
        let value = memory
            .load(address + 8 * i as u64, 8, site)
            .map_err(FaultKind::Access)?;
        word.copy_from_slice(&value.to_le_bytes());
    }
    let Some((map, tensor)) = SimTensorMap::from_bytes(&bytes) else {
        return Err(instruction(format!(
            "the tensor map at {address:#x} is not one the simulator made: on the simulator a kernel's `TensorMap` parameter comes from `TensorMap::encode_sim` over a simulator buffer (maps copied into global memory are not simulated)"
        )));
    };
    let rank = map.dims.len();
    if load.coordinates.len() != rank {
        return Err(instruction(format!(
            "a {}-d copy with a rank-{rank} tensor map",
            load.coordinates.len()
        )));
    }
    let start: Vec<i64> = load
        .coordinates
        .iter()
        .map(|&r| i64::from(regs[r as usize] as u32 as i32))
        .collect();
    let e = u64::from(map.element_bytes);
    if (start[0] * e as i64) % 16 != 0 {
        return Err(instruction(format!(
            "the box's innermost coordinate {} is {} bytes into its row, not a multiple of 16: TMA needs the innermost start 16-byte aligned (a multiple of {} elements here); the H200 stops such a copy with CUDA_ERROR_ILLEGAL_INSTRUCTION",
            start[0],
            start[0] * e as i64,
            16 / e
        )));
    }
    let destination = regs[load.destination as usize] & u64::from(u32::MAX);
    let align = if map.swizzle == 0 {
        128
    } else {
        8 * u64::from(map.swizzle)
    };
    if !destination.is_multiple_of(align) {
        return Err(instruction(format!(
            "the copy's shared destination {destination} is not {align}-byte aligned ({})",
            if map.swizzle == 0 {
                "TMA writes 128-byte-aligned shared memory".to_owned()
            } else {
                format!(
                    "the {}-byte swizzle repeats every {align} bytes",
                    map.swizzle
                )
            }
        )));
    }
    let row_bytes = u64::from(map.boxes[0]) * e;
    if map.swizzle != 0 && row_bytes != u64::from(map.swizzle) {
        return Err(instruction(format!(
            "a box row of {row_bytes} bytes with the {}-byte swizzle: the simulator runs swizzled boxes whose inner dimension spans the swizzle exactly",
            map.swizzle
        )));
    }
    let barrier = regs[load.barrier as usize] as u32;
    if memory.shared.barriers.get(barrier).is_none() {
        return Err(instruction(format!(
            "the copy completes the mbarrier at shared byte {barrier}, which no `mbarrier.init` of this block initialised"
        )));
    }
    let swizzle_bits = match map.swizzle {
        128 => 7,
        64 => 3,
        32 => 1,
        _ => 0,
    };
    let count: u64 = map.boxes.iter().map(|&b| u64::from(b)).product();
    let mut writes = Vec::with_capacity(count as usize);
    let mut index = vec![0u64; rank];
    for linear in 0..count {
        let mut rest = linear;
        for (d, extent) in map.boxes.iter().enumerate() {
            index[d] = rest % u64::from(*extent);
            rest /= u64::from(*extent);
        }
        let mut inside = true;
        let mut offset = 0u64;
        for d in 0..rank {
            let c = start[d] + index[d] as i64;
            if c < 0 || c as u64 >= map.dims[d] {
                inside = false;
                break;
            }
            offset += c as u64 * if d == 0 { e } else { map.strides[d - 1] };
        }
        let value = if inside {
            memory
                .load(tensor + offset, e as u32, site)
                .map_err(FaultKind::Access)?
        } else {
            map.fill
        };
        let at = destination + linear * e;
        let at = at ^ (((at >> 7) & swizzle_bits) << 4);
        writes.push((at as u32, e as u32, value));
    }
    // The box lands when a thread waits on the barrier (`async_copy.rs`).
    memory
        .shared
        .issue_tma(PendingTma {
            thread: memory.thread,
            barrier,
            start: destination as u32,
            bytes: map.box_bytes() as u32,
            writes,
            site,
        })
        .map_err(|fault| match fault {
            AccessFault::InFlight { offset, .. } => instruction(format!(
                "the box (shared bytes {destination}..{}) overlaps shared byte {offset}, the destination of a copy still in flight",
                destination + map.box_bytes()
            )),
            other => FaultKind::Access(other),
        })
}
