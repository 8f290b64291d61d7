//! Reduce-copy helpers over LSA peers, written in the kernel language (`#[device]`
//! functions, inlined into the calling kernel): sums and copies of peers' window memory
//! by the whole grid, in 16-byte vectors (one generic function for every element width,
//! through `vload::<T, W>`), and the table of peer addresses they read.

use cudajit_core::device::{
    block_dim, global_index, grid_stride, slice_at, slice_at_mut, thread_idx, vload, vstore,
    DeviceScalar,
};

use super::{lsa_address, Window};
use cudajit::bf16;

/// The most LSA peers the helpers below take: the length of the shared arrays of peer
/// addresses kernels give them (NVLink domains have at most 72 GPUs).
pub const LSA_MAX_PEERS: usize = 72;

/// Reduce-copy over LSA peers: sums the `W`-element vectors `[begin, end)` of the
/// `n_sources` arrays at the addresses `sources[..n_sources]` (peers' windows, in LSA rank
/// order) and stores the sums at the same index of the `n_destinations` arrays at
/// `destinations[..n_destinations]`; `len` is each array's length in elements. `W` elements
/// of `T` make one 16-byte access: `lsa_reduce_copy::<f32, 4>`, `::<f64, 2>`, `::<f16, 8>`
/// (`bf16` sums in `f32`: [`lsa_reduce_copy_bf16`]); `W = 1` reduces single elements (the
/// tail past the last whole vector). The whole grid shares the work (grid-stride, unrolled
/// by 4 so each thread keeps 4 independent loads per source in flight), so every thread of
/// the grid calls it with the same arguments. One-shot all-reduce: all peers' inputs to the
/// local output; two-shot: this rank's share of all inputs to every peer's output.
///
/// Arrays must start at 16-byte boundaries (window offsets do).
#[cudajit::device]
#[allow(clippy::too_many_arguments)]
pub fn lsa_reduce_copy<T: DeviceScalar + core::ops::Add<Output = T>, const W: usize>(
    sources: &[usize],
    n_sources: usize,
    destinations: &[usize],
    n_destinations: usize,
    len: usize,
    begin: usize,
    end: usize,
) {
    let peers = Peers {
        n_sources,
        n_destinations,
        len,
    };
    reduce_grid::<T, W, false>(sources, destinations, peers, begin, end);
}

/// [`lsa_reduce_copy`] for `bf16`, as CUDA C++ reduces it: vectors of `W` elements (8, or 1
/// for the tail), accumulated in `f32` and rounded to `bf16` once per element (so with more
/// than two peers the sum does not depend on rounding after each addition).
#[cudajit::device]
#[allow(clippy::too_many_arguments)]
pub fn lsa_reduce_copy_bf16<const W: usize>(
    sources: &[usize],
    n_sources: usize,
    destinations: &[usize],
    n_destinations: usize,
    len: usize,
    begin: usize,
    end: usize,
) {
    let peers = Peers {
        n_sources,
        n_destinations,
        len,
    };
    reduce_grid::<bf16, W, true>(sources, destinations, peers, begin, end);
}

/// How many of the peer address tables' entries a reduce-copy reads, and the arrays'
/// length in elements.
#[derive(Clone, Copy, cudajit::DeviceCopy)]
#[repr(C)]
struct Peers {
    n_sources: usize,
    n_destinations: usize,
    len: usize,
}

/// The grid-stride loop of a reduce-copy over vectors `[begin, end)`: 4 vectors a thread
/// while 4 remain for every thread, then one (`IN_F32`: `bf16` summed in `f32`). Single
/// elements (`W = 1`, the tail of fewer than a vector's elements) are not unrolled.
#[cudajit::device]
fn reduce_grid<T: DeviceScalar + core::ops::Add<Output = T>, const W: usize, const IN_F32: bool>(
    sources: &[usize],
    destinations: &[usize],
    peers: Peers,
    begin: usize,
    end: usize,
) {
    let stride = grid_stride();
    let mut v = begin + global_index();
    while W > 1 && v + 3 * stride < end {
        reduce_vectors::<T, W, 4, IN_F32>(sources, destinations, peers, v, stride);
        v += 4 * stride;
    }
    while v < end {
        reduce_vectors::<T, W, 1, IN_F32>(sources, destinations, peers, v, stride);
        v += stride;
    }
}

/// The reduce-copy of the `U` vectors `v, v + stride, ..`: the constants are known when
/// the kernel is compiled, so only the branch taken is lowered.
#[cudajit::device]
fn reduce_vectors<
    T: DeviceScalar + core::ops::Add<Output = T>,
    const W: usize,
    const U: usize,
    const IN_F32: bool,
>(
    sources: &[usize],
    destinations: &[usize],
    peers: Peers,
    v: usize,
    stride: usize,
) {
    if IN_F32 {
        sum_bf16_in_f32::<W, U>(sources, destinations, peers, v, stride);
    } else {
        sum_in_own_type::<T, W, U>(sources, destinations, peers, v, stride);
    }
}

/// [`reduce_vectors`] summing in `T`, from the first source's values on (as NCCL adds).
#[cudajit::device]
fn sum_in_own_type<T: DeviceScalar + core::ops::Add<Output = T>, const W: usize, const U: usize>(
    sources: &[usize],
    destinations: &[usize],
    peers: Peers,
    v: usize,
    stride: usize,
) {
    let first = unsafe { slice_at::<T>(sources[0], peers.len) };
    let head: [T; W] = vload(first, v);
    let mut sums = [[head[0]; W]; U];
    for u in 0..U {
        sums[u] = vload(first, v + u * stride);
    }
    // A `while` loop over the sources: LLVM unrolls a `for` range over them by 2, which
    // took the `bf16` kernel past 64 registers and halved its occupancy (20% slower on the
    // H200, examples/reduce_copy_bench.rs).
    let mut p = 1;
    while p < peers.n_sources {
        let source = unsafe { slice_at::<T>(sources[p], peers.len) };
        p += 1;
        for u in 0..U {
            let values: [T; W] = vload(source, v + u * stride);
            for k in 0..W {
                sums[u][k] = sums[u][k] + values[k];
            }
        }
    }
    for d in 0..peers.n_destinations {
        let destination = unsafe { slice_at_mut::<T>(destinations[d], peers.len) };
        for u in 0..U {
            vstore(destination, v + u * stride, sums[u]);
        }
    }
}

/// [`reduce_vectors`] of `bf16` values, summed in `f32` and rounded once.
#[cudajit::device]
fn sum_bf16_in_f32<const W: usize, const U: usize>(
    sources: &[usize],
    destinations: &[usize],
    peers: Peers,
    v: usize,
    stride: usize,
) {
    let mut sums = [[0.0f32; W]; U];
    // `while`, not `for`: see `sum_in_own_type`.
    let mut p = 0;
    while p < peers.n_sources {
        let source = unsafe { slice_at::<bf16>(sources[p], peers.len) };
        p += 1;
        for u in 0..U {
            let values: [bf16; W] = vload(source, v + u * stride);
            for k in 0..W {
                sums[u][k] += values[k].to_f32();
            }
        }
    }
    for d in 0..peers.n_destinations {
        let destination = unsafe { slice_at_mut::<bf16>(destinations[d], peers.len) };
        for u in 0..U {
            let mut rounded = [bf16::from_f32(0.0); W];
            for k in 0..W {
                rounded[k] = bf16::from_f32(sums[u][k]);
            }
            vstore(destination, v + u * stride, rounded);
        }
    }
}

/// Copies the `len` elements at `source` to the `count` arrays at
/// `destinations[first..first + count]` (an LSA push or pull), 16-byte vectors of `W`
/// elements unrolled by 4 when `vectors` says every address allows them (pass `len / W`
/// then, else 0), single elements for the rest. Every thread of the grid calls it with the
/// same arguments.
#[cudajit::device]
pub fn lsa_copy<T: DeviceScalar, const W: usize>(
    source: usize,
    destinations: &[usize],
    first: usize,
    count: usize,
    len: usize,
    vectors: usize,
) {
    let stride = grid_stride();
    let src = unsafe { slice_at::<T>(source, len) };
    let targets = Targets { first, count, len };
    let mut v = global_index();
    while v + 3 * stride < vectors {
        copy_vectors::<T, W, 4>(src, destinations, targets, v, stride);
        v += 4 * stride;
    }
    while v < vectors {
        copy_vectors::<T, W, 1>(src, destinations, targets, v, stride);
        v += stride;
    }
    let mut i = vectors * W + global_index();
    while i < len {
        copy_vectors::<T, 1, 1>(src, destinations, targets, i, stride);
        i += stride;
    }
}

/// The destinations of an LSA copy: `destinations[first..first + count]`, each of `len`
/// elements.
#[derive(Clone, Copy, cudajit::DeviceCopy)]
#[repr(C)]
struct Targets {
    first: usize,
    count: usize,
    len: usize,
}

/// The copy of the `U` vectors `v, v + stride, ..` of `source` to every target.
#[cudajit::device]
fn copy_vectors<T: DeviceScalar, const W: usize, const U: usize>(
    source: &[T],
    destinations: &[usize],
    targets: Targets,
    v: usize,
    stride: usize,
) {
    let head: [T; W] = vload(source, v);
    let mut values = [[head[0]; W]; U];
    for u in 0..U {
        values[u] = vload(source, v + u * stride);
    }
    for d in targets.first..targets.first + targets.count {
        let destination = unsafe { slice_at_mut::<T>(destinations[d], targets.len) };
        for u in 0..U {
            vstore(destination, v + u * stride, values[u]);
        }
    }
}

/// Fills `addresses[p]` with the address of byte `offset` of LSA peer `p`'s part of
/// `window`, for every peer `p < lsa_size`, the CTA's threads sharing the work: call it
/// with a `shared_array::<usize>(72)` ([`LSA_MAX_PEERS`]) and synchronise the CTA before
/// reading it. Traps when the LSA team is larger than the array.
#[cudajit::device]
pub fn lsa_addresses(window: Window, offset: usize, lsa_size: i32, addresses: &mut [usize]) {
    assert!(
        lsa_size as usize <= addresses.len(),
        "more LSA peers than the address array holds"
    );
    let mut p = thread_idx().x as usize;
    while p < lsa_size as usize {
        addresses[p] = lsa_address(window, offset, p as i32);
        p += block_dim().x as usize;
    }
}
