//! `vload::<T, N>` / `vstore`: 16-byte (or 8-byte) vector accesses as arrays, so one
//! generic device function, generic over the element type and the width, serves every
//! element size; on the CPU simulator and the GPU against the same functions run on the
//! host, and in the PTX as one vector access per load and store, without local memory.

use cudajit::prelude::*;

/// The sum of the `W`-element vectors `v` of `a` and `b`, unrolled by 2 (two independent
/// loads per input in flight), written to `out`: the shape of a reduce-copy.
#[device]
fn add_vectors<T: DeviceScalar + core::ops::Add<Output = T>, const W: usize>(
    a: &[T],
    b: &[T],
    out: &mut [T],
    v: usize,
    stride: usize,
) {
    let mut acc = [[a[0]; W]; 2];
    for u in 0..2 {
        acc[u] = vload(a, v + u * stride);
    }
    for u in 0..2 {
        let other: [T; W] = vload(b, v + u * stride);
        for k in 0..W {
            acc[u][k] = acc[u][k] + other[k];
        }
    }
    for u in 0..2 {
        vstore(out, v + u * stride, acc[u]);
    }
}

/// A vector read with the turbofish, passed by value to a device function.
#[device]
fn widest<T: DeviceScalar + PartialOrd, const W: usize>(x: &[T], v: usize) -> T {
    largest::<T, W>(vload::<T, W>(x, v))
}

#[device]
fn largest<T: DeviceScalar + PartialOrd, const W: usize>(values: [T; W]) -> T {
    let mut best = values[0];
    for k in 1..W {
        if values[k] > best {
            best = values[k];
        }
    }
    best
}

#[kernel]
fn add_f32(a: &[f32], b: &[f32], out: &mut [f32], maxima: &mut [f32], fill: &mut [f32]) {
    let v = global_index();
    let stride = grid_stride();
    if v + stride < a.len() / 4 {
        add_vectors::<f32, 4>(a, b, out, v, stride);
        maxima[v] = widest::<f32, 4>(a, v);
        let all_v = [v as f32; 4];
        vstore(fill, v, all_v);
    }
}

#[kernel]
fn add_u16(a: &[u16], b: &[u16], out: &mut [u16]) {
    let v = global_index();
    let stride = grid_stride();
    if v + stride < a.len() / 8 {
        add_vectors::<u16, 8>(a, b, out, v, stride);
    }
}

#[kernel]
fn add_f64(a: &[f64], b: &[f64], out: &mut [f64]) {
    let v = global_index();
    let stride = grid_stride();
    if v + stride < a.len() / 2 {
        add_vectors::<f64, 2>(a, b, out, v, stride);
    }
}

/// 8-byte accesses: two `f32`s, four `u16`s.
#[kernel]
fn pairs(x: &[f32], y: &mut [f32], h: &[u16], g: &mut [u16]) {
    let v = global_index();
    if v < x.len() / 2 {
        let p: [f32; 2] = vload(x, v);
        let swapped = [p[1], p[0]];
        vstore(y, v, swapped);
    }
    if v < h.len() / 4 {
        let q = vload::<u16, 4>(h, v);
        let mut r = q;
        r[0] = q[3];
        r[3] = q[0];
        vstore(g, v, r);
    }
}

#[device]
fn row_total<const N: usize>(row: [f32; N]) -> f32 {
    let mut total = 0.0f32;
    for k in 0..N {
        total += row[k];
    }
    total
}

/// Rows of an array of arrays as values: copied out, assigned, passed, stored.
#[kernel]
fn rows_as_values(x: &[f32], y: &mut [f32], totals: &mut [f32]) {
    let v = global_index();
    if v < x.len() / 4 {
        let mut m = [[0.0f32; 4]; 3];
        m[0] = vload(x, v);
        let first = m[0];
        m[2] = first;
        m[1][3] = 5.0;
        m[2][0] = -1.0;
        let copy = m[1];
        m[1] = m[2];
        totals[v] = row_total::<4>(m[1]) + row_total::<4>(copy) + first[0];
        vstore(y, v, m[1]);
    }
}

/// Three `f32`s are 12 bytes, which no vector access moves.
#[kernel]
fn twelve_bytes(x: &[f32], y: &mut [f32]) {
    let v = global_index();
    let a: [f32; 3] = vload(x, v);
    vstore(y, v, a);
}

/// `vload` with no type where nothing gives one.
#[device]
fn first<const W: usize>(values: [f32; W]) -> f32 {
    values[0]
}

#[kernel]
fn untyped_load(x: &[f32], y: &mut [f32]) {
    let v = global_index();
    y[v] = first::<4>(vload(x, v));
}

#[test]
fn vector_arrays_of_other_sizes_are_refused_with_the_sizes_named() {
    let stream = cudajit::Stream::simulator();
    let x = stream.alloc_zeros::<f32>(12).unwrap();
    let mut y = stream.alloc_zeros::<f32>(12).unwrap();
    let config = LaunchConfig::new(1u32, 1u32);
    let error = twelve_bytes::launch(&stream, config, &x, &mut y)
        .unwrap_err()
        .to_string();
    assert!(
        error.contains("`3` elements of `f32` are 12 bytes; vector accesses move 8 or 16 bytes"),
        "{error}"
    );
    let error = untyped_load::launch(&stream, config, &x, &mut y)
        .unwrap_err()
        .to_string();
    assert!(
        error.contains("give `vload` its array type here: `vload::<f32, 4>(x, i)`"),
        "{error}"
    );
}

/// The host result of `add_vectors` for threads `0..threads` (each covers vectors `t` and
/// `t + threads` of width `w`).
fn host_sum<T: Copy + core::ops::Add<Output = T>>(
    a: &[T],
    b: &[T],
    threads: usize,
    w: usize,
) -> Vec<T> {
    let mut out = a.to_vec();
    for t in 0..threads {
        for v in [t, t + threads] {
            for k in 0..w {
                out[v * w + k] = a[v * w + k] + b[v * w + k];
            }
        }
    }
    out
}

fn vector_arrays_match_the_host(stream: &cudajit::Stream) {
    // 8 threads in one block of 8: the grid stride is 8, each thread two vectors.
    let threads = 8;
    let config = LaunchConfig::new(1u32, threads as u32);
    let n = 4 * (2 * threads + 1);
    let a: Vec<f32> = (0..n).map(|k| (k % 11) as f32 * 0.75 - 3.0).collect();
    let b: Vec<f32> = (0..n).map(|k| (k % 5) as f32 * 1.5).collect();
    let (da, db) = (
        stream.clone_htod(&a).unwrap(),
        stream.clone_htod(&b).unwrap(),
    );
    let mut dout = stream.clone_htod(&a).unwrap();
    let mut dmax = stream.alloc_zeros::<f32>(threads).unwrap();
    let mut dfill = stream.alloc_zeros::<f32>(n).unwrap();
    add_f32::launch(stream, config, &da, &db, &mut dout, &mut dmax, &mut dfill).unwrap();
    assert_eq!(
        stream.clone_dtoh(&dout).unwrap(),
        host_sum(&a, &b, threads, 4)
    );
    let maxima = stream.clone_dtoh(&dmax).unwrap();
    let fill = stream.clone_dtoh(&dfill).unwrap();
    for t in 0..threads {
        let expected = a[4 * t..4 * t + 4].iter().copied().fold(f32::MIN, f32::max);
        assert_eq!(maxima[t], expected, "maxima[{t}]");
        assert_eq!(
            &fill[4 * t..4 * t + 4],
            &[t as f32; 4],
            "fill of thread {t}"
        );
    }

    let n = 8 * (2 * threads + 1);
    let a: Vec<u16> = (0..n).map(|k| (k * 7919 % 65521) as u16).collect();
    let b: Vec<u16> = (0..n).map(|k| (k * 104_729 % 65519) as u16).collect();
    let (da, db) = (
        stream.clone_htod(&a).unwrap(),
        stream.clone_htod(&b).unwrap(),
    );
    let mut dout = stream.clone_htod(&a).unwrap();
    add_u16::launch(stream, config, &da, &db, &mut dout).unwrap();
    let wrapping: Vec<u16> = host_sum(
        &a.iter().map(|&v| std::num::Wrapping(v)).collect::<Vec<_>>(),
        &b.iter().map(|&v| std::num::Wrapping(v)).collect::<Vec<_>>(),
        threads,
        8,
    )
    .into_iter()
    .map(|w| w.0)
    .collect();
    assert_eq!(stream.clone_dtoh(&dout).unwrap(), wrapping);

    let n = 2 * (2 * threads + 1);
    let a: Vec<f64> = (0..n).map(|k| k as f64 * 0.125 - 1.0).collect();
    let b: Vec<f64> = (0..n).map(|k| (k % 3) as f64 * 1e-3).collect();
    let (da, db) = (
        stream.clone_htod(&a).unwrap(),
        stream.clone_htod(&b).unwrap(),
    );
    let mut dout = stream.clone_htod(&a).unwrap();
    add_f64::launch(stream, config, &da, &db, &mut dout).unwrap();
    assert_eq!(
        stream.clone_dtoh(&dout).unwrap(),
        host_sum(&a, &b, threads, 2)
    );

    let x: Vec<f32> = (0..2 * threads).map(|k| k as f32).collect();
    let h: Vec<u16> = (0..4 * threads as u16).collect();
    let (dx, dh) = (
        stream.clone_htod(&x).unwrap(),
        stream.clone_htod(&h).unwrap(),
    );
    let mut dy = stream.alloc_zeros::<f32>(x.len()).unwrap();
    let mut dg = stream.alloc_zeros::<u16>(h.len()).unwrap();
    pairs::launch(stream, config, &dx, &mut dy, &dh, &mut dg).unwrap();
    let y = stream.clone_dtoh(&dy).unwrap();
    let g = stream.clone_dtoh(&dg).unwrap();
    for t in 0..threads {
        assert_eq!(&y[2 * t..2 * t + 2], &[x[2 * t + 1], x[2 * t]]);
        let q = &h[4 * t..4 * t + 4];
        assert_eq!(&g[4 * t..4 * t + 4], &[q[3], q[1], q[2], q[0]]);
    }
}

fn rows_match_the_host(stream: &cudajit::Stream) {
    let threads = 8;
    let x: Vec<f32> = (0..4 * threads).map(|k| k as f32 * 0.5).collect();
    let dx = stream.clone_htod(&x).unwrap();
    let mut dy = stream.alloc_zeros::<f32>(x.len()).unwrap();
    let mut dt = stream.alloc_zeros::<f32>(threads).unwrap();
    let config = LaunchConfig::new(1u32, threads as u32);
    rows_as_values::launch(stream, config, &dx, &mut dy, &mut dt).unwrap();
    let (y, totals) = (
        stream.clone_dtoh(&dy).unwrap(),
        stream.clone_dtoh(&dt).unwrap(),
    );
    for t in 0..threads {
        let first = &x[4 * t..4 * t + 4];
        let row = [-1.0, first[1], first[2], first[3]];
        assert_eq!(&y[4 * t..4 * t + 4], &row, "thread {t}");
        let want = row.iter().sum::<f32>() + 5.0 + first[0];
        assert_eq!(totals[t], want, "thread {t}");
    }
}

#[test]
fn rows_of_arrays_of_arrays_are_values_on_the_simulator() {
    rows_match_the_host(&cudajit::Stream::simulator());
}

#[test]
fn rows_of_arrays_of_arrays_are_values_on_the_gpu() {
    let Ok(stream) = cudajit::Stream::gpu(0) else {
        eprintln!("skipped: no GPU");
        return;
    };
    rows_match_the_host(&stream);
}

#[test]
fn vector_arrays_run_on_the_simulator() {
    vector_arrays_match_the_host(&cudajit::Stream::simulator());
}

#[test]
fn vector_arrays_on_the_gpu() {
    let Ok(stream) = cudajit::Stream::gpu(0) else {
        eprintln!("skipped: no GPU");
        return;
    };
    vector_arrays_match_the_host(&stream);
}

/// Every `vload`/`vstore` is one vector instruction (`add_f32`'s `widest` reuses the
/// first load), no element is accessed alone, and no array is in local memory.
#[test]
fn vector_arrays_compile_to_vector_accesses_in_registers() {
    // (kernel, vector width in the PTX, vector stores, element stores): `add_f32` also
    // stores `fill`'s vector and one `maxima` element.
    for (kernel, width, stores, element_stores) in [
        (add_f32::KERNEL.captured(), ".v4.", 3, 1),
        (add_u16::KERNEL.captured(), ".v4.", 2, 0),
        (add_f64::KERNEL.captured(), ".v2.", 2, 0),
    ] {
        let Some(ptx) = common::sm90_ptx_or_skip(kernel) else {
            return;
        };
        let count = |op: &str| {
            ptx.lines()
                .map(str::trim)
                .filter(|line| line.starts_with(op) && line.contains(width))
                .count()
        };
        assert!(
            !ptx.contains(".local"),
            "{}: local memory:\n{ptx}",
            kernel.name
        );
        assert_eq!(
            count("ld.global"),
            4,
            "{}: vector loads:\n{ptx}",
            kernel.name
        );
        assert_eq!(
            count("st.global"),
            stores,
            "{}: vector stores:\n{ptx}",
            kernel.name
        );
        let scalar_accesses = ptx
            .lines()
            .map(str::trim)
            .filter(|line| {
                (line.starts_with("ld.global") || line.starts_with("st.global"))
                    && !line.contains(".v")
            })
            .count();
        assert_eq!(
            scalar_accesses, element_stores,
            "{}: element accesses:\n{ptx}",
            kernel.name
        );
    }
}

mod common;
