//! Reduce-copy helpers over LSA peers, written in the kernel language (`#[device]`
//! functions, inlined into the calling kernel): sums and copies of peers' window memory
//! by the whole grid, in 16-byte vectors, and the table of peer addresses they read.

use cudajit_core::device::{
    block_dim, global_index, grid_stride, slice_at, slice_at_mut, thread_idx, vload2, vload4,
    vload8, vstore2, vstore4, vstore8, DeviceScalar,
};

use super::{lsa_address, Window};
use cudajit::bf16;

/// The most LSA peers the helpers below take: the length of the shared arrays of peer
/// addresses kernels give them (NVLink domains have at most 72 GPUs).
pub const LSA_MAX_PEERS: usize = 72;

/// Reduce-copy over LSA peers: sums the 4-element vectors `[begin, end)` of the `n_sources`
/// arrays at the addresses `sources[..n_sources]` (peers' windows, in LSA rank order) and
/// stores the sums at the same index of the `n_destinations` arrays at
/// `destinations[..n_destinations]`; `len` is each array's length in elements. The whole
/// grid shares the work (grid-stride, unrolled by 4 so each thread keeps 4 independent
/// 16-byte loads per source in flight), so every thread of the grid calls it with the same
/// arguments. One-shot all-reduce: all peers' inputs to the local output; two-shot: this
/// rank's share of all inputs to every peer's output.
///
/// Arrays must start at 16-byte boundaries (window offsets do); the elements past the last
/// whole vector are the caller's (`lsa_reduce_copy_tail`).
#[cudajit::device]
#[allow(clippy::too_many_arguments)]
pub fn lsa_reduce_copy<T: DeviceScalar + core::ops::Add<Output = T>>(
    sources: &[usize],
    n_sources: usize,
    destinations: &[usize],
    n_destinations: usize,
    len: usize,
    begin: usize,
    end: usize,
) {
    let stride = grid_stride();
    let mut v = begin + global_index();
    while v + 3 * stride < end {
        let first = unsafe { slice_at::<T>(sources[0], len) };
        let (mut a0, mut b0, mut c0, mut d0) = vload4(first, v);
        let (mut a1, mut b1, mut c1, mut d1) = vload4(first, v + stride);
        let (mut a2, mut b2, mut c2, mut d2) = vload4(first, v + 2 * stride);
        let (mut a3, mut b3, mut c3, mut d3) = vload4(first, v + 3 * stride);
        let mut p = 1;
        while p < n_sources {
            let src = unsafe { slice_at::<T>(sources[p], len) };
            let (e0, f0, g0, h0) = vload4(src, v);
            let (e1, f1, g1, h1) = vload4(src, v + stride);
            let (e2, f2, g2, h2) = vload4(src, v + 2 * stride);
            let (e3, f3, g3, h3) = vload4(src, v + 3 * stride);
            a0 = a0 + e0;
            b0 = b0 + f0;
            c0 = c0 + g0;
            d0 = d0 + h0;
            a1 = a1 + e1;
            b1 = b1 + f1;
            c1 = c1 + g1;
            d1 = d1 + h1;
            a2 = a2 + e2;
            b2 = b2 + f2;
            c2 = c2 + g2;
            d2 = d2 + h2;
            a3 = a3 + e3;
            b3 = b3 + f3;
            c3 = c3 + g3;
            d3 = d3 + h3;
            p += 1;
        }
        let mut d = 0;
        while d < n_destinations {
            let dst = unsafe { slice_at_mut::<T>(destinations[d], len) };
            vstore4(dst, v, (a0, b0, c0, d0));
            vstore4(dst, v + stride, (a1, b1, c1, d1));
            vstore4(dst, v + 2 * stride, (a2, b2, c2, d2));
            vstore4(dst, v + 3 * stride, (a3, b3, c3, d3));
            d += 1;
        }
        v += 4 * stride;
    }
    while v < end {
        let first = unsafe { slice_at::<T>(sources[0], len) };
        let (mut a, mut b, mut c, mut e) = vload4(first, v);
        let mut p = 1;
        while p < n_sources {
            let src = unsafe { slice_at::<T>(sources[p], len) };
            let (w, x, y, z) = vload4(src, v);
            a = a + w;
            b = b + x;
            c = c + y;
            e = e + z;
            p += 1;
        }
        let mut d = 0;
        while d < n_destinations {
            let dst = unsafe { slice_at_mut::<T>(destinations[d], len) };
            vstore4(dst, v, (a, b, c, e));
            d += 1;
        }
        v += stride;
    }
}

/// [`lsa_reduce_copy`] for single elements `[begin, end)` (the tail past the last whole
/// vector), by the whole grid.
#[cudajit::device]
#[allow(clippy::too_many_arguments)]
pub fn lsa_reduce_copy_tail<T: DeviceScalar + core::ops::Add<Output = T>>(
    sources: &[usize],
    n_sources: usize,
    destinations: &[usize],
    n_destinations: usize,
    len: usize,
    begin: usize,
    end: usize,
) {
    let mut i = begin + global_index();
    while i < end {
        let first = unsafe { slice_at::<T>(sources[0], len) };
        let mut sum = first[i];
        let mut p = 1;
        while p < n_sources {
            let src = unsafe { slice_at::<T>(sources[p], len) };
            sum = sum + src[i];
            p += 1;
        }
        let mut d = 0;
        while d < n_destinations {
            let dst = unsafe { slice_at_mut::<T>(destinations[d], len) };
            dst[i] = sum;
            d += 1;
        }
        i += grid_stride();
    }
}

/// Copies the `len` elements at `source` to the `count` arrays at
/// `destinations[first..first + count]` (an LSA push or pull), 16-byte vectors unrolled by 4
/// when `vectors` says every address allows them (pass `len / 4` then, else 0), single
/// elements for the rest. Every thread of the grid calls it with the same arguments.
#[cudajit::device]
pub fn lsa_copy<T: DeviceScalar>(
    source: usize,
    destinations: &[usize],
    first: usize,
    count: usize,
    len: usize,
    vectors: usize,
) {
    let stride = grid_stride();
    let src = unsafe { slice_at::<T>(source, len) };
    let mut v = global_index();
    while v + 3 * stride < vectors {
        let (a0, b0, c0, d0) = vload4(src, v);
        let (a1, b1, c1, d1) = vload4(src, v + stride);
        let (a2, b2, c2, d2) = vload4(src, v + 2 * stride);
        let (a3, b3, c3, d3) = vload4(src, v + 3 * stride);
        let mut d = first;
        while d < first + count {
            let dst = unsafe { slice_at_mut::<T>(destinations[d], len) };
            vstore4(dst, v, (a0, b0, c0, d0));
            vstore4(dst, v + stride, (a1, b1, c1, d1));
            vstore4(dst, v + 2 * stride, (a2, b2, c2, d2));
            vstore4(dst, v + 3 * stride, (a3, b3, c3, d3));
            d += 1;
        }
        v += 4 * stride;
    }
    while v < vectors {
        let (a, b, c, e) = vload4(src, v);
        let mut d = first;
        while d < first + count {
            let dst = unsafe { slice_at_mut::<T>(destinations[d], len) };
            vstore4(dst, v, (a, b, c, e));
            d += 1;
        }
        v += stride;
    }
    let mut i = vectors * 4 + global_index();
    while i < len {
        let x = src[i];
        let mut d = first;
        while d < first + count {
            let dst = unsafe { slice_at_mut::<T>(destinations[d], len) };
            dst[i] = x;
            d += 1;
        }
        i += stride;
    }
}

/// [`lsa_reduce_copy`] for 64-bit elements (`i64`, `u64`, `f64`): 16-byte vectors of 2,
/// `[begin, end)` counting vectors of 2.
#[cudajit::device]
#[allow(clippy::too_many_arguments)]
pub fn lsa_reduce_copy_64<T: DeviceScalar + core::ops::Add<Output = T>>(
    sources: &[usize],
    n_sources: usize,
    destinations: &[usize],
    n_destinations: usize,
    len: usize,
    begin: usize,
    end: usize,
) {
    let mut v = begin + global_index();
    while v < end {
        let first = unsafe { slice_at::<T>(sources[0], len) };
        let (mut a, mut b) = vload2(first, v);
        let mut p = 1;
        while p < n_sources {
            let src = unsafe { slice_at::<T>(sources[p], len) };
            let (x, y) = vload2(src, v);
            a = a + x;
            b = b + y;
            p += 1;
        }
        let mut d = 0;
        while d < n_destinations {
            let dst = unsafe { slice_at_mut::<T>(destinations[d], len) };
            vstore2(dst, v, (a, b));
            d += 1;
        }
        v += grid_stride();
    }
}

/// [`lsa_reduce_copy`] for 16-bit elements summed in their own type (`f16`, `i16`, `u16`):
/// 16-byte vectors of 8, `[begin, end)` counting vectors of 8. (`bf16` sums in `f32`:
/// [`lsa_reduce_copy_bf16`].)
#[cudajit::device]
#[allow(clippy::too_many_arguments)]
pub fn lsa_reduce_copy_16<T: DeviceScalar + core::ops::Add<Output = T>>(
    sources: &[usize],
    n_sources: usize,
    destinations: &[usize],
    n_destinations: usize,
    len: usize,
    begin: usize,
    end: usize,
) {
    let mut v = begin + global_index();
    while v < end {
        let first = unsafe { slice_at::<T>(sources[0], len) };
        let (mut a, mut b, mut c, mut e, mut f, mut g, mut h, mut k) = vload8(first, v);
        let mut p = 1;
        while p < n_sources {
            let src = unsafe { slice_at::<T>(sources[p], len) };
            let (a1, b1, c1, e1, f1, g1, h1, k1) = vload8(src, v);
            a = a + a1;
            b = b + b1;
            c = c + c1;
            e = e + e1;
            f = f + f1;
            g = g + g1;
            h = h + h1;
            k = k + k1;
            p += 1;
        }
        let mut d = 0;
        while d < n_destinations {
            let dst = unsafe { slice_at_mut::<T>(destinations[d], len) };
            vstore8(dst, v, (a, b, c, e, f, g, h, k));
            d += 1;
        }
        v += grid_stride();
    }
}

/// [`lsa_reduce_copy`] for `bf16`, as CUDA C++ reduces it: 16-byte vectors of 8 elements,
/// accumulated in `f32` and rounded to `bf16` once per element (so with more than two
/// peers the sum does not depend on rounding after each addition).
#[cudajit::device]
#[allow(clippy::too_many_arguments)]
pub fn lsa_reduce_copy_bf16(
    sources: &[usize],
    n_sources: usize,
    destinations: &[usize],
    n_destinations: usize,
    len: usize,
    begin: usize,
    end: usize,
) {
    let stride = grid_stride();
    let mut v = begin + global_index();
    while v + 3 * stride < end {
        let mut a0 = 0.0f32;
        let mut b0 = 0.0f32;
        let mut c0 = 0.0f32;
        let mut d0 = 0.0f32;
        let mut e0 = 0.0f32;
        let mut f0 = 0.0f32;
        let mut g0 = 0.0f32;
        let mut h0 = 0.0f32;
        let mut a1 = 0.0f32;
        let mut b1 = 0.0f32;
        let mut c1 = 0.0f32;
        let mut d1 = 0.0f32;
        let mut e1 = 0.0f32;
        let mut f1 = 0.0f32;
        let mut g1 = 0.0f32;
        let mut h1 = 0.0f32;
        let mut a2 = 0.0f32;
        let mut b2 = 0.0f32;
        let mut c2 = 0.0f32;
        let mut d2 = 0.0f32;
        let mut e2 = 0.0f32;
        let mut f2 = 0.0f32;
        let mut g2 = 0.0f32;
        let mut h2 = 0.0f32;
        let mut a3 = 0.0f32;
        let mut b3 = 0.0f32;
        let mut c3 = 0.0f32;
        let mut d3 = 0.0f32;
        let mut e3 = 0.0f32;
        let mut f3 = 0.0f32;
        let mut g3 = 0.0f32;
        let mut h3 = 0.0f32;
        let mut p = 0;
        while p < n_sources {
            let src = unsafe { slice_at::<bf16>(sources[p], len) };
            let (xa0, xb0, xc0, xd0, xe0, xf0, xg0, xh0) = vload8(src, v);
            let (xa1, xb1, xc1, xd1, xe1, xf1, xg1, xh1) = vload8(src, v + stride);
            let (xa2, xb2, xc2, xd2, xe2, xf2, xg2, xh2) = vload8(src, v + 2 * stride);
            let (xa3, xb3, xc3, xd3, xe3, xf3, xg3, xh3) = vload8(src, v + 3 * stride);
            a0 += xa0.to_f32();
            b0 += xb0.to_f32();
            c0 += xc0.to_f32();
            d0 += xd0.to_f32();
            e0 += xe0.to_f32();
            f0 += xf0.to_f32();
            g0 += xg0.to_f32();
            h0 += xh0.to_f32();
            a1 += xa1.to_f32();
            b1 += xb1.to_f32();
            c1 += xc1.to_f32();
            d1 += xd1.to_f32();
            e1 += xe1.to_f32();
            f1 += xf1.to_f32();
            g1 += xg1.to_f32();
            h1 += xh1.to_f32();
            a2 += xa2.to_f32();
            b2 += xb2.to_f32();
            c2 += xc2.to_f32();
            d2 += xd2.to_f32();
            e2 += xe2.to_f32();
            f2 += xf2.to_f32();
            g2 += xg2.to_f32();
            h2 += xh2.to_f32();
            a3 += xa3.to_f32();
            b3 += xb3.to_f32();
            c3 += xc3.to_f32();
            d3 += xd3.to_f32();
            e3 += xe3.to_f32();
            f3 += xf3.to_f32();
            g3 += xg3.to_f32();
            h3 += xh3.to_f32();
            p += 1;
        }
        let mut q = 0;
        while q < n_destinations {
            let dst = unsafe { slice_at_mut::<bf16>(destinations[q], len) };
            vstore8(
                dst,
                v,
                (
                    bf16::from_f32(a0),
                    bf16::from_f32(b0),
                    bf16::from_f32(c0),
                    bf16::from_f32(d0),
                    bf16::from_f32(e0),
                    bf16::from_f32(f0),
                    bf16::from_f32(g0),
                    bf16::from_f32(h0),
                ),
            );
            vstore8(
                dst,
                v + stride,
                (
                    bf16::from_f32(a1),
                    bf16::from_f32(b1),
                    bf16::from_f32(c1),
                    bf16::from_f32(d1),
                    bf16::from_f32(e1),
                    bf16::from_f32(f1),
                    bf16::from_f32(g1),
                    bf16::from_f32(h1),
                ),
            );
            vstore8(
                dst,
                v + 2 * stride,
                (
                    bf16::from_f32(a2),
                    bf16::from_f32(b2),
                    bf16::from_f32(c2),
                    bf16::from_f32(d2),
                    bf16::from_f32(e2),
                    bf16::from_f32(f2),
                    bf16::from_f32(g2),
                    bf16::from_f32(h2),
                ),
            );
            vstore8(
                dst,
                v + 3 * stride,
                (
                    bf16::from_f32(a3),
                    bf16::from_f32(b3),
                    bf16::from_f32(c3),
                    bf16::from_f32(d3),
                    bf16::from_f32(e3),
                    bf16::from_f32(f3),
                    bf16::from_f32(g3),
                    bf16::from_f32(h3),
                ),
            );
            q += 1;
        }
        v += 4 * stride;
    }
    while v < end {
        let mut a = 0.0f32;
        let mut b = 0.0f32;
        let mut c = 0.0f32;
        let mut d = 0.0f32;
        let mut e = 0.0f32;
        let mut f = 0.0f32;
        let mut g = 0.0f32;
        let mut h = 0.0f32;
        let mut p = 0;
        while p < n_sources {
            let src = unsafe { slice_at::<bf16>(sources[p], len) };
            let (xa, xb, xc, xd, xe, xf, xg, xh) = vload8(src, v);
            a += xa.to_f32();
            b += xb.to_f32();
            c += xc.to_f32();
            d += xd.to_f32();
            e += xe.to_f32();
            f += xf.to_f32();
            g += xg.to_f32();
            h += xh.to_f32();
            p += 1;
        }
        let mut q = 0;
        while q < n_destinations {
            let dst = unsafe { slice_at_mut::<bf16>(destinations[q], len) };
            vstore8(
                dst,
                v,
                (
                    bf16::from_f32(a),
                    bf16::from_f32(b),
                    bf16::from_f32(c),
                    bf16::from_f32(d),
                    bf16::from_f32(e),
                    bf16::from_f32(f),
                    bf16::from_f32(g),
                    bf16::from_f32(h),
                ),
            );
            q += 1;
        }
        v += stride;
    }
}

/// [`lsa_reduce_copy_tail`] for `bf16`, accumulating in `f32`.
#[cudajit::device]
#[allow(clippy::too_many_arguments)]
pub fn lsa_reduce_copy_tail_bf16(
    sources: &[usize],
    n_sources: usize,
    destinations: &[usize],
    n_destinations: usize,
    len: usize,
    begin: usize,
    end: usize,
) {
    let mut i = begin + global_index();
    while i < end {
        let mut sum = 0.0f32;
        let mut p = 0;
        while p < n_sources {
            let src = unsafe { slice_at::<bf16>(sources[p], len) };
            sum += src[i].to_f32();
            p += 1;
        }
        let mut d = 0;
        while d < n_destinations {
            let dst = unsafe { slice_at_mut::<bf16>(destinations[d], len) };
            dst[i] = bf16::from_f32(sum);
            d += 1;
        }
        i += grid_stride();
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
