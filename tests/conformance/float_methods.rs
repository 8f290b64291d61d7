//! Methods of the float types: one example per row of the table's "Float methods". The
//! rows computed by libdevice on the GPU (within 2 ulp of the correctly rounded result,
//! as NVIDIA documents) are listed in `LIBDEVICE`: the GPU's results of those are
//! compared within that bound, everything else bit for bit.

use cudajit::prelude::*;
use cudajit::{bf16, f16};

/// Rows whose functions are libdevice's on the GPU.
pub const LIBDEVICE: &[&str] = &[
    "float.sqrt",
    "float.exp-ln",
    "float.trig",
    "float.powf",
    "float.powi",
    "float.hypot-atan2",
    "float.cbrt",
];

#[device]
pub fn sqrt(x: &[f32], i: usize) -> f64 {
    (x[i].abs().sqrt() + (i as f64).sqrt() as f32) as f64
}

#[device]
pub fn exp_ln(x: &[f32], i: usize) -> f64 {
    let v = x[i] * 0.5;
    let p = i as f32 + 1.0;
    (v.exp() + v.exp2() + p.ln() + p.log2() + p.log10() + v.exp_m1() + p.ln_1p()) as f64
}

#[device]
pub fn trig(x: &[f32], i: usize) -> f64 {
    let v = x[i] * 0.25;
    let t = v * 0.1;
    (v.sin() + v.cos() + v.tan() + t.asin() + t.acos() + v.atan() + v.sinh() + v.cosh() + v.tanh())
        as f64
        + i as f64
}

#[device]
pub fn powf(x: &[f32], i: usize) -> f64 {
    (x[i].abs().powf(1.5) + (i as f32).powf(0.5)) as f64
}

#[device]
pub fn powi(x: &[f32], i: usize) -> f64 {
    (x[i].powi(3) + (i as f32 * 0.5).powi(-2) + x[i].powi(0)) as f64
}

#[device]
pub fn hypot_atan2(x: &[f32], i: usize) -> f64 {
    (x[i].hypot(i as f32) + x[i].atan2(i as f32 - 3.0)) as f64
}

#[device]
pub fn cbrt(x: &[f32], i: usize) -> f64 {
    (x[i].cbrt() + (i as f32).cbrt()) as f64
}

#[device]
pub fn rounding(x: &[f32], i: usize) -> f64 {
    let v = x[i] * 1.3 + 0.5;
    (v.floor() + v.ceil() * 10.0 + v.round() * 100.0 + v.trunc() * 1000.0) as f64
        + (v.fract() as f64) * 0.5
        + i as f64
}

#[device]
pub fn abs_signum(x: &[f32], i: usize) -> f64 {
    (x[i].abs() + x[i].signum() * 10.0 + (-0.0f32).signum() * 100.0) as f64 + i as f64
}

#[device]
pub fn min_max(x: &[f32], i: usize) -> f64 {
    let v = x[i];
    (v.min(0.5) + v.max(-1.0) * 2.0 + f32::NAN.min(v) * 3.0 + (i as f64).max(4.0) as f32) as f64
}

#[device]
pub fn clamp(x: &[f32], i: usize) -> f64 {
    (x[i].clamp(-1.0, 2.0) as f64) + (i as f64).clamp(2.0, 9.5)
}

#[device]
pub fn mul_add(x: &[f32], i: usize) -> f64 {
    (x[i].mul_add(1.25, 0.5) as f64) + (i as f64).mul_add(0.1, 3.0)
}

#[device]
pub fn copysign(x: &[f32], i: usize) -> f64 {
    ((i as f32).copysign(x[i]) + 2.0f32.copysign(-0.0)) as f64
}

#[device]
pub fn recip(x: &[f32], i: usize) -> f64 {
    ((i as f32 + 1.0).recip() + (x[i] as f64 + 10.0).recip() as f32) as f64
}

#[device]
pub fn is_nan(x: &[f32], i: usize) -> f64 {
    let v = (x[i] / x[i]).is_nan() as u32 + 2 * (i as f64).is_nan() as u32;
    v as f64
}

#[device]
pub fn euclid(x: &[f32], i: usize) -> f64 {
    (x[i].div_euclid(1.5) * 10.0 + x[i].rem_euclid(1.5)) as f64 + i as f64
}

#[device]
pub fn bits(x: &[f32], i: usize) -> f64 {
    let b = x[i].to_bits();
    let back = f32::from_bits(b ^ 0x8000_0000);
    let d = (i as f64).to_bits();
    (back as f64) + (b >> 16) as f64 + (d >> 52) as f64 + f64::from_bits(d) * 0.5
}

#[device]
pub fn generic_float<T: Float>(a: T, b: T) -> T {
    a.max(b).abs() + a.min(b) * T::one() + T::zero()
}

#[device]
pub fn float_trait(x: &[f32], i: usize) -> f64 {
    generic_float(x[i], 0.5) as f64 + generic_float(i as f64, 3.0)
}

#[device]
pub fn half_precision(x: &[f32], i: usize) -> f64 {
    let h = f16::from_f32(x[i]) * f16::from_f32(1.5) + f16::from_f32(i as f32);
    let b = bf16::from_f32(x[i]) + bf16::from_f32(0.25);
    (h.to_f32() + b.to_f32()) as f64 + h.to_bits() as f64
}

#[device]
pub fn total_cmp(x: &[f32], i: usize) -> f64 {
    let w = x[(i + 1) % x.len()];
    let a = x[i].total_cmp(&w) as i32;
    let b = x[i].partial_cmp(&w).map_or(7, |o| o.reverse() as i32);
    (a * 10 + b) as f64
}

group!(float_methods, ROWS {
    "float.total-cmp" => total_cmp,
    "float.sqrt" => sqrt,
    "float.exp-ln" => exp_ln,
    "float.trig" => trig,
    "float.powf" => powf,
    "float.powi" => powi,
    "float.hypot-atan2" => hypot_atan2,
    "float.cbrt" => cbrt,
    "float.rounding" => rounding,
    "float.abs-signum" => abs_signum,
    "float.min-max" => min_max,
    "float.clamp" => clamp,
    "float.mul-add" => mul_add,
    "float.copysign" => copysign,
    "float.recip" => recip,
    "float.is-nan" => is_nan,
    "float.euclid" => euclid,
    "float.bits" => bits,
    "float.generic" => float_trait,
    "float.half" => half_precision,
});
