//! Every kernel of `kernels.rs` as a case that runs on a [`cudajit::Stream`] of either
//! backend and returns its outputs: `tests/sim.rs` checks them against the CPU references
//! on the simulator, `tests/differential.rs` compares the simulator's with the GPU's.
#![allow(dead_code)]

use cudajit::prelude::*;
use cudajit::{BufferElement, Error, Stream};

use super::iteration::*;
use super::kernels::*;
use super::language::*;

/// The values of one output buffer.
#[derive(Clone, Debug, PartialEq)]
pub enum Values {
    Bool(Vec<bool>),
    U8(Vec<u8>),
    I16(Vec<i16>),
    I32(Vec<i32>),
    U32(Vec<u32>),
    I64(Vec<i64>),
    U64(Vec<u64>),
    F32(Vec<f32>),
    F64(Vec<f64>),
}

/// How closely two backends' floats must agree.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Tolerance {
    /// Bit for bit (NaNs equal to NaNs): integers, and IEEE operations without contraction.
    Exact,
    /// Within this many units in the last place.
    Ulp(u64),
    /// `|a - b| <= relative * max(1, |a|, |b|)`: sums of libdevice results, and the GPU's
    /// approximate `fast_*` intrinsics.
    Relative(f64),
}

/// One output of a case.
#[derive(Clone, Debug)]
pub struct Output {
    pub name: String,
    pub values: Values,
    /// The agreement expected between the GPU (compiled with `CUDAJIT_FMA=0`) and the
    /// simulator.
    pub tolerance: Tolerance,
}

pub type Outputs = Vec<Output>;

fn out(name: impl Into<String>, values: Values, tolerance: Tolerance) -> Output {
    Output {
        name: name.into(),
        values,
        tolerance,
    }
}

fn exact(name: impl Into<String>, values: Values) -> Output {
    out(name, values, Tolerance::Exact)
}

/// A deterministic pseudo-random sequence (xorshift), so failures reproduce.
pub fn pseudo_random(seed: u64, count: usize) -> Vec<u64> {
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

fn up<T: BufferElement>(stream: &Stream, data: &[T]) -> Result<cudajit::Buffer<T>, Error> {
    stream.clone_htod(data)
}

/// A case: its name and how to run it.
pub struct Case {
    pub name: &'static str,
    pub run: fn(&Stream) -> Result<Outputs, Error>,
}

/// Every case.
pub fn all() -> Vec<Case> {
    vec![
        Case {
            name: "transpose_const_tile",
            run: transpose_const_tile_case,
        },
        Case {
            name: "named_constants",
            run: named_constants_case,
        },
        Case {
            name: "tuples",
            run: tuples_case,
        },
        Case {
            name: "tuple_branches",
            run: tuple_branches_case,
        },
        Case {
            name: "returned_values",
            run: returned_values_case,
        },
        Case {
            name: "array_forms",
            run: array_forms_case,
        },
        Case {
            name: "iterator_loops",
            run: iterator_loops_case,
        },
        Case {
            name: "option_forms",
            run: option_forms_case,
        },
        Case {
            name: "views_closures_grid",
            run: views_closures_grid_case,
        },
        Case {
            name: "saxpy",
            run: saxpy_case,
        },
        Case {
            name: "int_ops",
            run: int_ops_case,
        },
        Case {
            name: "casts",
            run: casts_case,
        },
        Case {
            name: "loops",
            run: loops_case,
        },
        Case {
            name: "transpose",
            run: transpose_case,
        },
        Case {
            name: "bools",
            run: bools_case,
        },
        Case {
            name: "scale_strided",
            run: scale_strided_case,
        },
        Case {
            name: "generics",
            run: generics_case,
        },
        Case {
            name: "math_ops",
            run: math_ops_case,
        },
        Case {
            name: "block_sum",
            run: block_sum_case,
        },
        Case {
            name: "histogram",
            run: histogram_case,
        },
        Case {
            name: "transpose_tiled",
            run: transpose_tiled_case,
        },
        Case {
            name: "warp_ops",
            run: warp_ops_case,
        },
        Case {
            name: "vectors_and_arrays",
            run: vectors_and_arrays_case,
        },
        Case {
            name: "warp_helpers",
            run: warp_helpers_case,
        },
        Case {
            name: "classify",
            run: classify_case,
        },
        Case {
            name: "libdevice_f32",
            run: libdevice_f32_case,
        },
        Case {
            name: "libdevice_f64",
            run: libdevice_f64_case,
        },
        Case {
            name: "scalar_methods",
            run: super::methods::scalar_methods_case,
        },
        Case {
            name: "struct_operators",
            run: super::struct_operators::struct_operators_case,
        },
        Case {
            name: "nested_arrays",
            run: super::nested_arrays::nested_arrays_case,
        },
    ]
}

// ----- inputs shared by the runs and the references -----

pub const SAXPY_SIZES: [usize; 5] = [0, 1, 255, 257, 100_003];

pub fn saxpy_inputs(n: usize) -> (Vec<f32>, Vec<f32>) {
    let random = pseudo_random(n as u64 + 1, 2 * n);
    let x = random[..n]
        .iter()
        .map(|&r| (r % 2001) as f32 * 0.01 - 10.0)
        .collect();
    let y = random[n..]
        .iter()
        .map(|&r| (r % 3001) as f32 * 0.1)
        .collect();
    (x, y)
}

pub fn saxpy_case(stream: &Stream) -> Result<Outputs, Error> {
    let mut outputs = Vec::new();
    for n in SAXPY_SIZES {
        let (x, y0) = saxpy_inputs(n);
        let dx = up(stream, &x)?;
        let mut dy = up(stream, &y0)?;
        saxpy::launch(stream, LaunchConfig::for_elements(n), 1.75, &dx, &mut dy)?;
        outputs.push(exact(
            format!("y (n={n})"),
            Values::F32(stream.clone_dtoh(&dy)?),
        ));
    }
    Ok(outputs)
}

pub const INT_OPS_N: usize = 50_000;
pub const SHIFTS: [u32; 5] = [0, 5, 31, 33, 70];

pub fn int_ops_inputs() -> (Vec<i32>, Vec<i32>) {
    let n = INT_OPS_N;
    let random = pseudo_random(7, 2 * n);
    let a = random[..n].iter().map(|&r| r as i32 / 3).collect();
    let b = random[n..]
        .iter()
        .map(|&r| (r as i32 >> 8) - (i32::MAX >> 9))
        .collect();
    (a, b)
}

pub fn int_ops_case(stream: &Stream) -> Result<Outputs, Error> {
    let n = INT_OPS_N;
    let (a, b) = int_ops_inputs();
    let (da, db) = (up(stream, &a)?, up(stream, &b)?);
    let mut outputs = Vec::new();
    for shift in SHIFTS {
        let mut out = stream.alloc_zeros::<i32>(n)?;
        let mut flags = stream.alloc_zeros::<u32>(n)?;
        let config = LaunchConfig::for_elements(n);
        int_ops::launch(stream, config, &da, &db, shift, &mut out, &mut flags)?;
        outputs.push(exact(
            format!("out (shift {shift})"),
            Values::I32(stream.clone_dtoh(&out)?),
        ));
        outputs.push(exact(
            format!("flags (shift {shift})"),
            Values::U32(stream.clone_dtoh(&flags)?),
        ));
    }
    Ok(outputs)
}

pub fn casts_inputs() -> Vec<f32> {
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
    x
}

pub fn casts_case(stream: &Stream) -> Result<Outputs, Error> {
    let x = casts_inputs();
    let n = x.len();
    let dx = up(stream, &x)?;
    let mut o1 = stream.alloc_zeros::<i32>(n)?;
    let mut o2 = stream.alloc_zeros::<u8>(n)?;
    let mut o3 = stream.alloc_zeros::<i16>(n)?;
    let mut o4 = stream.alloc_zeros::<f64>(n)?;
    let mut o5 = stream.alloc_zeros::<u64>(n)?;
    casts::launch(
        stream,
        LaunchConfig::for_elements(n),
        &dx,
        &mut o1,
        &mut o2,
        &mut o3,
        &mut o4,
        &mut o5,
    )?;
    Ok(vec![
        exact("to_i32", Values::I32(stream.clone_dtoh(&o1)?)),
        exact("to_u8", Values::U8(stream.clone_dtoh(&o2)?)),
        exact("to_i16", Values::I16(stream.clone_dtoh(&o3)?)),
        exact("to_f64", Values::F64(stream.clone_dtoh(&o4)?)),
        exact("to_u64", Values::U64(stream.clone_dtoh(&o5)?)),
    ])
}

pub fn loops_case(stream: &Stream) -> Result<Outputs, Error> {
    let mut out = stream.alloc_zeros::<u64>(4096)?;
    loops::launch(stream, LaunchConfig::new(16, 256), 40, &mut out)?;
    Ok(vec![exact("out", Values::U64(stream.clone_dtoh(&out)?))])
}

pub const TRANSPOSE: (u32, u32) = (300, 517);

pub fn transpose_case(stream: &Stream) -> Result<Outputs, Error> {
    let (rows, cols) = TRANSPOSE;
    let input: Vec<f64> = (0..rows * cols).map(|i| i as f64 * 1.5).collect();
    let dinput = up(stream, &input)?;
    let mut doutput = stream.alloc_zeros::<f64>(input.len())?;
    let config = LaunchConfig::new((cols.div_ceil(16), rows.div_ceil(16)), (16, 16));
    transpose::launch(stream, config, rows, cols, &dinput, &mut doutput)?;
    Ok(vec![exact(
        "output",
        Values::F64(stream.clone_dtoh(&doutput)?),
    )])
}

pub fn bools_inputs() -> (Vec<bool>, Vec<i64>) {
    let random = pseudo_random(11, 10_000);
    (
        random.iter().map(|r| r & 1 == 1).collect(),
        random.iter().map(|&r| (r as i64) >> 40).collect(),
    )
}

pub fn bools_case(stream: &Stream) -> Result<Outputs, Error> {
    let (x, y) = bools_inputs();
    let n = x.len();
    let (dx, dy) = (up(stream, &x)?, up(stream, &y)?);
    let mut outputs = Vec::new();
    for invert in [false, true] {
        let mut out = stream.alloc_zeros::<bool>(n)?;
        bools::launch(
            stream,
            LaunchConfig::for_elements(n),
            invert,
            &dx,
            &dy,
            &mut out,
        )?;
        outputs.push(exact(
            format!("out (invert {invert})"),
            Values::Bool(stream.clone_dtoh(&out)?),
        ));
    }
    Ok(outputs)
}

pub fn scale_strided_case(stream: &Stream) -> Result<Outputs, Error> {
    let n = 100_003;
    let data: Vec<f64> = (0..n).map(|i| i as f64).collect();
    let mut d = up(stream, &data)?;
    scale_strided::launch(stream, LaunchConfig::new(7, 128), 3.0, &mut d)?;
    Ok(vec![exact("data", Values::F64(stream.clone_dtoh(&d)?))])
}

pub const GENERIC_N: usize = 5000;

pub fn generics_inputs() -> (Vec<f32>, Vec<f32>, Vec<f32>, Vec<u64>) {
    let n = GENERIC_N;
    (
        (0..n).map(|i| i as f32 * 0.5).collect(),
        (0..n).map(|i| 1000.0 - i as f32).collect(),
        (0..n).map(|i| (i % 17) as f32).collect(),
        (1..=n as u64).collect(),
    )
}

pub fn generics_case(stream: &Stream) -> Result<Outputs, Error> {
    let n = GENERIC_N;
    let (a32, b32, input, start) = generics_inputs();
    let config = LaunchConfig::for_elements(n);
    let mut outputs = Vec::new();
    let (da, db) = (up(stream, &a32)?, up(stream, &b32)?);
    let mut out = stream.alloc_zeros::<f32>(n)?;
    blend::launch::<f32>(stream, config, 0.25, &da, &db, &mut out)?;
    outputs.push(exact("blend f32", Values::F32(stream.clone_dtoh(&out)?)));
    let a64: Vec<f64> = a32.iter().map(|&v| f64::from(v)).collect();
    let b64: Vec<f64> = b32.iter().map(|&v| f64::from(v)).collect();
    let (da, db) = (up(stream, &a64)?, up(stream, &b64)?);
    let mut out = stream.alloc_zeros::<f64>(n)?;
    blend::launch::<f64>(stream, config, 0.75, &da, &db, &mut out)?;
    outputs.push(exact("blend f64", Values::F64(stream.clone_dtoh(&out)?)));
    let dinput = up(stream, &input)?;
    let mut out = stream.alloc_zeros::<f32>(n)?;
    window_sums::launch::<1>(stream, config, &dinput, &mut out)?;
    outputs.push(exact(
        "window_sums W=1",
        Values::F32(stream.clone_dtoh(&out)?),
    ));
    let mut out = stream.alloc_zeros::<f32>(n)?;
    window_sums::launch::<4>(stream, config, &dinput, &mut out)?;
    outputs.push(exact(
        "window_sums W=4",
        Values::F32(stream.clone_dtoh(&out)?),
    ));
    for rounds in [0u32, 3, 10] {
        let mut data = up(stream, &start)?;
        collatz_steps::launch(stream, config, rounds, &mut data)?;
        outputs.push(exact(
            format!("collatz rounds={rounds}"),
            Values::U64(stream.clone_dtoh(&data)?),
        ));
    }
    Ok(outputs)
}

pub fn math_inputs() -> (Vec<f32>, Vec<f64>, Vec<u32>) {
    let random = pseudo_random(5, 4096);
    (
        random
            .iter()
            .map(|&r| ((r % 20001) as f32 - 10000.0) * 1e-3)
            .collect(),
        random
            .iter()
            .map(|&r| ((r >> 20) % 20001) as f64 * 1e-2 - 100.0)
            .collect(),
        random.iter().map(|&r| (r >> 7) as u32 | 1).collect(),
    )
}

pub fn math_ops_case(stream: &Stream) -> Result<Outputs, Error> {
    let (x, y, bits) = math_inputs();
    let n = x.len();
    let (dx, dy, db) = (up(stream, &x)?, up(stream, &y)?, up(stream, &bits)?);
    let mut o32 = stream.alloc_zeros::<f32>(n)?;
    let mut o64 = stream.alloc_zeros::<f64>(n)?;
    let mut counts = stream.alloc_zeros::<u32>(n)?;
    math_ops::launch(
        stream,
        LaunchConfig::for_elements(n),
        &dx,
        &dy,
        &db,
        &mut o32,
        &mut o64,
        &mut counts,
    )?;
    Ok(vec![
        // Sums of several libdevice results, each within a few ulp.
        out(
            "out32",
            Values::F32(stream.clone_dtoh(&o32)?),
            Tolerance::Relative(1e-5),
        ),
        out(
            "out64",
            Values::F64(stream.clone_dtoh(&o64)?),
            Tolerance::Relative(1e-13),
        ),
        exact("counts", Values::U32(stream.clone_dtoh(&counts)?)),
    ])
}

pub const REDUCE_N: usize = 300_017;

pub fn block_sum_case(stream: &Stream) -> Result<Outputs, Error> {
    let data: Vec<u32> = pseudo_random(9, REDUCE_N)
        .iter()
        .map(|&r| (r % 1000) as u32)
        .collect();
    let ddata = up(stream, &data)?;
    let mut total = stream.alloc_zeros::<u64>(1)?;
    block_sum::launch(stream, LaunchConfig::new(33, 256), &ddata, &mut total)?;
    Ok(vec![exact(
        "total",
        Values::U64(stream.clone_dtoh(&total)?),
    )])
}

pub fn histogram_inputs() -> Vec<u8> {
    pseudo_random(13, REDUCE_N)
        .iter()
        .map(|&r| (r >> 11) as u8)
        .collect()
}

pub fn histogram_case(stream: &Stream) -> Result<Outputs, Error> {
    let bytes = histogram_inputs();
    let dbytes = up(stream, &bytes)?;
    let mut bins = stream.alloc_zeros::<u32>(256)?;
    histogram::launch(stream, LaunchConfig::new(17, 512), &dbytes, &mut bins)?;
    Ok(vec![exact("bins", Values::U32(stream.clone_dtoh(&bins)?))])
}

pub const TILED: (u32, u32) = (200, 177);

pub fn transpose_tiled_case(stream: &Stream) -> Result<Outputs, Error> {
    let (rows, cols) = TILED;
    let input: Vec<f32> = (0..rows * cols).map(|i| i as f32).collect();
    let dinput = up(stream, &input)?;
    let mut doutput = stream.alloc_zeros::<f32>(input.len())?;
    let config = LaunchConfig::new((cols.div_ceil(32), rows.div_ceil(32)), (32, 32));
    transpose_tiled::launch::<32>(stream, config, rows, cols, &dinput, &mut doutput)?;
    Ok(vec![exact(
        "output",
        Values::F32(stream.clone_dtoh(&doutput)?),
    )])
}

pub const WARP_BLOCKS: usize = 8;
pub const WARP_THREADS: usize = 128;

pub fn warp_values() -> Vec<i32> {
    pseudo_random(17, WARP_BLOCKS * WARP_THREADS)
        .iter()
        .map(|&r| (r % 41) as i32 - 20)
        .collect()
}

pub fn warp_ops_case(stream: &Stream) -> Result<Outputs, Error> {
    let (blocks, threads) = (WARP_BLOCKS, WARP_THREADS);
    let n = blocks * threads;
    let values = warp_values();
    let dvalues = up(stream, &values)?;
    let mut ballots = stream.alloc_zeros::<u32>(n)?;
    let mut flags = stream.alloc_zeros::<u32>(n)?;
    let mut scan = stream.alloc_zeros::<i32>(n)?;
    let mut reversed = stream.alloc_zeros::<i32>(n)?;
    let mut extremes = up(stream, &[i32::MAX, i32::MIN, 0])?;
    let config =
        LaunchConfig::new(blocks as u32, threads as u32).with_shared_mem((threads * 4) as u32);
    warp_ops::launch(
        stream,
        config,
        &dvalues,
        &mut ballots,
        &mut flags,
        &mut scan,
        &mut reversed,
        &mut extremes,
    )?;
    Ok(vec![
        exact("ballots", Values::U32(stream.clone_dtoh(&ballots)?)),
        exact("flags", Values::U32(stream.clone_dtoh(&flags)?)),
        exact("scan", Values::I32(stream.clone_dtoh(&scan)?)),
        exact("reversed", Values::I32(stream.clone_dtoh(&reversed)?)),
        exact("extremes", Values::I32(stream.clone_dtoh(&extremes)?)),
    ])
}

pub const ROWS: usize = 1000;
pub const K: usize = 37;
pub const R: usize = 4;

pub fn arrays_inputs() -> (Vec<f64>, Vec<f64>) {
    (
        (0..ROWS * K).map(|i| (i % 11) as f64 - 5.0).collect(),
        (0..K * R).map(|i| (i % 7) as f64 * 0.25).collect(),
    )
}

pub fn vectors_and_arrays_case(stream: &Stream) -> Result<Outputs, Error> {
    let mut outputs = Vec::new();
    for n in [4usize, 7, 1 << 16, (1 << 16) + 3] {
        let x: Vec<f32> = (0..n).map(|i| (i % 97) as f32).collect();
        let y0: Vec<f32> = (0..n).map(|i| (i % 13) as f32 * 0.5).collect();
        let dx = up(stream, &x)?;
        let mut dy = up(stream, &y0)?;
        saxpy_vec4::launch(stream, LaunchConfig::new(16, 256), 3.0, &dx, &mut dy)?;
        outputs.push(exact(
            format!("saxpy_vec4 n={n}"),
            Values::F32(stream.clone_dtoh(&dy)?),
        ));
    }
    let (a, b) = arrays_inputs();
    let (da, db) = (up(stream, &a)?, up(stream, &b)?);
    let mut out = stream.alloc_zeros::<f64>(ROWS * R)?;
    row_times_columns::launch::<R>(
        stream,
        LaunchConfig::for_elements(ROWS),
        K as u32,
        &da,
        &db,
        &mut out,
    )?;
    outputs.push(exact(
        "row_times_columns",
        Values::F64(stream.clone_dtoh(&out)?),
    ));
    Ok(outputs)
}

pub const HELPER_BLOCKS: usize = 20;
pub const HELPER_THREADS: usize = 256;

pub fn helper_values() -> Vec<f32> {
    pseudo_random(23, HELPER_BLOCKS * HELPER_THREADS)
        .iter()
        .map(|&r| (r % 200) as f32 - 100.0)
        .collect()
}

pub fn warp_helpers_case(stream: &Stream) -> Result<Outputs, Error> {
    let (blocks, threads) = (HELPER_BLOCKS, HELPER_THREADS);
    let n = blocks * threads;
    let values = helper_values();
    let dvalues = up(stream, &values)?;
    let mut sums = stream.alloc_zeros::<f32>(n / 32)?;
    let mut ranges = stream.alloc_zeros::<f32>(n / 32)?;
    let mut scans = stream.alloc_zeros::<u32>(n)?;
    let mut per_block = stream.alloc_zeros::<u32>(2 * blocks)?;
    let mut total = stream.alloc_zeros::<u64>(1)?;
    let mut specials = stream.alloc_zeros::<f32>(n)?;
    warp_helpers::launch(
        stream,
        LaunchConfig::new(blocks as u32, threads as u32),
        &dvalues,
        &mut sums,
        &mut ranges,
        &mut scans,
        &mut per_block,
        &mut total,
        &mut specials,
    )?;
    Ok(vec![
        exact("sums", Values::F32(stream.clone_dtoh(&sums)?)),
        exact("ranges", Values::F32(stream.clone_dtoh(&ranges)?)),
        exact("scans", Values::U32(stream.clone_dtoh(&scans)?)),
        exact("per_block", Values::U32(stream.clone_dtoh(&per_block)?)),
        exact("total", Values::U64(stream.clone_dtoh(&total)?)),
        // erf, erfc and rsqrt within a few ulp; the fast_* intrinsics are the GPU's
        // hardware approximations.
        out(
            "specials",
            Values::F32(stream.clone_dtoh(&specials)?),
            Tolerance::Relative(1e-5),
        ),
    ])
}

pub fn classify_case(stream: &Stream) -> Result<Outputs, Error> {
    let values: Vec<i32> = (-30..70).collect();
    let n = values.len();
    let dvalues = up(stream, &values)?;
    let mut classes = stream.alloc_zeros::<u32>(n)?;
    let mut flags = stream.alloc_zeros::<u32>(n)?;
    classify::launch(
        stream,
        LaunchConfig::for_elements(n),
        &dvalues,
        &mut classes,
        &mut flags,
    )?;
    Ok(vec![
        exact("classes", Values::U32(stream.clone_dtoh(&classes)?)),
        exact("flags", Values::U32(stream.clone_dtoh(&flags)?)),
    ])
}

// ----- libdevice, function by function -----

/// The functions of `libdevice_f32`/`libdevice_f64`, in output order.
pub const LIBDEVICE: [&str; 31] = [
    "sqrt", "exp", "exp2", "ln", "log2", "log10", "sin", "cos", "tan", "asin", "acos", "atan",
    "sinh", "cosh", "tanh", "cbrt", "floor", "ceil", "round", "trunc", "recip", "erf", "erfc",
    "rsqrt", "powf", "powi", "hypot", "atan2", "mul_add", "min", "max",
];

/// Each of [`LIBDEVICE`] applied to `x` (and to `y` for the functions of two arguments),
/// with arguments kept inside each function's domain.
#[kernel]
pub fn libdevice_table_f32(x: &[f32], y: &[f32], out: &mut [f32]) {
    let i = global_index();
    let n = x.len();
    if i < n {
        let v = x[i];
        let w = y[i];
        let unit = v / (v.abs() + 1.0);
        let positive = v.abs() + 1e-3;
        out[i] = positive.sqrt();
        out[n + i] = (v * 0.05).exp();
        out[2 * n + i] = (v * 0.05).exp2();
        out[3 * n + i] = positive.ln();
        out[4 * n + i] = positive.log2();
        out[5 * n + i] = positive.log10();
        out[6 * n + i] = v.sin();
        out[7 * n + i] = v.cos();
        out[8 * n + i] = (v * 0.1).tan();
        out[9 * n + i] = unit.asin();
        out[10 * n + i] = unit.acos();
        out[11 * n + i] = v.atan();
        out[12 * n + i] = (v * 0.05).sinh();
        out[13 * n + i] = (v * 0.05).cosh();
        out[14 * n + i] = (v * 0.2).tanh();
        out[15 * n + i] = v.cbrt();
        out[16 * n + i] = v.floor();
        out[17 * n + i] = v.ceil();
        out[18 * n + i] = v.round();
        out[19 * n + i] = v.trunc();
        out[20 * n + i] = v.recip();
        out[21 * n + i] = erf(v * 0.2);
        out[22 * n + i] = erfc(v * 0.2);
        out[23 * n + i] = rsqrt(positive);
        out[24 * n + i] = positive.powf(w * 0.1);
        out[25 * n + i] = (v * 0.2).powi((i % 7) as i32 - 3);
        out[26 * n + i] = v.hypot(w);
        out[27 * n + i] = v.atan2(w);
        out[28 * n + i] = v.mul_add(w, 0.5);
        out[29 * n + i] = v.min(w);
        out[30 * n + i] = v.max(w);
    }
}

/// [`libdevice_table_f32`] in double precision.
#[kernel]
pub fn libdevice_table_f64(x: &[f64], y: &[f64], out: &mut [f64]) {
    let i = global_index();
    let n = x.len();
    if i < n {
        let v = x[i];
        let w = y[i];
        let unit = v / (v.abs() + 1.0);
        let positive = v.abs() + 1e-3;
        out[i] = positive.sqrt();
        out[n + i] = (v * 0.05).exp();
        out[2 * n + i] = (v * 0.05).exp2();
        out[3 * n + i] = positive.ln();
        out[4 * n + i] = positive.log2();
        out[5 * n + i] = positive.log10();
        out[6 * n + i] = v.sin();
        out[7 * n + i] = v.cos();
        out[8 * n + i] = (v * 0.1).tan();
        out[9 * n + i] = unit.asin();
        out[10 * n + i] = unit.acos();
        out[11 * n + i] = v.atan();
        out[12 * n + i] = (v * 0.05).sinh();
        out[13 * n + i] = (v * 0.05).cosh();
        out[14 * n + i] = (v * 0.2).tanh();
        out[15 * n + i] = v.cbrt();
        out[16 * n + i] = v.floor();
        out[17 * n + i] = v.ceil();
        out[18 * n + i] = v.round();
        out[19 * n + i] = v.trunc();
        out[20 * n + i] = v.recip();
        out[21 * n + i] = erf(v * 0.2);
        out[22 * n + i] = erfc(v * 0.2);
        out[23 * n + i] = rsqrt(positive);
        out[24 * n + i] = positive.powf(w * 0.1);
        out[25 * n + i] = (v * 0.2).powi((i % 7) as i32 - 3);
        out[26 * n + i] = v.hypot(w);
        out[27 * n + i] = v.atan2(w);
        out[28 * n + i] = v.mul_add(w, 0.5);
        out[29 * n + i] = v.min(w);
        out[30 * n + i] = v.max(w);
    }
}

pub const LIBDEVICE_N: usize = 4096;

/// Arguments from -50 to 50, with special values first.
pub fn libdevice_inputs() -> (Vec<f64>, Vec<f64>) {
    let mut x = vec![0.0, -0.0, 1.0, -1.0, 0.5, 2.0, 10.0, -10.0, 0.25, 3.0];
    let mut y = vec![0.0, 0.0, -0.0, 1.0, -2.0, 3.0, 0.5, -0.5, -0.0, 0.0];
    let random = pseudo_random(29, 2 * LIBDEVICE_N);
    for k in x.len()..LIBDEVICE_N {
        x.push((random[k] % 100_001) as f64 * 1e-3 - 50.0);
        y.push((random[LIBDEVICE_N + k] % 100_001) as f64 * 1e-3 - 50.0);
    }
    (x, y)
}

fn libdevice_outputs<T: Copy>(values: Vec<T>, wrap: fn(Vec<T>) -> Values, f64: bool) -> Outputs {
    let n = LIBDEVICE_N;
    LIBDEVICE
        .iter()
        .enumerate()
        .map(|(k, name)| {
            let function =
                cudajit::core::math::MathFunction::from_name(name).expect("a libdevice function");
            let scalar = if f64 {
                cudajit::core::Scalar::F64
            } else {
                cudajit::core::Scalar::F32
            };
            let ulp = cudajit::simulator::ulp_bound(function, scalar).unwrap_or(0);
            let tolerance = if ulp == 0 {
                Tolerance::Exact
            } else {
                Tolerance::Ulp(u64::from(ulp))
            };
            out(*name, wrap(values[k * n..(k + 1) * n].to_vec()), tolerance)
        })
        .collect()
}

pub fn libdevice_f32_case(stream: &Stream) -> Result<Outputs, Error> {
    let (x, y) = libdevice_inputs();
    let x: Vec<f32> = x.iter().map(|&v| v as f32).collect();
    let y: Vec<f32> = y.iter().map(|&v| v as f32).collect();
    let (dx, dy) = (up(stream, &x)?, up(stream, &y)?);
    let mut out = stream.alloc_zeros::<f32>(LIBDEVICE.len() * LIBDEVICE_N)?;
    libdevice_table_f32::launch(
        stream,
        LaunchConfig::for_elements(LIBDEVICE_N),
        &dx,
        &dy,
        &mut out,
    )?;
    Ok(libdevice_outputs(
        stream.clone_dtoh(&out)?,
        Values::F32,
        false,
    ))
}

pub fn libdevice_f64_case(stream: &Stream) -> Result<Outputs, Error> {
    let (x, y) = libdevice_inputs();
    let (dx, dy) = (up(stream, &x)?, up(stream, &y)?);
    let mut out = stream.alloc_zeros::<f64>(LIBDEVICE.len() * LIBDEVICE_N)?;
    libdevice_table_f64::launch(
        stream,
        LaunchConfig::for_elements(LIBDEVICE_N),
        &dx,
        &dy,
        &mut out,
    )?;
    Ok(libdevice_outputs(
        stream.clone_dtoh(&out)?,
        Values::F64,
        true,
    ))
}

// ----- comparing two backends -----

/// Whether `a` and `b` agree within `tolerance`; `Err` names the worst element.
pub fn compare(a: &Values, b: &Values, tolerance: Tolerance) -> Result<Agreement, String> {
    fn floats<T: Copy + Into<f64>>(
        a: &[T],
        b: &[T],
        tolerance: Tolerance,
        ulps: fn(T, T) -> u64,
    ) -> Result<Agreement, String> {
        if a.len() != b.len() {
            return Err(format!("lengths {} and {}", a.len(), b.len()));
        }
        let mut worst = Agreement::default();
        for (i, (&x, &y)) in a.iter().zip(b).enumerate() {
            let ulp = ulps(x, y);
            let (fx, fy): (f64, f64) = (x.into(), y.into());
            let relative = if ulp == 0 {
                0.0
            } else {
                (fx - fy).abs() / fx.abs().max(fy.abs()).max(1.0)
            };
            let ok = match tolerance {
                Tolerance::Exact => ulp == 0,
                Tolerance::Ulp(bound) => ulp <= bound,
                Tolerance::Relative(bound) => relative <= bound,
            };
            if ulp > worst.max_ulp {
                worst.max_ulp = ulp;
                worst.worst_index = i;
            }
            worst.max_relative = worst.max_relative.max(relative);
            if ulp > 0 {
                worst.differing += 1;
            }
            if !ok {
                return Err(format!("element {i}: {fx:e} against {fy:e} ({ulp} ulp)"));
            }
        }
        Ok(worst)
    }
    fn ints<T: PartialEq + std::fmt::Debug>(a: &[T], b: &[T]) -> Result<Agreement, String> {
        if a.len() != b.len() {
            return Err(format!("lengths {} and {}", a.len(), b.len()));
        }
        match a.iter().zip(b).position(|(x, y)| x != y) {
            Some(i) => Err(format!("element {i}: {:?} against {:?}", a[i], b[i])),
            None => Ok(Agreement::default()),
        }
    }
    use cudajit::simulator::{ulp_distance_f32, ulp_distance_f64};
    match (a, b) {
        (Values::F32(a), Values::F32(b)) => floats(a, b, tolerance, ulp_distance_f32),
        (Values::F64(a), Values::F64(b)) => floats(a, b, tolerance, ulp_distance_f64),
        (Values::Bool(a), Values::Bool(b)) => ints(a, b),
        (Values::U8(a), Values::U8(b)) => ints(a, b),
        (Values::I16(a), Values::I16(b)) => ints(a, b),
        (Values::I32(a), Values::I32(b)) => ints(a, b),
        (Values::U32(a), Values::U32(b)) => ints(a, b),
        (Values::I64(a), Values::I64(b)) => ints(a, b),
        (Values::U64(a), Values::U64(b)) => ints(a, b),
        _ => Err("different types".into()),
    }
}

/// How far two float outputs are apart.
#[derive(Clone, Copy, Debug, Default)]
pub struct Agreement {
    pub max_ulp: u64,
    pub worst_index: usize,
    pub max_relative: f64,
    pub differing: usize,
}

pub const TUPLES_N: usize = 5000;

/// Inputs of the `tuples` kernel: both orders of `x[i]` and `x[i] * 0.5 + 1` occur, and
/// every value is exact in `f32`, so results match with or without FMA contraction.
pub fn tuples_inputs() -> (Vec<f32>, Vec<u32>) {
    let n = TUPLES_N;
    let x = (0..n).map(|i| ((i * 37) % 101) as f32 - 50.0).collect();
    let y = (0..n).map(|i| (i * 13 % 17) as u32).collect();
    (x, y)
}

/// The outputs of `tuples` (`out`, `idx`, `quads`) and what the CPU reference computes.
pub fn tuples_case(stream: &Stream) -> Result<Outputs, Error> {
    let n = TUPLES_N;
    let (x, y) = tuples_inputs();
    let (dx, dy) = (up(stream, &x)?, up(stream, &y)?);
    let mut dout = stream.alloc_zeros::<f32>(n)?;
    let mut didx = stream.alloc_zeros::<u32>(n)?;
    let mut dquads = stream.alloc_zeros::<f32>(n)?;
    tuples::launch(
        stream,
        LaunchConfig::for_elements(n),
        &dx,
        &dy,
        &mut dout,
        &mut didx,
        &mut dquads,
    )?;
    Ok(vec![
        exact("out", Values::F32(stream.clone_dtoh(&dout)?)),
        exact("idx", Values::U32(stream.clone_dtoh(&didx)?)),
        exact("quads", Values::F32(stream.clone_dtoh(&dquads)?)),
    ])
}

/// What `tuples_case` must return, from the CPU reference.
pub fn tuples_expected() -> [Values; 3] {
    let n = TUPLES_N;
    let (x, y) = tuples_inputs();
    let (mut out, mut idx, mut quads) = (vec![0.0; n], vec![0; n], vec![0.0; n]);
    tuples_ref(&x, &y, &mut out, &mut idx, &mut quads);
    [Values::F32(out), Values::U32(idx), Values::F32(quads)]
}

/// Inputs of `tuple_branches`: every residue mod 4, both signs, both orders.
pub fn tuple_branches_inputs() -> Vec<i32> {
    pseudo_random(11, TUPLES_N)
        .into_iter()
        .map(|r| (r % 2001) as i32 - 1000)
        .collect()
}

/// The outputs of `tuple_branches` (`lo`, `hi`, `tag`).
pub fn tuple_branches_case(stream: &Stream) -> Result<Outputs, Error> {
    let x = tuple_branches_inputs();
    let n = x.len();
    let dx = up(stream, &x)?;
    let mut dlo = stream.alloc_zeros::<i32>(n)?;
    let mut dhi = stream.alloc_zeros::<i32>(n)?;
    let mut dtag = stream.alloc_zeros::<u32>(n)?;
    tuple_branches::launch(
        stream,
        LaunchConfig::for_elements(n),
        &dx,
        &mut dlo,
        &mut dhi,
        &mut dtag,
    )?;
    Ok(vec![
        exact("lo", Values::I32(stream.clone_dtoh(&dlo)?)),
        exact("hi", Values::I32(stream.clone_dtoh(&dhi)?)),
        exact("tag", Values::U32(stream.clone_dtoh(&dtag)?)),
    ])
}

/// What `tuple_branches_case` must return, from the CPU reference.
pub fn tuple_branches_expected() -> [Values; 3] {
    let x = tuple_branches_inputs();
    let n = x.len();
    let (mut lo, mut hi, mut tag) = (vec![0; n], vec![0; n], vec![0; n]);
    tuple_branches_ref(&x, &mut lo, &mut hi, &mut tag);
    [Values::I32(lo), Values::I32(hi), Values::U32(tag)]
}

/// The outputs of `returned_values` (`lo`, `hi`, `sum`, `tag`), on the inputs of
/// `tuple_branches` (both orders, wide and narrow intervals, both signs).
pub fn returned_values_case(stream: &Stream) -> Result<Outputs, Error> {
    let x = tuple_branches_inputs();
    let n = x.len();
    let dx = up(stream, &x)?;
    let mut dlo = stream.alloc_zeros::<i32>(n)?;
    let mut dhi = stream.alloc_zeros::<i32>(n)?;
    let mut dsum = stream.alloc_zeros::<i64>(n)?;
    let mut dtag = stream.alloc_zeros::<u32>(n)?;
    returned_values::launch(
        stream,
        LaunchConfig::for_elements(n),
        &dx,
        &mut dlo,
        &mut dhi,
        &mut dsum,
        &mut dtag,
    )?;
    Ok(vec![
        exact("lo", Values::I32(stream.clone_dtoh(&dlo)?)),
        exact("hi", Values::I32(stream.clone_dtoh(&dhi)?)),
        exact("sum", Values::I64(stream.clone_dtoh(&dsum)?)),
        exact("tag", Values::U32(stream.clone_dtoh(&dtag)?)),
    ])
}

/// What `returned_values_case` must return, from the CPU reference.
pub fn returned_values_expected() -> [Values; 4] {
    let x = tuple_branches_inputs();
    let n = x.len();
    let (mut lo, mut hi, mut sum, mut tag) = (vec![0; n], vec![0; n], vec![0; n], vec![0; n]);
    returned_values_ref(&x, &mut lo, &mut hi, &mut sum, &mut tag);
    [
        Values::I32(lo),
        Values::I32(hi),
        Values::I64(sum),
        Values::U32(tag),
    ]
}

/// The matrix of [`transpose_const_tile_case`]: not a multiple of the tile either way.
pub const CONST_TILE_MATRIX: (usize, usize) = (45, 70);

pub fn transpose_const_tile_case(stream: &Stream) -> Result<Outputs, Error> {
    let (rows, cols) = CONST_TILE_MATRIX;
    let input: Vec<f32> = (0..rows * cols).map(|i| i as f32 * 0.5 - 3.0).collect();
    let dinput = up(stream, &input)?;
    let mut doutput = stream.alloc_zeros::<f32>(input.len())?;
    let tile = TILE as u32;
    let config = LaunchConfig::new(
        ((cols as u32).div_ceil(tile), (rows as u32).div_ceil(tile)),
        (tile, tile),
    );
    transpose_const_tile::launch(
        stream,
        config,
        rows as u32,
        cols as u32,
        &dinput,
        &mut doutput,
    )?;
    Ok(vec![exact(
        "output",
        Values::F32(stream.clone_dtoh(&doutput)?),
    )])
}

pub fn named_constants_case(stream: &Stream) -> Result<Outputs, Error> {
    let (x, ints) = named_constants_inputs();
    let n = x.len();
    let (dx, dints) = (up(stream, &x)?, up(stream, &ints)?);
    let mut floats = stream.alloc_zeros::<f32>(n)?;
    let mut wide = stream.alloc_zeros::<f64>(n)?;
    let mut shifted = stream.alloc_zeros::<i32>(n)?;
    let mut flags = stream.alloc_zeros::<u32>(n)?;
    named_constants::launch(
        stream,
        LaunchConfig::for_elements(n),
        &dx,
        &dints,
        &mut floats,
        &mut wide,
        &mut shifted,
        &mut flags,
    )?;
    Ok(vec![
        exact("floats", Values::F32(stream.clone_dtoh(&floats)?)),
        exact("wide", Values::F64(stream.clone_dtoh(&wide)?)),
        exact("shifted", Values::I32(stream.clone_dtoh(&shifted)?)),
        exact("flags", Values::U32(stream.clone_dtoh(&flags)?)),
    ])
}

/// The input of the iteration cases: small values, some negative, in an irregular order.
pub fn iteration_inputs(n: usize, seed: u64) -> Vec<f32> {
    pseudo_random(seed, n)
        .iter()
        .map(|&r| ((r % 41) as f32 - 12.0) * 0.5)
        .collect()
}

pub const ARRAY_FORMS_LEN: usize = 300;

pub fn array_forms_case(stream: &Stream) -> Result<Outputs, Error> {
    let x = iteration_inputs(ARRAY_FORMS_LEN, 5);
    let n = x.len();
    let dx = up(stream, &x)?;
    let mut filtered = stream.alloc_zeros::<f32>(n)?;
    let mut totals = stream.alloc_zeros::<f32>(n)?;
    let mut ends = stream.alloc_zeros::<i32>(n)?;
    array_forms::launch(
        stream,
        LaunchConfig::for_elements(n),
        &dx,
        &mut filtered,
        &mut totals,
        &mut ends,
    )?;
    Ok(vec![
        out(
            "filtered",
            Values::F32(stream.clone_dtoh(&filtered)?),
            Tolerance::Ulp(4),
        ),
        out(
            "totals",
            Values::F32(stream.clone_dtoh(&totals)?),
            Tolerance::Ulp(4),
        ),
        exact("ends", Values::I32(stream.clone_dtoh(&ends)?)),
    ])
}

/// `a` and `b` of different lengths (the zip stops at the shorter), `out` longer still.
pub const ITERATOR_LENGTHS: (usize, usize, usize) = (37, 29, 45);

pub fn iterator_loops_case(stream: &Stream) -> Result<Outputs, Error> {
    let (na, nb, nout) = ITERATOR_LENGTHS;
    let (a, b) = (iteration_inputs(na, 11), iteration_inputs(nb, 12));
    let (da, db) = (up(stream, &a)?, up(stream, &b)?);
    let mut dout = stream.alloc_zeros::<f32>(nout)?;
    let mut hashes = stream.alloc_zeros::<u32>(6)?;
    iterator_loops::launch(
        stream,
        LaunchConfig::for_elements(64),
        &da,
        &db,
        &mut dout,
        &mut hashes,
    )?;
    Ok(vec![
        out(
            "out",
            Values::F32(stream.clone_dtoh(&dout)?),
            Tolerance::Ulp(1),
        ),
        exact("hashes", Values::U32(stream.clone_dtoh(&hashes)?)),
    ])
}

/// `x` of 200 elements, `y` shorter, 256 threads: both `None` paths run.
pub const OPTION_LENGTHS: (usize, usize) = (200, 187);

pub fn option_forms_case(stream: &Stream) -> Result<Outputs, Error> {
    let (nx, ny) = OPTION_LENGTHS;
    let x = iteration_inputs(nx, 21);
    let dx = up(stream, &x)?;
    let mut dy = stream.alloc_zeros::<f32>(ny)?;
    let mut runs = stream.alloc_zeros::<u32>(nx)?;
    let mut found = stream.alloc_zeros::<u32>(nx)?;
    option_forms::launch(
        stream,
        LaunchConfig::for_elements(256),
        &dx,
        &mut dy,
        &mut runs,
        &mut found,
    )?;
    Ok(vec![
        exact("y", Values::F32(stream.clone_dtoh(&dy)?)),
        exact("runs", Values::U32(stream.clone_dtoh(&runs)?)),
        exact("found", Values::U32(stream.clone_dtoh(&found)?)),
    ])
}

/// Bound sub-slices, `split_at_mut`, closures and `grid_sync()` in one cooperative launch.
pub fn views_closures_grid_case(stream: &Stream) -> Result<Outputs, Error> {
    use super::views_and_closures::{views_closures_grid, VIEWS_GRID};
    let (blocks, threads) = VIEWS_GRID;
    let (rows, width, mid) = ((blocks * threads) as usize, 6usize, 100usize);
    let x = iteration_inputs(rows * width, 31);
    let dx = up(stream, &x)?;
    let mut drows = stream.alloc_zeros::<f32>(rows)?;
    let mut dhalves = stream.alloc_zeros::<f32>(rows)?;
    let mut dtotal = stream.alloc_zeros::<f32>(1)?;
    views_closures_grid::launch(
        stream,
        LaunchConfig::new(blocks, threads).cooperative(),
        &dx,
        width,
        mid,
        0.5,
        &mut drows,
        &mut dhalves,
        &mut dtotal,
    )?;
    Ok(vec![
        exact("rows", Values::F32(stream.clone_dtoh(&drows)?)),
        exact("halves", Values::F32(stream.clone_dtoh(&dhalves)?)),
        exact("total", Values::F32(stream.clone_dtoh(&dtotal)?)),
    ])
}
