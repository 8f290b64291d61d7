//! TMA (the Tensor Memory Accelerator, sm_90): one thread moves a whole box of a tensor
//! between global and shared memory, described by a [`TensorMap`](crate::tensor_map::TensorMap)
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

use crate::device;
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

/// Closes the group of TMA stores issued since the last commit.
#[device]
pub fn tma_store_commit() {
    ptx!("cp.async.bulk.commit_group;");
}

/// Waits until every committed TMA store of this thread has read its shared memory.
#[device]
pub fn tma_store_wait() {
    ptx!("cp.async.bulk.wait_group.read 0;");
}

/// Orders this thread's generic-proxy writes to shared memory before later asynchronous
/// (TMA, wgmma) reads of it.
#[device]
pub fn fence_proxy_async_shared() {
    ptx!("fence.proxy.async.shared::cta;");
}

/// Brings the descriptor at `map` into the cache ahead of the first copy.
#[device]
pub fn tma_prefetch_descriptor(map: u64) {
    ptx!("prefetch.tensormap [$0];", map);
}
