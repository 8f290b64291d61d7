//! Kernels run on a GPU and checked against CPU references. Each test skips, printing why,
//! on a machine without a GPU.

mod common;

use common::kernels::*;
use cudajit::{CubinOrigin, Error, LaunchConfig, LaunchConfigError};

/// A deterministic pseudo-random sequence (xorshift), so failures reproduce.
fn pseudo_random(seed: u64, count: usize) -> Vec<u64> {
    let mut state = seed.max(1);
    (0..count)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        })
        .collect()
}

#[test]
fn saxpy_matches_the_cpu_at_awkward_sizes() {
    let Some(context) = common::gpu_or_skip() else {
        return;
    };
    let stream = context.default_stream();
    for n in [0usize, 1, 255, 257, 100_003, 1 << 22] {
        let random = pseudo_random(n as u64 + 1, 2 * n);
        let x: Vec<f32> = random[..n]
            .iter()
            .map(|&r| (r % 2001) as f32 * 0.01 - 10.0)
            .collect();
        let y0: Vec<f32> = random[n..]
            .iter()
            .map(|&r| (r % 3001) as f32 * 0.1)
            .collect();
        let dx = stream.clone_htod(&x).unwrap();
        let mut dy = stream.clone_htod(&y0).unwrap();
        saxpy::launch(&stream, LaunchConfig::for_elements(n), 1.75, &dx, &mut dy).unwrap();
        let got = stream.clone_dtoh(&dy).unwrap();
        let mut expected = y0.clone();
        saxpy_ref(1.75, &x, &mut expected);
        for i in 0..n {
            // The GPU contracts a * x + y into one FMA (as nvcc does); allow its rounding.
            let tolerance = 1e-5 * expected[i].abs().max(1.0);
            assert!(
                (got[i] - expected[i]).abs() <= tolerance,
                "n={n} i={i}: {} vs {}",
                got[i],
                expected[i]
            );
        }
    }
}

#[test]
fn integer_semantics_match_rust() {
    let Some(context) = common::gpu_or_skip() else {
        return;
    };
    let stream = context.default_stream();
    let n = 50_000;
    let random = pseudo_random(7, 2 * n);
    let a: Vec<i32> = random[..n].iter().map(|&r| r as i32 / 3).collect();
    let b: Vec<i32> = random[n..]
        .iter()
        .map(|&r| (r as i32 >> 8) - (i32::MAX >> 9))
        .collect();
    for shift in [0u32, 5, 31, 33, 70] {
        let (da, db) = (
            stream.clone_htod(&a).unwrap(),
            stream.clone_htod(&b).unwrap(),
        );
        let mut out = stream.alloc_zeros::<i32>(n).unwrap();
        let mut flags = stream.alloc_zeros::<u32>(n).unwrap();
        int_ops::launch(
            &stream,
            LaunchConfig::for_elements(n),
            &da,
            &db,
            shift,
            &mut out,
            &mut flags,
        )
        .unwrap();
        let (mut eo, mut ef) = (vec![0; n], vec![0; n]);
        int_ops_ref(&a, &b, shift, &mut eo, &mut ef);
        assert_eq!(stream.clone_dtoh(&out).unwrap(), eo, "shift {shift}");
        assert_eq!(stream.clone_dtoh(&flags).unwrap(), ef, "shift {shift}");
    }
}

#[test]
fn casts_saturate_like_rust() {
    let Some(context) = common::gpu_or_skip() else {
        return;
    };
    let stream = context.default_stream();
    let mut x = vec![
        0.0f32,
        -0.0,
        0.5,
        -0.5,
        1.5,
        -1.5,
        255.9,
        256.0,
        -129.0,
        70000.0,
        -70000.0,
        3e9,
        -3e9,
        1e20,
        -1e20,
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::NAN,
        f32::MIN_POSITIVE,
        12345.678,
    ];
    x.extend(
        pseudo_random(3, 1000)
            .iter()
            .map(|&r| (r as i64 as f32) * 1e-9),
    );
    let n = x.len();
    let dx = stream.clone_htod(&x).unwrap();
    let mut o1 = stream.alloc_zeros::<i32>(n).unwrap();
    let mut o2 = stream.alloc_zeros::<u8>(n).unwrap();
    let mut o3 = stream.alloc_zeros::<i16>(n).unwrap();
    let mut o4 = stream.alloc_zeros::<f64>(n).unwrap();
    let mut o5 = stream.alloc_zeros::<u64>(n).unwrap();
    casts::launch(
        &stream,
        LaunchConfig::for_elements(n),
        &dx,
        &mut o1,
        &mut o2,
        &mut o3,
        &mut o4,
        &mut o5,
    )
    .unwrap();
    let (mut e1, mut e2, mut e3, mut e4, mut e5) =
        (vec![0; n], vec![0; n], vec![0; n], vec![0.0; n], vec![0; n]);
    casts_ref(&x, &mut e1, &mut e2, &mut e3, &mut e4, &mut e5);
    assert_eq!(stream.clone_dtoh(&o1).unwrap(), e1);
    assert_eq!(stream.clone_dtoh(&o2).unwrap(), e2);
    assert_eq!(stream.clone_dtoh(&o3).unwrap(), e3);
    let got4 = stream.clone_dtoh(&o4).unwrap();
    for i in 0..n {
        assert!(
            got4[i] == e4[i] || (got4[i].is_nan() && e4[i].is_nan()),
            "i={i}: {} vs {}",
            got4[i],
            e4[i]
        );
    }
    assert_eq!(stream.clone_dtoh(&o5).unwrap(), e5);
}

#[test]
fn loops_and_control_flow_match_rust() {
    let Some(context) = common::gpu_or_skip() else {
        return;
    };
    let stream = context.default_stream();
    let n = 4096;
    let mut out = stream.alloc_zeros::<u64>(n).unwrap();
    loops::launch(&stream, LaunchConfig::new(16, 256), 40, &mut out).unwrap();
    let mut expected = vec![0; n];
    loops_ref(40, &mut expected);
    assert_eq!(stream.clone_dtoh(&out).unwrap(), expected);
}

#[test]
fn two_dimensional_grid_transposes() {
    let Some(context) = common::gpu_or_skip() else {
        return;
    };
    let stream = context.default_stream();
    let (rows, cols) = (300u32, 517u32);
    let input: Vec<f64> = (0..rows * cols).map(|i| i as f64 * 1.5).collect();
    let dinput = stream.clone_htod(&input).unwrap();
    let mut doutput = stream.alloc_zeros::<f64>(input.len()).unwrap();
    let config = LaunchConfig::new((cols.div_ceil(16), rows.div_ceil(16)), (16, 16));
    transpose::launch(&stream, config, rows, cols, &dinput, &mut doutput).unwrap();
    let output = stream.clone_dtoh(&doutput).unwrap();
    for r in 0..rows {
        for c in 0..cols {
            assert_eq!(
                output[(c * rows + r) as usize],
                input[(r * cols + c) as usize]
            );
        }
    }
}

#[test]
fn bools_travel_as_bytes() {
    let Some(context) = common::gpu_or_skip() else {
        return;
    };
    let stream = context.default_stream();
    let n = 10_000;
    let random = pseudo_random(11, n);
    let x: Vec<bool> = random.iter().map(|r| r & 1 == 1).collect();
    let y: Vec<i64> = random.iter().map(|&r| (r as i64) >> 40).collect();
    let (dx, dy) = (
        stream.clone_htod(&x).unwrap(),
        stream.clone_htod(&y).unwrap(),
    );
    for invert in [false, true] {
        let mut out = stream.alloc_zeros::<bool>(n).unwrap();
        bools::launch(
            &stream,
            LaunchConfig::for_elements(n),
            invert,
            &dx,
            &dy,
            &mut out,
        )
        .unwrap();
        let mut expected = vec![false; n];
        bools_ref(invert, &x, &y, &mut expected);
        assert_eq!(
            stream.clone_dtoh(&out).unwrap(),
            expected,
            "invert {invert}"
        );
    }
}

#[test]
fn grid_stride_loop_covers_more_elements_than_threads() {
    let Some(context) = common::gpu_or_skip() else {
        return;
    };
    let stream = context.default_stream();
    let n = 1_000_003;
    let data: Vec<f64> = (0..n).map(|i| i as f64).collect();
    let mut d = stream.clone_htod(&data).unwrap();
    scale_strided::launch(&stream, LaunchConfig::new(7, 128), 3.0, &mut d).unwrap();
    let got = stream.clone_dtoh(&d).unwrap();
    assert!(got.iter().enumerate().all(|(i, &v)| v == i as f64 * 3.0));
}

#[test]
fn invalid_configurations_fail_before_the_driver() {
    let Some(context) = common::gpu_or_skip() else {
        return;
    };
    let stream = context.default_stream();
    let x = stream.alloc_zeros::<f32>(16).unwrap();
    let mut y = stream.alloc_zeros::<f32>(16).unwrap();
    let cases = [
        LaunchConfig::new(1, 2048),
        LaunchConfig::new(0, 32),
        LaunchConfig::new(1, (32, 32, 2)),
        LaunchConfig::new(1, 32).with_shared_mem(10 << 20),
    ];
    for config in cases {
        match saxpy::launch(&stream, config, 1.0, &x, &mut y) {
            Err(Error::LaunchConfig { source, .. }) => eprintln!("refused as expected: {source}"),
            other => panic!("{config:?} should be refused, got {other:?}"),
        }
    }
    let too_many = saxpy::launch(&stream, LaunchConfig::new(1, (32, 32, 2)), 1.0, &x, &mut y);
    assert!(matches!(
        too_many,
        Err(Error::LaunchConfig {
            source: LaunchConfigError::TooManyThreads { .. },
            ..
        })
    ));
    // The stream is still usable.
    saxpy::launch(&stream, LaunchConfig::for_elements(16), 1.0, &x, &mut y).unwrap();
    stream.synchronize().unwrap();
}

#[test]
fn compile_ahead_returns_the_kernel_launches_use() {
    let Some(context) = common::gpu_or_skip() else {
        return;
    };
    let ahead = bools::compile(&context).unwrap();
    let again = bools::compile(&context).unwrap();
    assert!(std::ptr::eq(ahead, again), "one loaded module per context");
    assert!(ahead.max_threads_per_block() >= 256);
    let loaded = bools::KERNEL.function(&context.default_stream()).unwrap();
    assert!(std::ptr::eq(ahead, loaded));
    // A second compile of the same kernel for the same arch is served from memory.
    let compiled = bools::KERNEL
        .compile_for_arch(ahead.compiled().arch)
        .unwrap();
    assert_eq!(compiled.report.origin, CubinOrigin::Memory);
}

#[test]
fn every_gpu_of_the_process_gets_its_own_module() {
    let Some(_) = common::gpu_or_skip() else {
        return;
    };
    let count = cudajit::gpu_count().unwrap();
    if count < 2 {
        eprintln!("skipped: needs two GPUs, found {count}");
        return;
    }
    let mut loaded = Vec::new();
    for ordinal in 0..count {
        let context = cudajit::CudaContext::new(ordinal).unwrap();
        let stream = context.default_stream();
        let x = stream.clone_htod(&[1.0f32; 1000]).unwrap();
        let mut y = stream.clone_htod(&[ordinal as f32; 1000]).unwrap();
        saxpy::launch(&stream, LaunchConfig::for_elements(1000), 2.0, &x, &mut y).unwrap();
        let got = stream.clone_dtoh(&y).unwrap();
        assert!(
            got.iter().all(|&v| v == 2.0 + ordinal as f32),
            "GPU {ordinal}"
        );
        loaded.push(saxpy::KERNEL.function(&stream).unwrap() as *const _);
    }
    loaded.dedup();
    assert_eq!(loaded.len(), count, "one loaded kernel per context");
}

#[test]
fn generic_kernels_and_device_functions_run() {
    let Some(context) = common::gpu_or_skip() else {
        return;
    };
    let stream = context.default_stream();
    let n = 5000;
    let a32: Vec<f32> = (0..n).map(|i| i as f32 * 0.5).collect();
    let b32: Vec<f32> = (0..n).map(|i| 1000.0 - i as f32).collect();
    let (da, db) = (
        stream.clone_htod(&a32).unwrap(),
        stream.clone_htod(&b32).unwrap(),
    );
    let mut out = stream.alloc_zeros::<f32>(n).unwrap();
    blend::launch::<f32>(
        &stream,
        LaunchConfig::for_elements(n),
        0.25,
        &da,
        &db,
        &mut out,
    )
    .unwrap();
    let got = stream.clone_dtoh(&out).unwrap();
    for i in 0..n {
        let expected = lerp(a32[i], b32[i], 0.25);
        assert!(
            (got[i] - expected).abs() <= 1e-4 * expected.abs().max(1.0),
            "f32 i={i}"
        );
    }
    let a64: Vec<f64> = a32.iter().map(|&v| f64::from(v)).collect();
    let b64: Vec<f64> = b32.iter().map(|&v| f64::from(v)).collect();
    let (da, db) = (
        stream.clone_htod(&a64).unwrap(),
        stream.clone_htod(&b64).unwrap(),
    );
    let mut out = stream.alloc_zeros::<f64>(n).unwrap();
    blend::launch::<f64>(
        &stream,
        LaunchConfig::for_elements(n),
        0.75,
        &da,
        &db,
        &mut out,
    )
    .unwrap();
    let got = stream.clone_dtoh(&out).unwrap();
    for i in 0..n {
        let expected = lerp(a64[i], b64[i], 0.75);
        assert!(
            (got[i] - expected).abs() <= 1e-12 * expected.abs().max(1.0),
            "f64 i={i}"
        );
    }

    let input: Vec<f32> = (0..n).map(|i| (i % 17) as f32).collect();
    let dinput = stream.clone_htod(&input).unwrap();
    for w in [1usize, 4] {
        let mut out = stream.alloc_zeros::<f32>(n).unwrap();
        if w == 1 {
            window_sums::launch::<1>(&stream, LaunchConfig::for_elements(n), &dinput, &mut out)
                .unwrap();
        } else {
            window_sums::launch::<4>(&stream, LaunchConfig::for_elements(n), &dinput, &mut out)
                .unwrap();
        }
        let got = stream.clone_dtoh(&out).unwrap();
        for i in 0..n {
            let expected: f32 = (0..w).map(|k| input[(i + k).min(n - 1)]).sum::<f32>() * 2.0;
            assert_eq!(got[i], expected, "W={w} i={i}");
        }
    }

    let start: Vec<u64> = (1..=n as u64).collect();
    for rounds in [0u32, 3, 10] {
        let mut data = stream.clone_htod(&start).unwrap();
        collatz_steps::launch(&stream, LaunchConfig::for_elements(n), rounds, &mut data).unwrap();
        let mut expected = start.clone();
        collatz_ref(rounds, &mut expected);
        assert_eq!(
            stream.clone_dtoh(&data).unwrap(),
            expected,
            "rounds={rounds}"
        );
    }
}

#[test]
fn math_functions_match_the_host_within_a_few_ulp() {
    let Some(context) = common::gpu_or_skip() else {
        return;
    };
    let stream = context.default_stream();
    let n = 4096;
    let random = pseudo_random(5, n);
    let x: Vec<f32> = random
        .iter()
        .map(|&r| ((r % 20001) as f32 - 10000.0) * 1e-3)
        .collect();
    let y: Vec<f64> = random
        .iter()
        .map(|&r| ((r >> 20) % 20001) as f64 * 1e-2 - 100.0)
        .collect();
    let bits: Vec<u32> = random.iter().map(|&r| (r >> 7) as u32 | 1).collect();
    let (dx, dy, db) = (
        stream.clone_htod(&x).unwrap(),
        stream.clone_htod(&y).unwrap(),
        stream.clone_htod(&bits).unwrap(),
    );
    let mut o32 = stream.alloc_zeros::<f32>(n).unwrap();
    let mut o64 = stream.alloc_zeros::<f64>(n).unwrap();
    let mut counts = stream.alloc_zeros::<u32>(n).unwrap();
    math_ops::launch(
        &stream,
        LaunchConfig::for_elements(n),
        &dx,
        &dy,
        &db,
        &mut o32,
        &mut o64,
        &mut counts,
    )
    .unwrap();
    let (mut e32, mut e64, mut ec) = (vec![0.0; n], vec![0.0; n], vec![0; n]);
    math_ops_ref(&x, &y, &bits, &mut e32, &mut e64, &mut ec);
    assert_eq!(stream.clone_dtoh(&counts).unwrap(), ec);
    let (g32, g64) = (
        stream.clone_dtoh(&o32).unwrap(),
        stream.clone_dtoh(&o64).unwrap(),
    );
    let mut worst32 = 0.0f64;
    let mut worst64 = 0.0f64;
    for i in 0..n {
        // A sum of several libdevice results (each within 2 ulp of the true value): compare
        // relative to the magnitude of the terms.
        let scale32 = 1.0 + f64::from(x[i].abs()).powi(3) + f64::from(x[i].abs());
        worst32 = worst32.max(f64::from((g32[i] - e32[i]).abs()) / scale32);
        let scale64 = 1.0 + y[i] * y[i];
        worst64 = worst64.max((g64[i] - e64[i]).abs() / scale64);
    }
    eprintln!("math: worst relative difference f32 {worst32:e}, f64 {worst64:e}");
    assert!(worst32 < 1e-5, "f32 {worst32}");
    assert!(worst64 < 1e-13, "f64 {worst64}");
}

#[test]
fn shared_memory_atomics_and_warp_reductions() {
    let Some(context) = common::gpu_or_skip() else {
        return;
    };
    let stream = context.default_stream();
    // Block reduction to one u64: exact.
    let n = 3_000_017;
    let data: Vec<u32> = pseudo_random(9, n)
        .iter()
        .map(|&r| (r % 1000) as u32)
        .collect();
    let ddata = stream.clone_htod(&data).unwrap();
    let mut total = stream.alloc_zeros::<u64>(1).unwrap();
    block_sum::launch(&stream, LaunchConfig::new(264, 256), &ddata, &mut total).unwrap();
    let expected: u64 = data.iter().map(|&v| u64::from(v)).sum();
    assert_eq!(stream.clone_dtoh(&total).unwrap()[0], expected);

    // Histogram with shared and global atomics.
    let bytes: Vec<u8> = pseudo_random(13, n)
        .iter()
        .map(|&r| (r >> 11) as u8)
        .collect();
    let dbytes = stream.clone_htod(&bytes).unwrap();
    let mut bins = stream.alloc_zeros::<u32>(256).unwrap();
    histogram::launch(&stream, LaunchConfig::new(132, 512), &dbytes, &mut bins).unwrap();
    let mut expected_bins = vec![0u32; 256];
    for &b in &bytes {
        expected_bins[b as usize] += 1;
    }
    assert_eq!(stream.clone_dtoh(&bins).unwrap(), expected_bins);

    // Tiled transpose through shared memory.
    let (rows, cols) = (1000u32, 777u32);
    let input: Vec<f32> = (0..rows * cols).map(|i| i as f32).collect();
    let dinput = stream.clone_htod(&input).unwrap();
    let mut doutput = stream.alloc_zeros::<f32>(input.len()).unwrap();
    let config = LaunchConfig::new((cols.div_ceil(32), rows.div_ceil(32)), (32, 32));
    transpose_tiled::launch::<32>(&stream, config, rows, cols, &dinput, &mut doutput).unwrap();
    let output = stream.clone_dtoh(&doutput).unwrap();
    for r in 0..rows {
        for c in 0..cols {
            assert_eq!(
                output[(c * rows + r) as usize],
                input[(r * cols + c) as usize]
            );
        }
    }
}

#[test]
fn warp_votes_scans_dynamic_shared_memory_and_compare_exchange() {
    let Some(context) = common::gpu_or_skip() else {
        return;
    };
    let stream = context.default_stream();
    let (blocks, threads) = (8usize, 128usize);
    let n = blocks * threads;
    let values: Vec<i32> = pseudo_random(17, n)
        .iter()
        .map(|&r| (r % 41) as i32 - 20)
        .collect();
    let dvalues = stream.clone_htod(&values).unwrap();
    let mut ballots = stream.alloc_zeros::<u32>(n).unwrap();
    let mut flags = stream.alloc_zeros::<u32>(n).unwrap();
    let mut scan = stream.alloc_zeros::<i32>(n).unwrap();
    let mut reversed = stream.alloc_zeros::<i32>(n).unwrap();
    let mut extremes = stream.clone_htod(&[i32::MAX, i32::MIN, 0]).unwrap();
    let config =
        LaunchConfig::new(blocks as u32, threads as u32).with_shared_mem((threads * 4) as u32);
    warp_ops::launch(
        &stream,
        config,
        &dvalues,
        &mut ballots,
        &mut flags,
        &mut scan,
        &mut reversed,
        &mut extremes,
    )
    .unwrap();
    let (ballots, flags) = (
        stream.clone_dtoh(&ballots).unwrap(),
        stream.clone_dtoh(&flags).unwrap(),
    );
    let (scan, reversed) = (
        stream.clone_dtoh(&scan).unwrap(),
        stream.clone_dtoh(&reversed).unwrap(),
    );
    for warp in values.chunks(32).enumerate() {
        let (w, lanes) = warp;
        let ballot = lanes
            .iter()
            .enumerate()
            .fold(0u32, |b, (l, &v)| b | (u32::from(v > 0) << l));
        let all = lanes.iter().all(|&v| v > -1000);
        let any = lanes.contains(&7);
        let mut running = 0;
        for (lane, &v) in lanes.iter().enumerate() {
            let i = w * 32 + lane;
            running += v;
            assert_eq!(ballots[i], ballot, "ballot i={i}");
            let flag = lane as u32 + u32::from(all) * 100 + u32::from(any) * 1000 + 10000;
            assert_eq!(flags[i], flag, "flags i={i}");
            assert_eq!(scan[i], running, "scan i={i}");
        }
    }
    for (b, block) in values.chunks(threads).enumerate() {
        for t in 0..threads {
            assert_eq!(
                reversed[b * threads + t],
                block[threads - 1 - t],
                "reversed block {b} t={t}"
            );
        }
    }
    let extremes = stream.clone_dtoh(&extremes).unwrap();
    assert_eq!(extremes[0], *values.iter().min().unwrap());
    assert_eq!(extremes[1], *values.iter().max().unwrap());
    assert_eq!(
        extremes[2], n as i32,
        "one compare-exchange increment per thread"
    );
}

#[test]
fn vector_loads_and_register_arrays_run() {
    let Some(context) = common::gpu_or_skip() else {
        return;
    };
    let stream = context.default_stream();
    for n in [4usize, 7, 1 << 20, (1 << 20) + 3] {
        let x: Vec<f32> = (0..n).map(|i| (i % 97) as f32).collect();
        let y0: Vec<f32> = (0..n).map(|i| (i % 13) as f32 * 0.5).collect();
        let dx = stream.clone_htod(&x).unwrap();
        let mut dy = stream.clone_htod(&y0).unwrap();
        saxpy_vec4::launch(&stream, LaunchConfig::new(64, 256), 3.0, &dx, &mut dy).unwrap();
        let got = stream.clone_dtoh(&dy).unwrap();
        let mut expected = y0.clone();
        saxpy_ref(3.0, &x, &mut expected);
        assert_eq!(got, expected, "n={n}");
    }
    let (rows, k) = (1000usize, 37usize);
    const R: usize = 4;
    let a: Vec<f64> = (0..rows * k).map(|i| (i % 11) as f64 - 5.0).collect();
    let b: Vec<f64> = (0..k * R).map(|i| (i % 7) as f64 * 0.25).collect();
    let (da, db) = (
        stream.clone_htod(&a).unwrap(),
        stream.clone_htod(&b).unwrap(),
    );
    let mut out = stream.alloc_zeros::<f64>(rows * R).unwrap();
    row_times_columns::launch::<R>(
        &stream,
        LaunchConfig::for_elements(rows),
        k as u32,
        &da,
        &db,
        &mut out,
    )
    .unwrap();
    let got = stream.clone_dtoh(&out).unwrap();
    for r in 0..rows {
        for c in 0..R {
            let expected: f64 = (0..k).map(|j| a[r * k + j] * b[j * R + c]).sum();
            assert_eq!(got[r * R + c], expected, "row {r} column {c}");
        }
    }
}

#[test]
fn warp_helpers_scoped_atomics_and_special_functions() {
    let Some(context) = common::gpu_or_skip() else {
        return;
    };
    let stream = context.default_stream();
    let (blocks, threads) = (20usize, 256usize);
    let n = blocks * threads;
    let values: Vec<f32> = pseudo_random(23, n)
        .iter()
        .map(|&r| (r % 200) as f32 - 100.0)
        .collect();
    let dvalues = stream.clone_htod(&values).unwrap();
    let mut sums = stream.alloc_zeros::<f32>(n / 32).unwrap();
    let mut ranges = stream.alloc_zeros::<f32>(n / 32).unwrap();
    let mut scans = stream.alloc_zeros::<u32>(n).unwrap();
    let mut per_block = stream.alloc_zeros::<u32>(2 * blocks).unwrap();
    let mut total = stream.alloc_zeros::<u64>(1).unwrap();
    let mut specials = stream.alloc_zeros::<f32>(n).unwrap();
    warp_helpers::launch(
        &stream,
        LaunchConfig::new(blocks as u32, threads as u32),
        &dvalues,
        &mut sums,
        &mut ranges,
        &mut scans,
        &mut per_block,
        &mut total,
        &mut specials,
    )
    .unwrap();
    let (sums, ranges) = (
        stream.clone_dtoh(&sums).unwrap(),
        stream.clone_dtoh(&ranges).unwrap(),
    );
    for (w, lanes) in values.chunks(32).enumerate() {
        assert_eq!(sums[w], lanes.iter().sum::<f32>(), "warp {w}");
        let max = lanes.iter().cloned().fold(f32::MIN, f32::max);
        let min = lanes.iter().cloned().fold(f32::MAX, f32::min);
        assert_eq!(ranges[w], max - min, "warp {w}");
    }
    let scans = stream.clone_dtoh(&scans).unwrap();
    assert!(scans
        .iter()
        .enumerate()
        .all(|(i, &s)| s == (i % 32) as u32 + 1));
    let per_block = stream.clone_dtoh(&per_block).unwrap();
    assert!(per_block[..blocks].iter().all(|&c| c == threads as u32));
    assert!(per_block[blocks..].iter().all(|&m| m == threads as u32 - 1));
    assert_eq!(stream.clone_dtoh(&total).unwrap()[0], n as u64);
    let specials = stream.clone_dtoh(&specials).unwrap();
    for i in 0..n {
        let x = values[i] * 0.01;
        let expected = cudajit::prelude::erf(x)
            + cudajit::prelude::erfc(x)
            + 1.0 / (x.abs() + 1.0).sqrt()
            + x.exp()
            + x.sin()
            + x.cos()
            + (x.abs() + 1.0).ln()
            + x / 3.0;
        assert!(
            (specials[i] - expected).abs() < 1e-4 * expected.abs().max(1.0),
            "i={i}: {} vs {expected}",
            specials[i]
        );
    }
}

/// Run in child processes by `device_printing_assertions_and_bounds_checks`: a failed
/// assertion leaves the CUDA context unusable, so each case gets its own process.
#[test]
#[ignore = "run as a child process"]
fn child_debug_case() {
    let Ok(case) = std::env::var("CUDAJIT_TEST_CASE") else {
        return;
    };
    let context = cudajit::default_context().unwrap();
    let stream = context.default_stream();
    let values: Vec<i32> = (0..256).map(|i| if i == 3 { 0 } else { 7 + i }).collect();
    let dvalues = stream.clone_htod(&values).unwrap();
    let mut out = stream.alloc_zeros::<i32>(256).unwrap();
    let config = LaunchConfig::new(1, 256);
    match case.as_str() {
        "print" => debug_print::launch(&stream, config, &dvalues).unwrap(),
        "assert" => checked_division::launch(&stream, config, &dvalues, &mut out).unwrap(),
        "bounds" => off_by_one::launch(&stream, config, &dvalues, &mut out).unwrap(),
        other => panic!("unknown case {other}"),
    }
    match stream.synchronize() {
        Ok(()) => println!("CASE {case}: completed"),
        Err(error) => println!("CASE {case}: synchronize failed: {error:?}"),
    }
}

#[test]
fn device_printing_assertions_and_bounds_checks() {
    let Some(_) = common::gpu_or_skip() else {
        return;
    };
    let run = |case: &str, bounds_checks: &str| {
        let output = std::process::Command::new(std::env::current_exe().unwrap())
            .args([
                "--ignored",
                "--exact",
                "child_debug_case",
                "--nocapture",
                "--test-threads=1",
            ])
            .env("CUDAJIT_TEST_CASE", case)
            .env("CUDAJIT_BOUNDS_CHECKS", bounds_checks)
            .output()
            .unwrap();
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
        eprintln!("--- case {case} ---\n{text}");
        text
    };
    let printed = run("print", "0");
    assert!(
        printed.contains("value 0 = 7 half 3.50 positive true hex 7"),
        "{printed}"
    );
    assert!(
        printed.contains("value 1 = 8 half 4.00 positive true hex 8"),
        "{printed}"
    );
    assert!(printed.contains("CASE print: completed"), "{printed}");

    let asserted = run("assert", "0");
    assert!(asserted.contains("zero divisor at index 3"), "{asserted}");
    assert!(asserted.contains("CUDA_ERROR_ASSERT"), "{asserted}");

    let checked = run("bounds", "1");
    assert!(
        checked.contains("index out of bounds: the len is 256 but the index is 256"),
        "{checked}"
    );
    assert!(checked.contains("CUDA_ERROR_ASSERT"), "{checked}");

    // Without checks the same read goes one element past the end, silently.
    let unchecked = run("bounds", "0");
    assert!(unchecked.contains("CASE bounds: completed"), "{unchecked}");
}

#[test]
fn match_on_integers() {
    let Some(context) = common::gpu_or_skip() else {
        return;
    };
    let stream = context.default_stream();
    let values: Vec<i32> = (-30..70).collect();
    let n = values.len();
    let dvalues = stream.clone_htod(&values).unwrap();
    let mut classes = stream.alloc_zeros::<u32>(n).unwrap();
    let mut flags = stream.alloc_zeros::<u32>(n).unwrap();
    classify::launch(
        &stream,
        LaunchConfig::for_elements(n),
        &dvalues,
        &mut classes,
        &mut flags,
    )
    .unwrap();
    let (mut ec, mut ef) = (vec![0; n], vec![0; n]);
    classify_ref(&values, &mut ec, &mut ef);
    assert_eq!(stream.clone_dtoh(&classes).unwrap(), ec);
    assert_eq!(stream.clone_dtoh(&flags).unwrap(), ef);
}

#[test]
fn inline_ptx_runs() {
    let Some(context) = common::gpu_or_skip() else {
        return;
    };
    let stream = context.default_stream();
    let n = 1000;
    let a: Vec<u32> = (0..n as u32).collect();
    let b: Vec<f64> = (0..n).map(|i| i as f64 * 0.25).collect();
    let (da, db) = (
        stream.clone_htod(&a).unwrap(),
        stream.clone_htod(&b).unwrap(),
    );
    let mut out = stream.alloc_zeros::<u32>(n).unwrap();
    let mut wide = stream.alloc_zeros::<f64>(n).unwrap();
    let mut lanes = stream.alloc_zeros::<u32>(n).unwrap();
    inline_ptx::launch(
        &stream,
        LaunchConfig::for_elements(n),
        &da,
        &db,
        &mut out,
        &mut wide,
        &mut lanes,
    )
    .unwrap();
    let (out, wide, lanes) = (
        stream.clone_dtoh(&out).unwrap(),
        stream.clone_dtoh(&wide).unwrap(),
        stream.clone_dtoh(&lanes).unwrap(),
    );
    for i in 0..n {
        assert_eq!(out[i], a[i] + 7);
        assert_eq!(wide[i], b[i] * 2.0 + 0.5);
        assert_eq!(lanes[i], (i % 32) as u32);
    }
}

#[test]
fn structs_by_value_and_in_slices() {
    let Some(context) = common::gpu_or_skip() else {
        return;
    };
    let stream = context.default_stream();
    let n = 3000;
    let particles: Vec<Particle> = (0..n)
        .map(|i| Particle {
            x: i as f32,
            v: 1.0,
            id: i as u32,
            alive: i % 3 != 0,
            mass: 2.0 * i as f64,
        })
        .collect();
    let step = Step {
        dt: 0.5,
        gravity: -2.0,
        generation: 1 << 40,
    };
    let mut dparticles = stream.clone_htod(&particles).unwrap();
    let mut snapshot = stream.alloc_zeros::<Particle>(n).unwrap();
    let mut ids = stream.alloc_zeros::<u64>(n).unwrap();
    advance::launch(
        &stream,
        LaunchConfig::for_elements(n),
        step,
        &mut dparticles,
        &mut snapshot,
        &mut ids,
    )
    .unwrap();
    let (mut ep, mut es, mut ei) = (particles.clone(), particles.clone(), vec![0u64; n]);
    advance_ref(step, &mut ep, &mut es, &mut ei);
    assert_eq!(stream.clone_dtoh(&dparticles).unwrap(), ep);
    assert_eq!(stream.clone_dtoh(&snapshot).unwrap(), es);
    assert_eq!(stream.clone_dtoh(&ids).unwrap(), ei);
}

#[test]
fn tuples() {
    let Some(context) = common::gpu_or_skip() else {
        return;
    };
    let stream = cudajit::Stream::from_cuda(context.default_stream());
    let outputs = common::cases::tuples_case(&stream).unwrap();
    for (output, expected) in outputs.iter().zip(common::cases::tuples_expected()) {
        assert_eq!(output.values, expected, "{}", output.name);
    }
}

#[test]
fn values_returned_by_device_functions() {
    let Some(context) = common::gpu_or_skip() else {
        return;
    };
    let stream = cudajit::Stream::from_cuda(context.default_stream());
    let outputs = common::cases::returned_values_case(&stream).unwrap();
    for (output, expected) in outputs
        .iter()
        .zip(common::cases::returned_values_expected())
    {
        assert_eq!(output.values, expected, "{}", output.name);
    }
}

#[test]
fn tuple_values_of_branches() {
    let Some(context) = common::gpu_or_skip() else {
        return;
    };
    let stream = cudajit::Stream::from_cuda(context.default_stream());
    let outputs = common::cases::tuple_branches_case(&stream).unwrap();
    for (output, expected) in outputs.iter().zip(common::cases::tuple_branches_expected()) {
        assert_eq!(output.values, expected, "{}", output.name);
    }
}

#[test]
fn fieldless_enums() {
    let Some(context) = common::gpu_or_skip() else {
        return;
    };
    let stream = context.default_stream();
    let n = 4099;
    let all = [Op::Add, Op::Sub, Op::Mul, Op::Keep];
    let ops: Vec<Op> = (0..n).map(|i| all[(i * 7 + i / 5) % 4]).collect();
    let a: Vec<f32> = (0..n).map(|i| i as f32 * 0.5).collect();
    let b: Vec<f32> = (0..n).map(|i| 3.0 - i as f32).collect();
    let dops = stream.clone_htod(&ops).unwrap();
    let (da, db) = (
        stream.clone_htod(&a).unwrap(),
        stream.clone_htod(&b).unwrap(),
    );
    for mode in [Op::Mul, Op::Add] {
        let mut dout = stream.alloc_zeros::<f32>(n).unwrap();
        let mut dcodes = stream.alloc_zeros::<u32>(n).unwrap();
        apply_ops::launch(
            &stream,
            LaunchConfig::for_elements(n),
            mode,
            &dops,
            &da,
            &db,
            &mut dout,
            &mut dcodes,
        )
        .unwrap();
        let (mut out, mut codes) = (vec![0.0; n], vec![0u32; n]);
        apply_ops_ref(mode, &ops, &a, &b, &mut out, &mut codes);
        assert_eq!(stream.clone_dtoh(&dout).unwrap(), out, "mode {mode:?}");
        assert_eq!(stream.clone_dtoh(&dcodes).unwrap(), codes, "mode {mode:?}");
    }
}

#[test]
fn sixteen_bit_floats() {
    use cudajit::{bf16, f16};
    let Some(context) = common::gpu_or_skip() else {
        return;
    };
    let stream = context.default_stream();
    let n = 4096;
    let x: Vec<f16> = (0..n)
        .map(|i| f16::from_f32((i % 200) as f32 * 0.37 - 30.0))
        .collect();
    let y: Vec<bf16> = (0..n)
        .map(|i| bf16::from_f32((i % 97) as f32 * 1.3 - 50.0))
        .collect();
    let (dx, dy) = (
        stream.clone_htod(&x).unwrap(),
        stream.clone_htod(&y).unwrap(),
    );
    let mut o16 = stream.alloc_zeros::<f16>(n).unwrap();
    let mut ob = stream.alloc_zeros::<bf16>(n).unwrap();
    let mut wide = stream.alloc_zeros::<f32>(n).unwrap();
    half_precision::launch(
        &stream,
        LaunchConfig::for_elements(n),
        &dx,
        &dy,
        1.75,
        &mut o16,
        &mut ob,
        &mut wide,
    )
    .unwrap();
    let (mut e16, mut eb, mut ew) = (vec![f16::ZERO; n], vec![bf16::ZERO; n], vec![0.0; n]);
    half_precision_ref(&x, &y, 1.75, &mut e16, &mut eb, &mut ew);
    assert_eq!(stream.clone_dtoh(&wide).unwrap(), ew);
    // Each f16/bf16 operation rounds once, as the host's `half` does; an FMA contraction
    // on the device may round once fewer, so allow one unit in the last place.
    let got16 = stream.clone_dtoh(&o16).unwrap();
    for i in 0..n {
        let (a, b) = (got16[i].to_bits() as i32, e16[i].to_bits() as i32);
        assert!((a - b).abs() <= 1, "f16 i={i}: {} vs {}", got16[i], e16[i]);
    }
    let gotb = stream.clone_dtoh(&ob).unwrap();
    for i in 0..n {
        let (a, b) = (gotb[i].to_bits() as i32, eb[i].to_bits() as i32);
        assert!((a - b).abs() <= 1, "bf16 i={i}: {} vs {}", gotb[i], eb[i]);
    }
}
