//! Kernels of the scalar methods Rust defines exactly — bit casts (`to_bits`,
//! `from_bits`), the integer methods (`wrapping_*`, `saturating_*`, rotations,
//! `reverse_bits`, `swap_bytes`, `pow`, `abs_diff`, `clamp`, `signum`, the Euclidean
//! division) and the float ones (`fract`, `signum`, `clamp`, `div_euclid`, `rem_euclid`,
//! `exp_m1`, `ln_1p`) — over edge cases (`MIN`, `MAX`, 0, -1, shift amounts past the
//! width, overflowing products), with the expected values computed by Rust's own methods
//! on the host. `tests/scalar_methods.rs` runs them on the simulator and the GPU;
//! `tests/differential.rs` compares the two.
#![allow(dead_code)]

use cudajit::prelude::*;
use cudajit::{bf16, f16, BufferElement, Error, Stream};

use super::cases::{compare, pseudo_random, Output, Outputs, Tolerance, Values};

/// The outputs per element of [`int_methods`].
pub const INT_METHODS: usize = 17;

/// Every integer method Rust has on every integer type, element `i` of the inputs into
/// `out[17 * i ..][..17]`. `d` holds divisors (never 0, never -1 against `MIN`: Rust
/// panics there and the language leaves the value unspecified).
#[kernel]
pub fn int_methods<T: Int>(a: &[T], b: &[T], d: &[T], n: &[u32], out: &mut [T]) {
    let i = global_index();
    if i < a.len() {
        let (x, y, z, s) = (a[i], b[i], d[i], n[i]);
        let o = 17 * i;
        out[o] = x.wrapping_add(y);
        out[o + 1] = x.wrapping_sub(y);
        out[o + 2] = x.wrapping_mul(y);
        out[o + 3] = x.wrapping_neg();
        out[o + 4] = x.wrapping_shl(s);
        out[o + 5] = x.wrapping_shr(s);
        out[o + 6] = x.saturating_add(y);
        out[o + 7] = x.saturating_sub(y);
        out[o + 8] = x.saturating_mul(y);
        out[o + 9] = x.rotate_left(s);
        out[o + 10] = x.rotate_right(s);
        out[o + 11] = x.reverse_bits();
        out[o + 12] = x.swap_bytes();
        out[o + 13] = x.pow(s % 70);
        out[o + 14] = x.clamp(y.min(z), y.max(z));
        out[o + 15] = x.div_euclid(z);
        out[o + 16] = x.rem_euclid(z);
    }
}

/// The methods whose result type differs from the receiver's or that only signed (or only
/// unsigned) types have: `abs_diff` (unsigned result) and `signum`, on `i32` and `i64`, and
/// `abs_diff` and `div_ceil` of an unsigned type.
#[kernel]
#[allow(clippy::too_many_arguments)] // one buffer per output
pub fn signed_methods(
    a: &[i32],
    b: &[i32],
    wide_a: &[i64],
    wide_b: &[i64],
    unsigned_a: &[u16],
    unsigned_b: &[u16],
    unsigned_d: &[u16],
    diffs: &mut [u32],
    signs: &mut [i32],
    wide_diffs: &mut [u64],
    wide_signs: &mut [i64],
    unsigned_diffs: &mut [u16],
    unsigned_ceils: &mut [u16],
) {
    let i = global_index();
    if i < a.len() {
        diffs[i] = a[i].abs_diff(b[i]);
        signs[i] = a[i].signum();
        wide_diffs[i] = wide_a[i].abs_diff(wide_b[i]);
        wide_signs[i] = wide_a[i].signum();
        unsigned_diffs[i] = unsigned_a[i].abs_diff(unsigned_b[i]);
        unsigned_ceils[i] = unsigned_a[i].div_ceil(unsigned_d[i]);
    }
}

/// The outputs per element of [`float_methods`] that are exact.
pub const FLOAT_METHODS: usize = 5;

/// `fract`, `signum`, `clamp`, `div_euclid`, `rem_euclid` (exact, into `out`) and
/// `exp_m1`, `ln_1p` (libdevice, within its ulp bounds, into `approx`).
#[kernel]
pub fn float_methods<T: Float>(a: &[T], b: &[T], out: &mut [T], approx: &mut [T]) {
    let i = global_index();
    if i < a.len() {
        let (x, y) = (a[i], b[i]);
        let o = 5 * i;
        out[o] = x.fract();
        out[o + 1] = x.signum();
        out[o + 2] = x.clamp(T::zero() - T::one(), T::one());
        out[o + 3] = x.div_euclid(y);
        out[o + 4] = x.rem_euclid(y);
        approx[2 * i] = x.exp_m1();
        approx[2 * i + 1] = x.ln_1p();
    }
}

/// Bit casts of every float type, both ways, and an order-preserving sort key made from
/// an `f32`'s bits (the radix sort's trick: flip every bit of a negative number, the sign
/// bit of a positive one).
#[kernel]
#[allow(clippy::too_many_arguments)] // one buffer per output
pub fn bit_casts(
    x32: &[f32],
    x64: &[f64],
    x16: &[f16],
    xb16: &[bf16],
    bits32: &mut [u32],
    bits64: &mut [u64],
    bits16: &mut [u32],
    keys: &mut [u32],
    back32: &mut [f32],
    back64: &mut [f64],
    back16: &mut [f32],
) {
    let i = global_index();
    if i < x32.len() {
        let b = x32[i].to_bits();
        bits32[i] = b;
        bits64[i] = x64[i].to_bits();
        bits16[i] = (x16[i].to_bits() as u32) | ((xb16[i].to_bits() as u32) << 16);
        keys[i] = if b >> 31 == 1 { !b } else { b | 0x8000_0000 };
        // From bits other than the ones read, so the casts cannot cancel.
        back32[i] = f32::from_bits(b ^ 0x8000_0001);
        back64[i] = f64::from_bits(bits64[i].rotate_left(1));
        let h = f16::from_bits((b & 0x7bff) as u16);
        let bh = bf16::from_bits((b >> 16) as u16 & 0x7f7f);
        back16[i] = h.to_f32() + bh.to_f32();
    }
}

// ----- inputs -----

/// Edge values of an integer type followed by pseudo-random ones, as `i128`s.
fn int_edges(min: i128, max: i128) -> Vec<i128> {
    let mut v = vec![min, max, 0, 1, 2, 3, 7, min + 1, max - 1, max / 2, min / 2];
    if min < 0 {
        v.extend([-1, -2, -3, -7, -128, 127]);
    } else {
        v.extend([255, 128, 16, 100]);
    }
    let span = (max - min) as u128 + 1;
    v.extend(
        pseudo_random(17, 200)
            .into_iter()
            .map(|r| min + (u128::from(r) % span) as i128),
    );
    // Small values too, whose products and powers do not always overflow.
    v.extend(
        pseudo_random(23, 60)
            .into_iter()
            .map(|r| (r % 9) as i128 - 4),
    );
    v.into_iter().map(|x| x.clamp(min, max)).collect()
}

/// Shift amounts: inside the width, at it, past it, and `u32::MAX`.
fn amounts(count: usize) -> Vec<u32> {
    let base = [
        0,
        1,
        3,
        7,
        8,
        9,
        15,
        16,
        17,
        31,
        32,
        33,
        63,
        64,
        65,
        100,
        u32::MAX,
    ];
    (0..count)
        .map(|k| {
            if k < base.len() {
                base[k]
            } else {
                base[k % base.len()].wrapping_add(k as u32 / 3)
            }
        })
        .collect()
}

/// What the host computes for [`int_methods`], with Rust's methods (`pow` wraps, as
/// release-mode Rust and the device do).
macro_rules! int_reference {
    ($t:ty, $a:expr, $b:expr, $d:expr, $n:expr) => {{
        let mut out = Vec::new();
        for i in 0..$a.len() {
            let (x, y, z, s): ($t, $t, $t, u32) = ($a[i], $b[i], $d[i], $n[i]);
            out.extend([
                x.wrapping_add(y),
                x.wrapping_sub(y),
                x.wrapping_mul(y),
                x.wrapping_neg(),
                x.wrapping_shl(s),
                x.wrapping_shr(s),
                x.saturating_add(y),
                x.saturating_sub(y),
                x.saturating_mul(y),
                x.rotate_left(s),
                x.rotate_right(s),
                x.reverse_bits(),
                x.swap_bytes(),
                x.wrapping_pow(s % 70),
                x.clamp(y.min(z), y.max(z)),
                x.div_euclid(z),
                x.rem_euclid(z),
            ]);
        }
        out
    }};
}

/// The inputs of [`int_methods`]: values, second operands, divisors, amounts.
type IntInputs<T> = (Vec<T>, Vec<T>, Vec<T>, Vec<u32>);

/// The inputs of [`int_methods`] for `T`.
fn int_inputs<T: TryFrom<i128> + Copy>(min: i128, max: i128) -> IntInputs<T> {
    let a = int_edges(min, max);
    let mut b = a.clone();
    b.rotate_left(5);
    let d: Vec<i128> = a
        .iter()
        .zip(pseudo_random(31, a.len()))
        .map(|(&x, r)| {
            let candidates = [max, min, 1, 2, 3, 7, -1, -2, -7, 100, -100];
            let pick = candidates[(r % candidates.len() as u64) as usize].clamp(min, max);
            if pick == 0 || (pick == -1 && x == min) {
                if min < 0 {
                    -2
                } else {
                    2
                }
            } else {
                pick
            }
        })
        .collect();
    let n = amounts(a.len());
    let convert = |v: Vec<i128>| -> Vec<T> {
        v.into_iter()
            .map(|x| match T::try_from(x) {
                Ok(value) => value,
                Err(_) => panic!("{x} is out of the type's range"),
            })
            .collect()
    };
    (convert(a), convert(b), convert(d), n)
}

fn up<T: BufferElement>(stream: &Stream, data: &[T]) -> Result<cudajit::Buffer<T>, Error> {
    stream.clone_htod(data)
}

fn run_int_methods<T: BufferElement + Int + TryFrom<i128>>(
    stream: &Stream,
    min: i128,
    max: i128,
) -> Result<(Vec<T>, IntInputs<T>), Error> {
    let inputs = int_inputs::<T>(min, max);
    let (a, b, d, n) = &inputs;
    let mut out = stream.alloc_zeros::<T>(INT_METHODS * a.len())?;
    int_methods::launch::<T>(
        stream,
        LaunchConfig::for_elements(a.len()),
        &up(stream, a)?,
        &up(stream, b)?,
        &up(stream, d)?,
        &up(stream, n)?,
        &mut out,
    )?;
    Ok((stream.clone_dtoh(&out)?, inputs))
}

/// The integer method outputs, and what Rust computes for them.
pub fn int_methods_case(stream: &Stream) -> Result<Vec<(Output, Values)>, Error> {
    let exact = |name: &str, values: Values, expected: Values| {
        (
            Output {
                name: name.into(),
                values,
                tolerance: Tolerance::Exact,
            },
            expected,
        )
    };
    let mut outputs = Vec::new();
    let (out, (a, b, d, n)) = run_int_methods::<u8>(stream, 0, u8::MAX.into())?;
    outputs.push(exact(
        "int_methods u8",
        Values::U8(out),
        Values::U8(int_reference!(u8, a, b, d, n)),
    ));
    let (out, (a, b, d, n)) = run_int_methods::<i16>(stream, i16::MIN.into(), i16::MAX.into())?;
    outputs.push(exact(
        "int_methods i16",
        Values::I16(out),
        Values::I16(int_reference!(i16, a, b, d, n)),
    ));
    let (out, (a, b, d, n)) = run_int_methods::<i32>(stream, i32::MIN.into(), i32::MAX.into())?;
    outputs.push(exact(
        "int_methods i32",
        Values::I32(out),
        Values::I32(int_reference!(i32, a, b, d, n)),
    ));
    let (out, (a, b, d, n)) = run_int_methods::<u32>(stream, 0, u32::MAX.into())?;
    outputs.push(exact(
        "int_methods u32",
        Values::U32(out),
        Values::U32(int_reference!(u32, a, b, d, n)),
    ));
    let (out, (a, b, d, n)) = run_int_methods::<i64>(stream, i64::MIN.into(), i64::MAX.into())?;
    outputs.push(exact(
        "int_methods i64",
        Values::I64(out),
        Values::I64(int_reference!(i64, a, b, d, n)),
    ));
    let (out, (a, b, d, n)) = run_int_methods::<u64>(stream, 0, u64::MAX.into())?;
    outputs.push(exact(
        "int_methods u64",
        Values::U64(out),
        Values::U64(int_reference!(u64, a, b, d, n)),
    ));

    let (a, b, _, _) = int_inputs::<i32>(i32::MIN.into(), i32::MAX.into());
    let (wa, wb, _, _) = int_inputs::<i64>(i64::MIN.into(), i64::MAX.into());
    let (ua, ub, ud, _) = int_inputs::<u16>(0, u16::MAX.into());
    let len = a.len().min(wa.len()).min(ua.len());
    let (a, b, wa, wb, ua, ub, ud) = (
        &a[..len],
        &b[..len],
        &wa[..len],
        &wb[..len],
        &ua[..len],
        &ub[..len],
        &ud[..len],
    );
    let mut diffs = stream.alloc_zeros::<u32>(len)?;
    let mut signs = stream.alloc_zeros::<i32>(len)?;
    let mut wide_diffs = stream.alloc_zeros::<u64>(len)?;
    let mut wide_signs = stream.alloc_zeros::<i64>(len)?;
    let mut unsigned_diffs = stream.alloc_zeros::<u16>(len)?;
    let mut unsigned_ceils = stream.alloc_zeros::<u16>(len)?;
    signed_methods::launch(
        stream,
        LaunchConfig::for_elements(len),
        &up(stream, a)?,
        &up(stream, b)?,
        &up(stream, wa)?,
        &up(stream, wb)?,
        &up(stream, ua)?,
        &up(stream, ub)?,
        &up(stream, ud)?,
        &mut diffs,
        &mut signs,
        &mut wide_diffs,
        &mut wide_signs,
        &mut unsigned_diffs,
        &mut unsigned_ceils,
    )?;
    let zip = |x: &[i32], y: &[i32]| x.iter().zip(y).map(|(p, q)| p.abs_diff(*q)).collect();
    outputs.push(exact(
        "abs_diff i32",
        Values::U32(stream.clone_dtoh(&diffs)?),
        Values::U32(zip(a, b)),
    ));
    outputs.push(exact(
        "signum i32",
        Values::I32(stream.clone_dtoh(&signs)?),
        Values::I32(a.iter().map(|x| x.signum()).collect()),
    ));
    outputs.push(exact(
        "abs_diff i64",
        Values::U64(stream.clone_dtoh(&wide_diffs)?),
        Values::U64(wa.iter().zip(wb).map(|(p, q)| p.abs_diff(*q)).collect()),
    ));
    outputs.push(exact(
        "signum i64",
        Values::I64(stream.clone_dtoh(&wide_signs)?),
        Values::I64(wa.iter().map(|x| x.signum()).collect()),
    ));
    outputs.push(exact(
        "abs_diff u16",
        Values::I32(
            stream
                .clone_dtoh(&unsigned_diffs)?
                .into_iter()
                .map(i32::from)
                .collect(),
        ),
        Values::I32(
            ua.iter()
                .zip(ub)
                .map(|(p, q)| i32::from(p.abs_diff(*q)))
                .collect(),
        ),
    ));
    let widen = |x: Vec<u16>| x.into_iter().map(i32::from).collect();
    outputs.push(exact(
        "div_ceil u16",
        Values::I32(widen(stream.clone_dtoh(&unsigned_ceils)?)),
        Values::I32(widen(
            ua.iter().zip(ud).map(|(p, q)| p.div_ceil(*q)).collect(),
        )),
    ));
    Ok(outputs)
}

/// Float edge values: zeros of both signs, infinities, NaN, integers, halves, values
/// just below and above integers, tiny and huge ones, then pseudo-random ones.
fn float_edges() -> Vec<f64> {
    let mut v = vec![
        0.0,
        -0.0,
        1.0,
        -1.0,
        0.5,
        -0.5,
        1.5,
        -1.5,
        2.75,
        -2.75,
        7.0,
        -7.0,
        1e-30,
        -1e-30,
        1e30,
        -1e30,
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::NAN,
        0.999_999,
        -0.999_999,
        1e-7,
        -0.9,
        3.0e-3,
    ];
    v.extend(
        pseudo_random(41, 150)
            .into_iter()
            .map(|r| ((r % 200_001) as f64 - 100_000.0) * 1e-3),
    );
    v
}

/// Divisors: both signs, fractions, infinities, zero and NaN.
fn float_divisors(count: usize) -> Vec<f64> {
    let base = [
        1.0,
        -1.0,
        0.75,
        -0.75,
        2.5,
        -2.5,
        3.0,
        -3.0,
        f64::INFINITY,
        0.0,
        f64::NAN,
        1e-3,
        -7.25,
    ];
    (0..count).map(|k| base[k % base.len()]).collect()
}

/// The float method outputs of `T`, and what Rust computes for them.
fn float_methods_of<T>(
    stream: &Stream,
    from: fn(f64) -> T,
    reference: fn(T, T) -> [T; 7],
    wrap: fn(Vec<T>) -> Values,
    suffix: &str,
    approx_ulp: u64,
) -> Result<Vec<(Output, Values)>, Error>
where
    T: BufferElement + Float,
{
    let a: Vec<T> = float_edges().into_iter().map(from).collect();
    let b: Vec<T> = float_divisors(a.len()).into_iter().map(from).collect();
    let mut out = stream.alloc_zeros::<T>(FLOAT_METHODS * a.len())?;
    let mut approx = stream.alloc_zeros::<T>(2 * a.len())?;
    float_methods::launch::<T>(
        stream,
        LaunchConfig::for_elements(a.len()),
        &up(stream, &a)?,
        &up(stream, &b)?,
        &mut out,
        &mut approx,
    )?;
    let (mut exact, mut approximate) = (Vec::new(), Vec::new());
    for (x, y) in a.iter().zip(&b) {
        let r = reference(*x, *y);
        exact.extend_from_slice(&r[..5]);
        approximate.extend_from_slice(&r[5..]);
    }
    Ok(vec![
        (
            Output {
                name: format!("float_methods {suffix}"),
                values: wrap(stream.clone_dtoh(&out)?),
                tolerance: Tolerance::Exact,
            },
            wrap(exact),
        ),
        (
            Output {
                name: format!("exp_m1 ln_1p {suffix}"),
                values: wrap(stream.clone_dtoh(&approx)?),
                tolerance: Tolerance::Ulp(approx_ulp),
            },
            wrap(approximate),
        ),
    ])
}

/// Rust's `clamp` asserts `min <= max`, which `(-1, 1)` satisfies.
pub fn float_methods_case(stream: &Stream) -> Result<Vec<(Output, Values)>, Error> {
    let mut outputs = float_methods_of::<f32>(
        stream,
        |x| x as f32,
        |x, y| {
            [
                x.fract(),
                x.signum(),
                x.clamp(-1.0, 1.0),
                x.div_euclid(y),
                x.rem_euclid(y),
                x.exp_m1(),
                x.ln_1p(),
            ]
        },
        Values::F32,
        "f32",
        2,
    )?;
    outputs.extend(float_methods_of::<f64>(
        stream,
        |x| x,
        |x, y| {
            [
                x.fract(),
                x.signum(),
                x.clamp(-1.0, 1.0),
                x.div_euclid(y),
                x.rem_euclid(y),
                x.exp_m1(),
                x.ln_1p(),
            ]
        },
        Values::F64,
        "f64",
        2,
    )?);
    Ok(outputs)
}

/// The bit-cast outputs, and what Rust computes for them.
pub fn bit_casts_case(stream: &Stream) -> Result<Vec<(Output, Values)>, Error> {
    let x64 = float_edges();
    let x32: Vec<f32> = x64.iter().map(|&x| x as f32).collect();
    let x16: Vec<f16> = x64.iter().map(|&x| f16::from_f64(x)).collect();
    let xb16: Vec<bf16> = x64.iter().map(|&x| bf16::from_f64(x)).collect();
    let n = x32.len();
    let mut bits32 = stream.alloc_zeros::<u32>(n)?;
    let mut bits64 = stream.alloc_zeros::<u64>(n)?;
    let mut bits16 = stream.alloc_zeros::<u32>(n)?;
    let mut keys = stream.alloc_zeros::<u32>(n)?;
    let mut back32 = stream.alloc_zeros::<f32>(n)?;
    let mut back64 = stream.alloc_zeros::<f64>(n)?;
    let mut back16 = stream.alloc_zeros::<f32>(n)?;
    bit_casts::launch(
        stream,
        LaunchConfig::for_elements(n),
        &up(stream, &x32)?,
        &up(stream, &x64)?,
        &up(stream, &x16)?,
        &up(stream, &xb16)?,
        &mut bits32,
        &mut bits64,
        &mut bits16,
        &mut keys,
        &mut back32,
        &mut back64,
        &mut back16,
    )?;
    let exact = |name: &str, values: Values, expected: Values| {
        (
            Output {
                name: name.into(),
                values,
                tolerance: Tolerance::Exact,
            },
            expected,
        )
    };
    // Bit patterns are compared as integers, so NaN payloads count too.
    let as_bits32 = |v: Vec<f32>| Values::U32(v.into_iter().map(f32::to_bits).collect());
    let as_bits64 = |v: Vec<f64>| Values::U64(v.into_iter().map(f64::to_bits).collect());
    Ok(vec![
        exact(
            "to_bits f32",
            Values::U32(stream.clone_dtoh(&bits32)?),
            Values::U32(x32.iter().map(|x| x.to_bits()).collect()),
        ),
        exact(
            "to_bits f64",
            Values::U64(stream.clone_dtoh(&bits64)?),
            Values::U64(x64.iter().map(|x| x.to_bits()).collect()),
        ),
        exact(
            "to_bits f16 bf16",
            Values::U32(stream.clone_dtoh(&bits16)?),
            Values::U32(
                x16.iter()
                    .zip(&xb16)
                    .map(|(h, b)| u32::from(h.to_bits()) | (u32::from(b.to_bits()) << 16))
                    .collect(),
            ),
        ),
        exact(
            "sort keys",
            Values::U32(stream.clone_dtoh(&keys)?),
            Values::U32(
                x32.iter()
                    .map(|x| {
                        let b = x.to_bits();
                        if b >> 31 == 1 {
                            !b
                        } else {
                            b | 0x8000_0000
                        }
                    })
                    .collect(),
            ),
        ),
        exact(
            "from_bits f32",
            as_bits32(stream.clone_dtoh(&back32)?),
            as_bits32(
                x32.iter()
                    .map(|x| f32::from_bits(x.to_bits() ^ 0x8000_0001))
                    .collect(),
            ),
        ),
        exact(
            "from_bits f64",
            as_bits64(stream.clone_dtoh(&back64)?),
            as_bits64(
                x64.iter()
                    .map(|x| f64::from_bits(x.to_bits().rotate_left(1)))
                    .collect(),
            ),
        ),
        exact(
            "from_bits f16 bf16",
            Values::F32(stream.clone_dtoh(&back16)?),
            Values::F32(
                x32.iter()
                    .map(|x| {
                        let b = x.to_bits();
                        let h = f16::from_bits((b & 0x7bff) as u16);
                        let bh = bf16::from_bits((b >> 16) as u16 & 0x7f7f);
                        h.to_f32() + bh.to_f32()
                    })
                    .collect(),
            ),
        ),
    ])
}

/// Every output of this module with its expected values.
pub fn all_cases(stream: &Stream) -> Result<Vec<(Output, Values)>, Error> {
    let mut outputs = bit_casts_case(stream)?;
    outputs.extend(int_methods_case(stream)?);
    outputs.extend(float_methods_case(stream)?);
    Ok(outputs)
}

/// The outputs alone, for `tests/differential.rs`.
pub fn scalar_methods_case(stream: &Stream) -> Result<Outputs, Error> {
    Ok(all_cases(stream)?.into_iter().map(|(o, _)| o).collect())
}

/// Checks every output against Rust's values, reporting all disagreements at once.
pub fn check_against_rust(outputs: Vec<(Output, Values)>) {
    let mut failures = Vec::new();
    for (output, expected) in &outputs {
        if let Err(why) = compare(&output.values, expected, output.tolerance) {
            failures.push(format!("{}: {why}", output.name));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
