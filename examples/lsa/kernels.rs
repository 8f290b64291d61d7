//! The `#[kernel]`s of the LSA examples, shared with tests/nccl_device.rs (which compiles
//! and links them on the CPU) and the GPU benchmark.

use cudajit::nccl::device::{self as nccl, DevComm, MemoryOrder, Window};
use cudajit::prelude::*;

/// Copies the first `count` floats of LSA peer `lsa_rank + 1`'s window to byte `out_offset`
/// of this rank's window.
#[kernel]
pub fn peer_read(comm: DevComm, window: Window, count: usize, out_offset: usize) {
    let mut barrier = [0u64; 8];
    nccl::lsa_barrier_init(&mut barrier, &comm, block_idx().x);
    // Every peer has filled its window before anyone reads it.
    nccl::lsa_barrier_sync(&mut barrier, MemoryOrder::Acquire);
    let peer = (nccl::lsa_rank(&comm) + 1) % nccl::lsa_size(&comm);
    let src = unsafe { slice_at::<f32>(nccl::lsa_address(window, 0, peer), count) };
    let out = unsafe { slice_at_mut::<f32>(nccl::local_address(window, out_offset), count) };
    let vectors = count / 4;
    let mut v = global_index();
    while v < vectors {
        let (a, b, c, d) = vload4(src, v);
        vstore4(out, v, (a, b, c, d));
        v += grid_stride();
    }
    let mut i = vectors * 4 + global_index();
    while i < count {
        out[i] = src[i];
        i += grid_stride();
    }
    // Nobody overwrites its window before every peer has read it.
    nccl::lsa_barrier_sync(&mut barrier, MemoryOrder::Release);
    nccl::lsa_barrier_destroy(&mut barrier);
}

/// One-shot: `out = sum over LSA peers of their input`, every rank computing all of it.
#[kernel]
pub fn all_reduce_one_shot<T: DeviceScalar + core::ops::Add<Output = T>>(
    comm: DevComm,
    window: Window,
    count: usize,
    out_offset: usize,
) {
    let mut barrier = [0u64; 8];
    nccl::lsa_barrier_init(&mut barrier, &comm, block_idx().x);
    nccl::lsa_barrier_sync(&mut barrier, MemoryOrder::Acquire);
    let peers = nccl::lsa_size(&comm);
    let out = unsafe { slice_at_mut::<T>(nccl::local_address(window, out_offset), count) };
    let vectors = count / 4;
    let mut v = global_index();
    while v < vectors {
        let first = unsafe { slice_at::<T>(nccl::lsa_address(window, 0, 0), count) };
        let (mut a, mut b, mut c, mut d) = vload4(first, v);
        let mut peer = 1;
        while peer < peers {
            let src = unsafe { slice_at::<T>(nccl::lsa_address(window, 0, peer), count) };
            let (e, f, g, h) = vload4(src, v);
            a = a + e;
            b = b + f;
            c = c + g;
            d = d + h;
            peer += 1;
        }
        vstore4(out, v, (a, b, c, d));
        v += grid_stride();
    }
    let mut i = vectors * 4 + global_index();
    while i < count {
        let first = unsafe { slice_at::<T>(nccl::lsa_address(window, 0, 0), count) };
        let mut sum = first[i];
        let mut peer = 1;
        while peer < peers {
            let src = unsafe { slice_at::<T>(nccl::lsa_address(window, 0, peer), count) };
            sum = sum + src[i];
            peer += 1;
        }
        out[i] = sum;
        i += grid_stride();
    }
    nccl::lsa_barrier_sync(&mut barrier, MemoryOrder::Release);
    nccl::lsa_barrier_destroy(&mut barrier);
}

/// Two-shot: LSA rank `r` reduces vectors `r*share .. (r+1)*share` over all peers
/// (reduce-scatter) and stores the sums into every peer's output (all-gather).
#[kernel]
pub fn all_reduce_two_shot<T: DeviceScalar + core::ops::Add<Output = T>>(
    comm: DevComm,
    window: Window,
    count: usize,
    out_offset: usize,
) {
    let mut barrier = [0u64; 8];
    nccl::lsa_barrier_init(&mut barrier, &comm, block_idx().x);
    nccl::lsa_barrier_sync(&mut barrier, MemoryOrder::Acquire);
    let peers = nccl::lsa_size(&comm);
    let me = nccl::lsa_rank(&comm) as usize;
    let vectors = count / 4;
    let share = (vectors + peers as usize - 1) / peers as usize;
    let start = me * share;
    let end = (start + share).min(vectors);
    let mut v = start + global_index();
    while v < end {
        let first = unsafe { slice_at::<T>(nccl::lsa_address(window, 0, 0), count) };
        let (mut a, mut b, mut c, mut d) = vload4(first, v);
        let mut peer = 1;
        while peer < peers {
            let src = unsafe { slice_at::<T>(nccl::lsa_address(window, 0, peer), count) };
            let (e, f, g, h) = vload4(src, v);
            a = a + e;
            b = b + f;
            c = c + g;
            d = d + h;
            peer += 1;
        }
        let mut peer = 0;
        while peer < peers {
            let dst =
                unsafe { slice_at_mut::<T>(nccl::lsa_address(window, out_offset, peer), count) };
            vstore4(dst, v, (a, b, c, d));
            peer += 1;
        }
        v += grid_stride();
    }
    // The last `count % 4` elements: LSA rank 0 reduces and distributes them.
    let mut i = vectors * 4 + global_index();
    while me == 0 && i < count {
        let first = unsafe { slice_at::<T>(nccl::lsa_address(window, 0, 0), count) };
        let mut sum = first[i];
        let mut peer = 1;
        while peer < peers {
            let src = unsafe { slice_at::<T>(nccl::lsa_address(window, 0, peer), count) };
            sum = sum + src[i];
            peer += 1;
        }
        let mut peer = 0;
        while peer < peers {
            let dst =
                unsafe { slice_at_mut::<T>(nccl::lsa_address(window, out_offset, peer), count) };
            dst[i] = sum;
            peer += 1;
        }
        i += grid_stride();
    }
    nccl::lsa_barrier_sync(&mut barrier, MemoryOrder::Release);
    nccl::lsa_barrier_destroy(&mut barrier);
}
