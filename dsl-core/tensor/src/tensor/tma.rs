//! TMA (the Tensor Memory Accelerator, sm_90): one thread moves a whole box of a tensor
//! between global and shared memory, described by a [`TensorMap`](cudajit::tensor_map::TensorMap)
//! the kernel takes as a grid-constant parameter (`tensor_map_address(&map)` is its address).
//!
//! Loads complete an [`mbarrier`](super::mbarrier): announce the box's bytes with
//! `mbarrier_arrive_expect_tx` before (or after) issuing the copy, and wait on the
//! barrier's phase before reading the box. Coordinates are elements, innermost first; a box
//! partly or wholly outside the tensor is filled (zeros, or NaN with
//! `OutOfBoundsFill::Nan`). **The innermost coordinate times the element size must be a
//! multiple of 16 bytes** (an `x` multiple of 4 for f32, of 8 for bf16): otherwise the copy
//! stops the kernel with `CUDA_ERROR_ILLEGAL_INSTRUCTION` (measured on the H200,
//! `docs/tensor-cores.md`). The shared destination is 128-byte aligned, 1024-byte aligned
//! with the 128-byte swizzle.

use super::device_only;
use cudajit::device;
use cudajit_core::ptx;

/// Loads the box at (`x`, `y`) of the 2-D tensor of `map` into shared memory at
/// `destination`, completing `barrier` with its bytes.
#[device]
pub fn tma_load_2d(destination: u32, map: u64, x: i32, y: i32, barrier: u32) {
    ptx!(
        "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [$0], [$1, {$2, $3}], [$4];",
        destination,
        map,
        x,
        y,
        barrier
    );
}

/// Loads the box at `x` of a 1-D tensor.
#[device]
pub fn tma_load_1d(destination: u32, map: u64, x: i32, barrier: u32) {
    ptx!(
        "cp.async.bulk.tensor.1d.shared::cluster.global.mbarrier::complete_tx::bytes [$0], [$1, {$2}], [$3];",
        destination,
        map,
        x,
        barrier
    );
}

/// Loads the box at (`x`, `y`, `z`) of a 3-D tensor.
#[device]
pub fn tma_load_3d(destination: u32, map: u64, x: i32, y: i32, z: i32, barrier: u32) {
    ptx!(
        "cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes [$0], [$1, {$2, $3, $4}], [$5];",
        destination,
        map,
        x,
        y,
        z,
        barrier
    );
}

/// Loads the box at (`x`, `y`, `z`, `w`) of a 4-D tensor.
#[device]
#[allow(clippy::too_many_arguments)]
pub fn tma_load_4d(destination: u32, map: u64, x: i32, y: i32, z: i32, w: i32, barrier: u32) {
    ptx!(
        "cp.async.bulk.tensor.4d.shared::cluster.global.mbarrier::complete_tx::bytes [$0], [$1, {$2, $3, $4, $5}], [$6];",
        destination,
        map,
        x,
        y,
        z,
        w,
        barrier
    );
}

/// Loads the box at `c` (innermost first) of a 5-D tensor.
#[device]
pub fn tma_load_5d(destination: u32, map: u64, c: [i32; 5], barrier: u32) {
    ptx!(
        "cp.async.bulk.tensor.5d.shared::cluster.global.mbarrier::complete_tx::bytes [$0], [$1, {$2, $3, $4, $5, $6}], [$7];",
        destination,
        map,
        c[0],
        c[1],
        c[2],
        c[3],
        c[4],
        barrier
    );
}

/// Stores the box at `source` in shared memory to (`x`, `y`) of the 2-D tensor of `map`
/// (elements past the tensor's far edges are not written). **`x` and `y` must not be
/// negative**: a store's box starts inside the tensor (the H200 stops a store at a negative
/// coordinate with `CUDA_ERROR_ILLEGAL_INSTRUCTION`; the simulator reports it). Complete with [`tma_store_commit`] and
/// [`tma_store_wait`]; before it, a [`fence_proxy_async_shared`] after the threads' writes
/// to `source`.
#[device]
pub fn tma_store_2d(map: u64, x: i32, y: i32, source: u32) {
    ptx!(
        "cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [$0, {$1, $2}], [$3];",
        map,
        x,
        y,
        source
    );
}

/// Stores the box at `source` to `x` of a 1-D tensor (see [`tma_store_2d`]).
#[device]
pub fn tma_store_1d(map: u64, x: i32, source: u32) {
    ptx!(
        "cp.async.bulk.tensor.1d.global.shared::cta.bulk_group [$0, {$1}], [$2];",
        map,
        x,
        source
    );
}

/// Stores the box at `source` to (`x`, `y`, `z`) of a 3-D tensor (see [`tma_store_2d`]).
#[device]
pub fn tma_store_3d(map: u64, x: i32, y: i32, z: i32, source: u32) {
    ptx!(
        "cp.async.bulk.tensor.3d.global.shared::cta.bulk_group [$0, {$1, $2, $3}], [$4];",
        map,
        x,
        y,
        z,
        source
    );
}

/// Stores the box at `source` to (`x`, `y`, `z`, `w`) of a 4-D tensor (see [`tma_store_2d`]).
#[device]
pub fn tma_store_4d(map: u64, x: i32, y: i32, z: i32, w: i32, source: u32) {
    ptx!(
        "cp.async.bulk.tensor.4d.global.shared::cta.bulk_group [$0, {$1, $2, $3, $4}], [$5];",
        map,
        x,
        y,
        z,
        w,
        source
    );
}

/// Stores the box at `source` to `c` (innermost first) of a 5-D tensor (see
/// [`tma_store_2d`]).
#[device]
pub fn tma_store_5d(map: u64, c: [i32; 5], source: u32) {
    ptx!(
        "cp.async.bulk.tensor.5d.global.shared::cta.bulk_group [$0, {$1, $2, $3, $4, $5}], [$6];",
        map,
        c[0],
        c[1],
        c[2],
        c[3],
        c[4],
        source
    );
}

/// Closes the group of TMA stores issued since the last commit.
pub fn tma_store_commit() {
    device_only("tma_store_commit")
}

/// Waits until every committed TMA store of this thread has read its shared memory.
pub fn tma_store_wait() {
    device_only("tma_store_wait")
}

/// Orders this thread's generic-proxy writes to shared memory before later asynchronous
/// (TMA, wgmma) reads of it.
pub fn fence_proxy_async_shared() {
    device_only("fence_proxy_async_shared")
}

/// Brings the box at (`x`, `y`) of the 2-D tensor of `map` into L2 ahead of its load (no
/// shared memory, no barrier; a hint the simulator accepts and does nothing for).
#[device]
pub fn tma_prefetch_2d(map: u64, x: i32, y: i32) {
    ptx!(
        "cp.async.bulk.prefetch.tensor.2d.L2.global [$0, {$1, $2}];",
        map,
        x,
        y
    );
}

/// Brings the descriptor at `map` into the cache ahead of the first copy.
#[device]
pub fn tma_prefetch_descriptor(map: u64) {
    ptx!("prefetch.tensormap [$0];", map);
}
