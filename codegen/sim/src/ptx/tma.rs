//! TMA copies (`cp.async.bulk.tensor.Nd.shared::cluster.global.mbarrier::complete_tx::bytes`
//! and `.global.shared::cta.bulk_group`): one thread copies a box of a tensor into shared
//! memory, completing its bytes on an mbarrier, or out of it.
//!
//! The box is read from the tensor the map describes ([`crate::tensor_map`]); elements
//! outside the tensor read as the map's fill (zeros, or NaN). It is stored densely,
//! innermost dimension first, with the map's swizzle applied to the shared addresses (16-byte
//! chunk bits 4–6, 4–5 or 4 XORed with the bits from 7, for 128-, 64- and 32-byte swizzles),
//! then the whole box's bytes complete the barrier's transaction count. The box is read at
//! the copy and lands when a thread waits on the barrier (`async_copy.rs`); reading it
//! before is reported. The rules the GPU enforces are checked: the box's innermost start is a
//! multiple of 16 bytes (the H200 stops the kernel otherwise, docs/tensor-cores.md), a
//! store's coordinates are not negative (likewise: loads may start outside the tensor,
//! stores may not), the destination is aligned (128 bytes, or the swizzle's 8-row repeat),
//! and the barrier is initialised. A `.multicast::cluster` load issues the same box into
//! every masked block of the cluster, at the same shared offset, completing each block's
//! barrier at the same offset.

use super::super::memory::{AccessFault, MemoryView};
use super::super::tensor_map::{SimTensorMap, TENSOR_MAP_BYTES};
use crate::memory::async_copy::PendingTma;
use crate::memory::async_reads::AsyncReader;
use crate::thread_state::FaultKind;
use crate::thread_state::Reg;

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
    /// `.multicast::cluster`: the 16-bit mask of the cluster's blocks (bit `r` for rank
    /// `r`) whose shared memory receives the box at `destination`, each completing its
    /// own barrier at `barrier`; `None`: this block alone.
    pub multicast: Option<Reg>,
}

/// `cp.async.bulk.tensor` from shared to global memory (`.bulk_group`): the box at the
/// coordinates, out of shared memory at `source`, written where it lies inside the tensor.
#[derive(Clone, Debug)]
pub(crate) struct TmaStore {
    pub map: Reg,
    pub coordinates: Vec<Reg>,
    /// The `.shared` source.
    pub source: Reg,
}

/// The map at the address in `map` and its tensor's address, and the box's start checked
/// against its rank and the 16-byte rule.
fn read_map(
    map: Reg,
    coordinates: &[Reg],
    regs: &[u64],
    memory: &mut MemoryView<'_, '_>,
    site: u32,
) -> Result<(SimTensorMap, u64, Vec<i64>), FaultKind> {
    let instruction = |detail: String| FaultKind::Instruction { detail };
    let address = regs[map as usize];
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
    if coordinates.len() != rank {
        return Err(instruction(format!(
            "a {}-d copy with a rank-{rank} tensor map",
            coordinates.len()
        )));
    }
    let start: Vec<i64> = coordinates
        .iter()
        .map(|&r| i64::from(regs[r as usize] as u32 as i32))
        .collect();
    let e = i64::from(map.element_bytes);
    if (start[0] * e) % 16 != 0 {
        return Err(instruction(format!(
            "the box's innermost coordinate {} is {} bytes into its row, not a multiple of 16: TMA needs the innermost start 16-byte aligned (a multiple of {} elements here); the H200 stops such a copy with CUDA_ERROR_ILLEGAL_INSTRUCTION",
            start[0],
            start[0] * e,
            16 / e
        )));
    }
    Ok((map, tensor, start))
}

/// Checks the box's shared address: aligned as TMA requires, a swizzle spanning its rows.
fn check_box(map: &SimTensorMap, shared: u64, what: &str) -> Result<(), FaultKind> {
    let instruction = |detail: String| FaultKind::Instruction { detail };
    let align = if map.swizzle == 0 {
        128
    } else {
        8 * u64::from(map.swizzle)
    };
    if !shared.is_multiple_of(align) {
        return Err(instruction(format!(
            "the copy's shared {what} {shared} is not {align}-byte aligned ({})",
            if map.swizzle == 0 {
                "TMA copies 128-byte-aligned shared memory".to_owned()
            } else {
                format!(
                    "the {}-byte swizzle repeats every {align} bytes",
                    map.swizzle
                )
            }
        )));
    }
    let row_bytes = u64::from(map.boxes[0]) * u64::from(map.element_bytes);
    if map.swizzle != 0 && row_bytes != u64::from(map.swizzle) {
        return Err(instruction(format!(
            "a box row of {row_bytes} bytes with the {}-byte swizzle: the simulator runs swizzled boxes whose inner dimension spans the swizzle exactly",
            map.swizzle
        )));
    }
    Ok(())
}

/// Each element of the box: its shared address (swizzled, from `shared`) and, if it lies
/// inside the tensor, its byte offset there.
fn box_elements(map: &SimTensorMap, start: &[i64], shared: u64) -> Vec<(u64, Option<u64>)> {
    let rank = map.dims.len();
    let e = u64::from(map.element_bytes);
    let swizzle_bits = match map.swizzle {
        128 => 7,
        64 => 3,
        32 => 1,
        _ => 0,
    };
    let count: u64 = map.boxes.iter().map(|&b| u64::from(b)).product();
    let mut index = vec![0u64; rank];
    (0..count)
        .map(|linear| {
            let mut rest = linear;
            for (d, extent) in map.boxes.iter().enumerate() {
                index[d] = rest % u64::from(*extent);
                rest /= u64::from(*extent);
            }
            let mut offset = Some(0u64);
            for d in 0..rank {
                let c = start[d] + index[d] as i64;
                if c < 0 || c as u64 >= map.dims[d] {
                    offset = None;
                    break;
                }
                offset = offset.map(|o| o + c as u64 * if d == 0 { e } else { map.strides[d - 1] });
            }
            let at = shared + linear * e;
            (at ^ (((at >> 7) & swizzle_bits) << 4), offset)
        })
        .collect()
}

/// Runs `load` for the thread whose frame registers are `regs`.
pub(crate) fn run_tma_load(
    load: &TmaLoad,
    regs: &[u64],
    memory: &mut MemoryView<'_, '_>,
    site: u32,
) -> Result<(), FaultKind> {
    let instruction = |detail: String| FaultKind::Instruction { detail };
    let (map, tensor, start) = read_map(load.map, &load.coordinates, regs, memory, site)?;
    let e = u64::from(map.element_bytes);
    let destination = regs[load.destination as usize] & u64::from(u32::MAX);
    check_box(&map, destination, "destination")?;
    let barrier = regs[load.barrier as usize] as u32;
    let ranks = match load.multicast {
        None => 1 << memory.cluster.rank,
        Some(mask) => {
            let mask = regs[mask as usize] as u32 & 0xffff;
            let size = memory.cluster.size;
            if mask == 0 || mask >> size != 0 {
                return Err(instruction(format!(
                    "a multicast to the blocks of mask {mask:#06x}, but the cluster has {size} blocks (ranks 0 to {}): the mask is non-zero with bits below `cluster_nctarank()` only",
                    size - 1
                )));
            }
            mask
        }
    };
    let mut writes = Vec::new();
    for (at, inside) in box_elements(&map, &start, destination) {
        let value = match inside {
            Some(offset) => memory
                .load(tensor + offset, e as u32, site)
                .map_err(FaultKind::Access)?,
            None => map.fill,
        };
        writes.push((at as u32, e as u32, value));
    }
    let thread = memory.thread;
    // The box overwrites this block's buffer: no asynchronous read the issuing thread does
    // not know retired may still read it (other blocks' readers are not followed).
    if ranks & (1 << memory.cluster.rank) != 0 {
        memory
            .shared
            .reads
            .check_write(thread, destination as usize, map.box_bytes() as u32)
            .map_err(|pending| FaultKind::Access(AccessFault::AsyncReadPending(pending)))?;
    }
    for rank in (0..16).filter(|r| ranks & (1 << r) != 0) {
        let shared = memory.shared_of(rank);
        if shared.barriers.get(barrier).is_none() {
            return Err(instruction(format!(
                "the copy completes the mbarrier at shared byte {barrier} of block rank {rank}, which no `mbarrier.init` of that block initialised"
            )));
        }
        // The box lands when a thread of that block waits on its barrier (`async_copy.rs`).
        shared
            .issue_tma(PendingTma {
                thread,
                barrier,
                start: destination as u32,
                bytes: map.box_bytes() as u32,
                writes: writes.clone(),
                site,
                swizzle: map.swizzle,
            })
            .map_err(|fault| match fault {
                AccessFault::InFlight { offset, .. } => instruction(format!(
                    "the box (shared bytes {destination}..{} of block rank {rank}) overlaps shared byte {offset}, the destination of a copy still in flight",
                    destination + map.box_bytes()
                )),
                other => FaultKind::Access(other),
            })?;
    }
    Ok(())
}

/// Runs `store` for the thread whose frame registers are `regs`: the box is read from
/// shared memory and written at once (its `commit_group`/`wait_group` have nothing left
/// to wait for).
pub(crate) fn run_tma_store(
    store: &TmaStore,
    regs: &[u64],
    memory: &mut MemoryView<'_, '_>,
    site: u32,
) -> Result<(), FaultKind> {
    let (map, tensor, start) = read_map(store.map, &store.coordinates, regs, memory, site)?;
    if let Some((dimension, &coordinate)) = start.iter().enumerate().find(|(_, &c)| c < 0) {
        return Err(FaultKind::Instruction {
            detail: format!(
                "the store's coordinate {coordinate} (dimension {dimension}) is negative: a TMA store's box may run past the tensor's far edges (those elements are not written) but must start inside it, at non-negative coordinates; the H200 stops such a store with CUDA_ERROR_ILLEGAL_INSTRUCTION"
            ),
        });
    }
    let source = regs[store.source as usize] & u64::from(u32::MAX);
    check_box(&map, source, "source")?;
    let e = map.element_bytes;
    for (at, inside) in box_elements(&map, &start, source) {
        let Some(offset) = inside else {
            continue;
        };
        let value = memory.shared.load_async(at, e).map_err(FaultKind::Access)?;
        // Until the thread's bulk wait retires the store, its source may be read.
        memory
            .shared
            .reads
            .read(AsyncReader::TmaStore(memory.thread), at as usize, e, site);
        memory
            .store(tensor + offset, e, value, site)
            .map_err(FaultKind::Access)?;
    }
    Ok(())
}
