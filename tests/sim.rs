//! Every kernel of `tests/common/kernels.rs` on the CPU simulator, checked against the CPU
//! references, and the simulator's reports of what kernels do wrong: out-of-bounds
//! indices, failed assertions, barriers not every thread reaches, data races on shared
//! memory, broken warp synchronisation. No GPU needed.

mod common;

use common::cases::{self, Outputs, Values};
use common::kernels::*;
use cudajit::prelude::*;
use cudajit::{Backend, Error, PrintTarget, SimError, SimOptions, SimStream, Stream};

fn sim() -> Stream {
    Stream::simulator()
}

fn f32s(output: &cases::Output) -> &[f32] {
    match &output.values {
        Values::F32(v) => v,
        other => panic!("{}: not f32: {other:?}", output.name),
    }
}

fn f64s(output: &cases::Output) -> &[f64] {
    match &output.values {
        Values::F64(v) => v,
        other => panic!("{}: not f64: {other:?}", output.name),
    }
}

fn find<'a>(outputs: &'a Outputs, name: &str) -> &'a cases::Output {
    outputs
        .iter()
        .find(|o| o.name == name)
        .unwrap_or_else(|| panic!("no output {name}"))
}

#[test]
fn saxpy_matches_the_cpu_exactly() {
    let outputs = cases::saxpy_case(&sim()).unwrap();
    for (n, output) in cases::SAXPY_SIZES.into_iter().zip(&outputs) {
        let (x, y0) = cases::saxpy_inputs(n);
        let mut expected = y0;
        saxpy_ref(1.75, &x, &mut expected);
        // No contraction into FMAs on the simulator: IEEE operations, as on the host.
        assert_eq!(f32s(output), expected.as_slice(), "n={n}");
    }
}

#[test]
fn integer_semantics_match_rust() {
    let outputs = cases::int_ops_case(&sim()).unwrap();
    let (a, b) = cases::int_ops_inputs();
    for (k, shift) in cases::SHIFTS.into_iter().enumerate() {
        let n = cases::INT_OPS_N;
        let (mut eo, mut ef) = (vec![0; n], vec![0; n]);
        int_ops_ref(&a, &b, shift, &mut eo, &mut ef);
        assert_eq!(outputs[2 * k].values, Values::I32(eo), "shift {shift}");
        assert_eq!(outputs[2 * k + 1].values, Values::U32(ef), "shift {shift}");
    }
}

#[test]
fn casts_saturate_like_rust() {
    let outputs = cases::casts_case(&sim()).unwrap();
    let x = cases::casts_inputs();
    let n = x.len();
    let (mut e1, mut e2, mut e3, mut e4, mut e5) =
        (vec![0; n], vec![0; n], vec![0; n], vec![0.0; n], vec![0; n]);
    casts_ref(&x, &mut e1, &mut e2, &mut e3, &mut e4, &mut e5);
    assert_eq!(outputs[0].values, Values::I32(e1));
    assert_eq!(outputs[1].values, Values::U8(e2));
    assert_eq!(outputs[2].values, Values::I16(e3));
    let got = f64s(&outputs[3]);
    for i in 0..n {
        assert!(
            got[i] == e4[i] || (got[i].is_nan() && e4[i].is_nan()),
            "i={i}"
        );
    }
    assert_eq!(outputs[4].values, Values::U64(e5));
}

#[test]
fn loops_and_control_flow_match_rust() {
    let outputs = cases::loops_case(&sim()).unwrap();
    let mut expected = vec![0; 4096];
    loops_ref(40, &mut expected);
    assert_eq!(outputs[0].values, Values::U64(expected));
}

#[test]
fn two_dimensional_grids() {
    let outputs = cases::transpose_case(&sim()).unwrap();
    let (rows, cols) = cases::TRANSPOSE;
    let output = f64s(&outputs[0]);
    for r in 0..rows {
        for c in 0..cols {
            assert_eq!(output[(c * rows + r) as usize], (r * cols + c) as f64 * 1.5);
        }
    }
}

#[test]
fn bools_travel_as_bytes() {
    let outputs = cases::bools_case(&sim()).unwrap();
    let (x, y) = cases::bools_inputs();
    for (k, invert) in [false, true].into_iter().enumerate() {
        let mut expected = vec![false; x.len()];
        bools_ref(invert, &x, &y, &mut expected);
        assert_eq!(outputs[k].values, Values::Bool(expected), "invert {invert}");
    }
}

#[test]
fn grid_stride_loops() {
    let outputs = cases::scale_strided_case(&sim()).unwrap();
    assert!(f64s(&outputs[0])
        .iter()
        .enumerate()
        .all(|(i, &v)| v == i as f64 * 3.0));
}

#[test]
fn generic_kernels_and_device_functions() {
    let outputs = cases::generics_case(&sim()).unwrap();
    let (a, b, input, start) = cases::generics_inputs();
    let n = cases::GENERIC_N;
    let blend32: Vec<f32> = (0..n).map(|i| lerp(a[i], b[i], 0.25)).collect();
    assert_eq!(f32s(find(&outputs, "blend f32")), blend32.as_slice());
    let blend64: Vec<f64> = (0..n)
        .map(|i| lerp(f64::from(a[i]), f64::from(b[i]), 0.75))
        .collect();
    assert_eq!(f64s(find(&outputs, "blend f64")), blend64.as_slice());
    for w in [1usize, 4] {
        let expected: Vec<f32> = (0..n)
            .map(|i| (0..w).map(|k| input[(i + k).min(n - 1)]).sum::<f32>() * 2.0)
            .collect();
        assert_eq!(
            f32s(find(&outputs, &format!("window_sums W={w}"))),
            expected.as_slice()
        );
    }
    for rounds in [0u32, 3, 10] {
        let mut expected = start.clone();
        collatz_ref(rounds, &mut expected);
        assert_eq!(
            find(&outputs, &format!("collatz rounds={rounds}")).values,
            Values::U64(expected)
        );
    }
}

#[test]
fn math_functions_match_the_host() {
    let outputs = cases::math_ops_case(&sim()).unwrap();
    let (x, y, bits) = cases::math_inputs();
    let n = x.len();
    let (mut e32, mut e64, mut ec) = (vec![0.0; n], vec![0.0; n], vec![0; n]);
    math_ops_ref(&x, &y, &bits, &mut e32, &mut e64, &mut ec);
    assert_eq!(outputs[2].values, Values::U32(ec));
    let (g32, g64) = (f32s(&outputs[0]), f64s(&outputs[1]));
    for i in 0..n {
        // The simulator calls the host's math library, as the reference does; only
        // `powi` is computed differently (through `powf` in double precision).
        let scale32 = 1.0 + x[i].abs().powi(3) + x[i].abs();
        assert!((g32[i] - e32[i]).abs() <= 1e-6 * scale32, "f32 i={i}");
        assert!(
            (g64[i] - e64[i]).abs() <= 1e-14 * (1.0 + y[i] * y[i]),
            "f64 i={i}"
        );
    }
}

#[test]
fn shared_memory_atomics_and_warp_reductions() {
    let stream = sim();
    let total = cases::block_sum_case(&stream).unwrap();
    let data: Vec<u32> = cases::pseudo_random(9, cases::REDUCE_N)
        .iter()
        .map(|&r| (r % 1000) as u32)
        .collect();
    let expected: u64 = data.iter().map(|&v| u64::from(v)).sum();
    assert_eq!(total[0].values, Values::U64(vec![expected]));

    let bins = cases::histogram_case(&stream).unwrap();
    let mut expected = vec![0u32; 256];
    for b in cases::histogram_inputs() {
        expected[b as usize] += 1;
    }
    assert_eq!(bins[0].values, Values::U32(expected));

    let tiled = cases::transpose_tiled_case(&stream).unwrap();
    let (rows, cols) = cases::TILED;
    let output = f32s(&tiled[0]);
    for r in 0..rows {
        for c in 0..cols {
            assert_eq!(output[(c * rows + r) as usize], (r * cols + c) as f32);
        }
    }
}

#[test]
fn warp_votes_scans_dynamic_shared_memory_and_compare_exchange() {
    let outputs = cases::warp_ops_case(&sim()).unwrap();
    let values = cases::warp_values();
    let threads = cases::WARP_THREADS;
    let [Values::U32(ballots), Values::U32(flags), Values::I32(scan), Values::I32(reversed), Values::I32(extremes)] =
        outputs.map_values()
    else {
        panic!("output types");
    };
    for (w, lanes) in values.chunks(32).enumerate() {
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
            assert_eq!(reversed[b * threads + t], block[threads - 1 - t]);
        }
    }
    assert_eq!(extremes[0], *values.iter().min().unwrap());
    assert_eq!(extremes[1], *values.iter().max().unwrap());
    assert_eq!(extremes[2], values.len() as i32);
}

/// Destructures outputs by position.
trait MapValues {
    fn map_values<const N: usize>(&self) -> [Values; N];
}

impl MapValues for Outputs {
    fn map_values<const N: usize>(&self) -> [Values; N] {
        std::array::from_fn(|k| self[k].values.clone())
    }
}

#[test]
fn vector_accesses_and_register_arrays() {
    let outputs = cases::vectors_and_arrays_case(&sim()).unwrap();
    for (k, n) in [4usize, 7, 1 << 16, (1 << 16) + 3].into_iter().enumerate() {
        let x: Vec<f32> = (0..n).map(|i| (i % 97) as f32).collect();
        let mut expected: Vec<f32> = (0..n).map(|i| (i % 13) as f32 * 0.5).collect();
        saxpy_ref(3.0, &x, &mut expected);
        assert_eq!(f32s(&outputs[k]), expected.as_slice(), "n={n}");
    }
    let (a, b) = cases::arrays_inputs();
    let (k, r) = (cases::K, cases::R);
    let got = f64s(&outputs[4]);
    for row in 0..cases::ROWS {
        for c in 0..r {
            let mut expected = 0.0;
            for j in 0..k {
                expected += a[row * k + j] * b[j * r + c];
            }
            assert_eq!(got[row * r + c], expected, "row {row} column {c}");
        }
    }
}

#[test]
fn warp_helpers_scoped_atomics_and_special_functions() {
    let outputs = cases::warp_helpers_case(&sim()).unwrap();
    let values = cases::helper_values();
    let (blocks, threads) = (cases::HELPER_BLOCKS, cases::HELPER_THREADS);
    let (sums, ranges) = (f32s(&outputs[0]), f32s(&outputs[1]));
    for (w, lanes) in values.chunks(32).enumerate() {
        assert_eq!(sums[w], lanes.iter().sum::<f32>(), "warp {w}");
        let max = lanes.iter().cloned().fold(f32::MIN, f32::max);
        let min = lanes.iter().cloned().fold(f32::MAX, f32::min);
        assert_eq!(ranges[w], max - min, "warp {w}");
    }
    let Values::U32(scans) = &outputs[2].values else {
        panic!()
    };
    assert!(scans
        .iter()
        .enumerate()
        .all(|(i, &s)| s == (i % 32) as u32 + 1));
    let Values::U32(per_block) = &outputs[3].values else {
        panic!()
    };
    assert!(per_block[..blocks].iter().all(|&c| c == threads as u32));
    assert!(per_block[blocks..].iter().all(|&m| m == threads as u32 - 1));
    assert_eq!(
        outputs[4].values,
        Values::U64(vec![(blocks * threads) as u64])
    );
    let specials = f32s(&outputs[5]);
    for (i, &v) in values.iter().enumerate() {
        let x = v * 0.01;
        let expected = erf(x)
            + erfc(x)
            + 1.0 / (x.abs() + 1.0).sqrt()
            + x.exp()
            + x.sin()
            + x.cos()
            + (x.abs() + 1.0).ln()
            + x / 3.0;
        assert!(
            (specials[i] - expected).abs() < 1e-5 * expected.abs().max(1.0),
            "i={i}"
        );
    }
}

#[test]
fn match_on_integers() {
    let outputs = cases::classify_case(&sim()).unwrap();
    let values: Vec<i32> = (-30..70).collect();
    let (mut ec, mut ef) = (vec![0; values.len()], vec![0; values.len()]);
    classify_ref(&values, &mut ec, &mut ef);
    assert_eq!(outputs[0].values, Values::U32(ec));
    assert_eq!(outputs[1].values, Values::U32(ef));
}

#[test]
fn libdevice_functions_within_a_few_ulp_of_the_host() {
    for case in [cases::libdevice_f32_case, cases::libdevice_f64_case] {
        for output in case(&sim()).unwrap() {
            assert!(matches!(output.values, Values::F32(_) | Values::F64(_)));
        }
    }
}

// ----- printing, assertions, bounds -----

fn capturing() -> (SimStream, Stream) {
    let options = SimOptions {
        print: PrintTarget::capture(),
        ..SimOptions::default()
    };
    (
        SimStream::with_options(options.clone()),
        Stream::simulator_with(options),
    )
}

#[test]
fn printing_formats_like_the_gpu() {
    let (stream, _) = capturing();
    let values: Vec<i32> = (0..256).map(|i| 7 + i).collect();
    let dvalues = stream.clone_htod(&values).unwrap();
    debug_print::launch(&stream, LaunchConfig::new(1, 256), &dvalues).unwrap();
    let printed = stream.take_output();
    assert!(
        printed.contains("value 0 = 7 half 3.50 positive true hex 7\n"),
        "{printed}"
    );
    assert!(
        printed.contains("value 1 = 8 half 4.00 positive true hex 8\n"),
        "{printed}"
    );
    assert_eq!(printed.lines().count(), 2);
}

#[test]
fn a_failed_assertion_names_kernel_block_and_thread() {
    let (stream, _) = capturing();
    let values: Vec<i32> = (0..256).map(|i| if i == 3 { 0 } else { 7 + i }).collect();
    let dvalues = stream.clone_htod(&values).unwrap();
    let mut out = stream.alloc_zeros::<i32>(256).unwrap();
    let error = checked_division::launch(&stream, LaunchConfig::new(2, 128), &dvalues, &mut out)
        .unwrap_err();
    let Error::Simulator(SimError::Assertion { site, message }) = &error else {
        panic!("expected an assertion failure, got {error}");
    };
    assert_eq!(site.kernel, "checked_division");
    assert_eq!(site.block, [0, 0, 0]);
    assert_eq!(site.thread, [3, 0, 0]);
    assert!(message.contains("assertion failed"), "{message}");
    assert!(site.location.contains("kernels.rs:"), "{}", site.location);
    assert!(stream.take_output().contains("zero divisor at index 3"));
    eprintln!("reported: {error}");
}

#[kernel]
fn quotients(a: &[i32], b: &[i32], out: &mut [i32], remainder: bool) {
    let i = global_index();
    if i < out.len() {
        if remainder {
            out[i] = a[i] % b[i];
        } else {
            out[i] = a[i] / b[i];
        }
    }
}

#[kernel]
fn euclidean_quotients(a: &[u32], b: &[u32], out: &mut [u32]) {
    let i = global_index();
    if i < out.len() {
        out[i] = a[i].div_euclid(b[i]) + a[i].div_ceil(b[i]) + a[i] / 7;
    }
}

/// The line of `tests/sim.rs` holding `text` (1-based).
fn line_of(text: &str) -> usize {
    include_str!("sim.rs")
        .lines()
        .position(|line| line.contains(text))
        .expect("the text is in tests/sim.rs")
        + 1
}

/// An integer division or remainder by zero stops the kernel at its line, as Rust would
/// panic (the GPU's value is unspecified), naming the thread; without a zero divisor the
/// quotients are Rust's.
#[test]
fn integer_division_by_zero_is_reported_at_its_line() {
    let stream = SimStream::new();
    let a: Vec<i32> = (0..64).map(|i| 1000 - 37 * i).collect();
    let mut b: Vec<i32> = (0..64)
        .map(|i| i % 9 - 4)
        .map(|v| if v == 0 { 3 } else { v })
        .collect();
    let da = stream.clone_htod(&a).unwrap();
    let divide = |b: &[i32], remainder: bool| {
        let db = stream.clone_htod(b).unwrap();
        let mut out = stream.alloc_zeros::<i32>(64).unwrap();
        let config = LaunchConfig::new(2, 32);
        quotients::launch(&stream, config, &da, &db, &mut out, remainder)
            .map(|()| stream.clone_dtoh(&out).unwrap())
    };
    for remainder in [false, true] {
        let expect: Vec<i32> = a
            .iter()
            .zip(&b)
            .map(|(x, y)| if remainder { x % y } else { x / y })
            .collect();
        assert_eq!(divide(&b, remainder).unwrap(), expect);
    }
    b[37] = 0;
    for (remainder, text, message) in [
        (false, "a[i] / b[i]", "attempt to divide by zero"),
        (
            true,
            "a[i] % b[i]",
            "attempt to calculate the remainder with a divisor of zero",
        ),
    ] {
        let error = divide(&b, remainder).unwrap_err();
        let Error::Simulator(SimError::DivisionByZero { site, remainder: r }) = &error else {
            panic!("expected a division by zero, got {error}");
        };
        assert_eq!(*r, remainder);
        assert_eq!((site.block, site.thread), ([1, 0, 0], [5, 0, 0]));
        assert_eq!(site.kernel, "quotients");
        let line = format!("tests/sim.rs:{}:", line_of(text));
        assert!(
            site.location.starts_with(&line),
            "{} is not {line}",
            site.location
        );
        assert!(error.to_string().contains(message), "{error}");
        eprintln!("reported: {error}");
    }

    let a: Vec<u32> = (0..32).map(|i| 3 * i + 1).collect();
    let mut b: Vec<u32> = (0..32).map(|i| i % 5 + 1).collect();
    let da = stream.clone_htod(&a).unwrap();
    let euclidean = |b: &[u32]| {
        let mut out = stream.alloc_zeros::<u32>(32).unwrap();
        let db = stream.clone_htod(b).unwrap();
        euclidean_quotients::launch(&stream, LaunchConfig::new(1, 32), &da, &db, &mut out)
            .map(|()| stream.clone_dtoh(&out).unwrap())
    };
    let expect: Vec<u32> = a
        .iter()
        .zip(&b)
        .map(|(x, y)| x.div_euclid(*y) + x.div_ceil(*y) + x / 7)
        .collect();
    assert_eq!(euclidean(&b).unwrap(), expect);
    b[2] = 0;
    let error = euclidean(&b).unwrap_err();
    assert!(
        matches!(&error, Error::Simulator(SimError::DivisionByZero { site, remainder: false }) if site.thread == [2, 0, 0]),
        "{error}"
    );
    eprintln!("reported: {error}");
}

#[test]
fn out_of_bounds_indices_are_reported_with_the_index() {
    let stream = SimStream::new();
    let values: Vec<i32> = (0..256).collect();
    let dvalues = stream.clone_htod(&values).unwrap();
    let mut out = stream.alloc_zeros::<i32>(256).unwrap();
    let error =
        off_by_one::launch(&stream, LaunchConfig::new(2, 128), &dvalues, &mut out).unwrap_err();
    let Error::Simulator(SimError::OutOfBounds { site, index, len }) = &error else {
        panic!("expected an index out of bounds, got {error}");
    };
    assert_eq!((*index, *len), (256, 256));
    assert_eq!(site.block, [1, 0, 0]);
    assert_eq!(site.thread, [127, 0, 0]);
    assert_eq!(site.kernel, "off_by_one");
    eprintln!("reported: {error}");
}

#[kernel]
fn skips_barrier(out: &mut [u32]) {
    let t = thread_idx().x;
    if t < 16 {
        sync_threads();
    }
    out[t as usize] = t;
}

#[kernel]
#[allow(clippy::if_same_then_else)] // two distinct barriers, one per branch
fn two_barriers(out: &mut [u32]) {
    let t = thread_idx().x;
    if t < 32 {
        sync_threads();
    } else {
        sync_threads();
    }
    out[t as usize] = t;
}

#[test]
fn a_barrier_skipped_by_some_threads_is_reported() {
    let stream = SimStream::new();
    let mut out = stream.alloc_zeros::<u32>(64).unwrap();
    let error = skips_barrier::launch(&stream, LaunchConfig::new(1, 64), &mut out).unwrap_err();
    let Error::Simulator(SimError::BarrierDivergence { site, detail }) = &error else {
        panic!("expected a barrier divergence, got {error}");
    };
    assert_eq!(site.thread, [0, 0, 0]);
    assert!(detail.contains("exited without reaching it"), "{detail}");
    eprintln!("reported: {error}");

    let error = two_barriers::launch(&stream, LaunchConfig::new(1, 64), &mut out).unwrap_err();
    assert!(
        matches!(&error, Error::Simulator(SimError::BarrierDivergence { detail, .. }) if detail.contains("at the one at")),
        "{error}"
    );
    eprintln!("reported: {error}");
}

#[kernel]
fn racy_neighbours(input: &[f32], out: &mut [f32]) {
    let tile = shared_array::<f32>(64);
    let t = thread_idx().x as usize;
    tile[t] = input[t];
    // Missing sync_threads(): thread t reads what thread t + 1 writes.
    out[t] = tile[(t + 1) % 64];
}

#[kernel]
fn synced_neighbours(input: &[f32], out: &mut [f32]) {
    let tile = shared_array::<f32>(64);
    let t = thread_idx().x as usize;
    tile[t] = input[t];
    sync_threads();
    out[t] = tile[(t + 1) % 64];
}

#[test]
fn shared_memory_races_are_reported() {
    let stream = SimStream::new();
    let input = stream.clone_htod(&[1.0f32; 64]).unwrap();
    let mut out = stream.alloc_zeros::<f32>(64).unwrap();
    let error =
        racy_neighbours::launch(&stream, LaunchConfig::new(1, 64), &input, &mut out).unwrap_err();
    let Error::Simulator(SimError::SharedMemoryRace { site, detail }) = &error else {
        panic!("expected a data race, got {error}");
    };
    assert!(detail.contains("`tile`["), "{detail}");
    assert!(detail.contains("no sync_threads()"), "{detail}");
    assert_eq!(site.kernel, "racy_neighbours");
    eprintln!("reported: {error}");
    synced_neighbours::launch(&stream, LaunchConfig::new(1, 64), &input, &mut out).unwrap();
}

/// The two halves of the warp run different shuffles, each naming the whole warp.
#[kernel]
fn divergent_shuffle(out: &mut [u32]) {
    let lane = lane_id();
    let mut v = lane;
    if lane < 16 {
        v = shfl_xor_sync(FULL_WARP, v, 1);
    } else {
        v = shfl_down_sync(FULL_WARP, v, 1);
    }
    out[thread_idx().x as usize] = v;
}

#[kernel]
fn partial_shuffle(out: &mut [u32]) {
    let lane = lane_id();
    let mut v = lane;
    if lane < 16 {
        v = shfl_xor_sync(0xffff, v, 1);
    }
    out[thread_idx().x as usize] = v;
}

#[test]
fn warp_operations_with_missing_lanes_are_reported() {
    let stream = SimStream::new();
    let mut out = stream.alloc_zeros::<u32>(32).unwrap();
    let error = divergent_shuffle::launch(&stream, LaunchConfig::new(1, 32), &mut out).unwrap_err();
    let Error::Simulator(SimError::Warp { detail, .. }) = &error else {
        panic!("expected a warp error, got {error}");
    };
    assert!(detail.contains("lane 16"), "{detail}");
    eprintln!("reported: {error}");
    // With the mask naming only the lanes that take the branch, it is fine.
    partial_shuffle::launch(&stream, LaunchConfig::new(1, 32), &mut out).unwrap();
    let got = stream.clone_dtoh(&out).unwrap();
    let expected: Vec<u32> = (0..32).map(|l| if l < 16 { l ^ 1 } else { l }).collect();
    assert_eq!(got, expected);
}

#[test]
fn buffers_of_the_other_backend_are_refused() {
    let stream = SimStream::new();
    let x = stream.clone_htod(&[1.0f32; 4]).unwrap();
    let mut y = stream.alloc_zeros::<f32>(4).unwrap();
    saxpy::launch(&stream, LaunchConfig::for_elements(4), 1.0, &x, &mut y).unwrap();
    assert_eq!(stream.clone_dtoh(&y).unwrap(), vec![1.0; 4]);
    if let Ok(context) = cudajit::default_context() {
        let gpu = context.default_stream();
        let error = saxpy::launch(&gpu, LaunchConfig::for_elements(4), 1.0, &x, &mut y);
        assert!(matches!(error, Err(Error::Backend(_))), "{error:?}");
    }
}

#[test]
fn launch_limits_hold_on_the_simulator() {
    let stream = sim();
    assert_eq!(stream.backend(), Backend::Simulator);
    let x = stream.clone_htod(&[0.0f32; 16]).unwrap();
    let mut y = stream.alloc_zeros::<f32>(16).unwrap();
    for config in [
        LaunchConfig::new(1, 2048),
        LaunchConfig::new(0, 32),
        LaunchConfig::new(1, 32).with_shared_mem(10 << 20),
    ] {
        let result = saxpy::launch(&stream, config, 1.0, &x, &mut y);
        assert!(
            matches!(result, Err(Error::LaunchConfig { .. })),
            "{config:?}: {result:?}"
        );
    }
}

#[test]
fn the_simulator_reports_its_work() {
    let stream = SimStream::new();
    let n = 10_000;
    let x = stream.clone_htod(&vec![1.0f32; n]).unwrap();
    let mut y = stream.alloc_zeros::<f32>(n).unwrap();
    saxpy::launch(&stream, LaunchConfig::for_elements(n), 2.0, &x, &mut y).unwrap();
    let report = stream.last_report().unwrap();
    assert_eq!(report.threads, n.div_ceil(256) as u64 * 256);
    assert_eq!(report.blocks, n.div_ceil(256) as u64);
    assert!(report.threads_per_second() > 0.0);
}

#[test]
fn tuples_match_rust() {
    let outputs = cases::tuples_case(&sim()).unwrap();
    for (output, expected) in outputs.iter().zip(cases::tuples_expected()) {
        assert_eq!(output.values, expected, "{}", output.name);
    }
}

#[test]
fn values_returned_by_device_functions_match_rust() {
    let outputs = cases::returned_values_case(&sim()).unwrap();
    for (output, expected) in outputs.iter().zip(cases::returned_values_expected()) {
        assert_eq!(output.values, expected, "{}", output.name);
    }
}

#[test]
fn tuple_values_of_branches_match_rust() {
    let outputs = cases::tuple_branches_case(&sim()).unwrap();
    for (output, expected) in outputs.iter().zip(cases::tuple_branches_expected()) {
        assert_eq!(output.values, expected, "{}", output.name);
    }
}

/// An enum by value on the simulator: `Op`'s `repr(u8)` discriminants, matched.
#[kernel]
fn by_mode(mode: Op, x: &[f32], y: &mut [f32]) {
    let i = global_index();
    if i < y.len() {
        y[i] = match mode {
            Op::Add => x[i] + 1.0,
            Op::Sub => x[i] - 1.0,
            Op::Mul => x[i] * 2.0,
            Op::Keep => x[i],
        };
    }
}

#[test]
fn enums_and_structs_by_value_run() {
    let stream = sim();
    let x: Vec<f32> = (0..300).map(|i| i as f32).collect();
    let dx = stream.clone_htod(&x).unwrap();
    for (mode, f) in [
        (Op::Add, (|v| v + 1.0) as fn(f32) -> f32),
        (Op::Sub, |v| v - 1.0),
        (Op::Mul, |v| v * 2.0),
        (Op::Keep, |v| v),
    ] {
        let mut dy = stream.alloc_zeros::<f32>(x.len()).unwrap();
        by_mode::launch(
            &stream,
            LaunchConfig::for_elements(x.len()),
            mode,
            &dx,
            &mut dy,
        )
        .unwrap();
        let expected: Vec<f32> = x.iter().map(|&v| f(v)).collect();
        assert_eq!(stream.clone_dtoh(&dy).unwrap(), expected, "{mode:?}");
    }
    let step = Step {
        dt: 0.5,
        gravity: -2.0,
        generation: 1,
    };
    let mut particles = stream.alloc_zeros::<u64>(3).unwrap();
    struct_param::launch(&stream, LaunchConfig::for_elements(3), step, &mut particles).unwrap();
    assert_eq!(stream.clone_dtoh(&particles).unwrap(), vec![1, 1, 1]);
}

/// A struct by value: its fields read from the launch's copy of its bytes.
#[kernel]
fn struct_param(step: Step, out: &mut [u64]) {
    let i = global_index();
    if i < out.len() {
        out[i] = step.generation;
    }
}

#[test]
fn inline_ptx_runs_from_its_template() {
    let stream = SimStream::new();
    let n = 1000;
    let a: Vec<u32> = (0..n as u32).map(|i| i.wrapping_mul(0x9e37_79b9)).collect();
    let b: Vec<f64> = (0..n).map(|i| i as f64 * 0.25 - 100.0).collect();
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
        assert_eq!(out[i], a[i].wrapping_add(7), "add.u32 wraps");
        assert_eq!(wide[i], b[i].mul_add(2.0, 0.5), "fma.rn.f64 rounds once");
        assert_eq!(lanes[i], (i % 32) as u32, "%laneid");
    }
}
