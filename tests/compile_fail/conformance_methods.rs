// The standard-library methods of docs/language.md's conformance table that kernels
// refuse (its "no" rows; tests/conformance.rs checks that each has its error here), one
// function each, so that every refusal reports its own error.
use cudajit::prelude::*;

#[device]
fn int_checked(a: u32) -> u32 { a.checked_add(1).unwrap_or(0) }

#[device]
fn int_overflowing(a: u32) -> bool { let t = a.overflowing_add(1); t.1 }

#[device]
fn int_wrapping_div(a: u32) -> u32 { a.wrapping_div(3) }

#[device]
fn int_wrapping_pow(a: u32) -> u32 { a.wrapping_pow(3) }

#[device]
fn int_saturating_pow(a: u32) -> u32 { a.saturating_pow(3) }

#[device]
fn int_leading_ones(a: u32) -> u32 { a.leading_ones() }

#[device]
fn int_count_zeros(a: u32) -> u32 { a.count_zeros() }

#[device]
fn int_power_of_two(a: u32) -> bool { a.is_power_of_two() }

#[device]
fn int_ilog(a: u32) -> u32 { a.ilog2() }

#[device]
fn int_isqrt(a: u32) -> u32 { a.isqrt() }

#[device]
fn int_unsigned_abs(a: i32) -> u32 { a.unsigned_abs() }

#[device]
fn int_sign_tests(a: i32) -> bool { a.is_negative() }

#[device]
fn int_bytes(a: u32) -> u8 { let b = a.to_le_bytes(); b[0] }

#[device]
fn int_multiple_of(a: u32) -> bool { a.is_multiple_of(4) }

#[device]
fn int_midpoint(a: u32) -> u32 { a.midpoint(7) }

#[device]
fn float_classify(v: f32) -> bool { v.is_finite() }

#[device]
fn float_sign_tests(v: f32) -> bool { v.is_sign_negative() }

#[device]
fn float_sin_cos(v: f32) -> f32 { let t = v.sin_cos(); t.0 }

#[device]
fn float_log_base(v: f32) -> f32 { v.log(3.0) }

#[device]
fn float_round_ties_even(v: f32) -> f32 { v.round_ties_even() }

#[device]
fn core_into(v: f32) -> f64 { v.into() }

#[device]
fn bool_then(b: bool, v: u32) -> u32 { b.then_some(v).unwrap_or(0) }

#[device]
fn slice_is_empty(x: &[f32]) -> bool { x.is_empty() }

#[device]
fn slice_contains(x: &[f32], v: f32) -> bool { x.contains(&v) }

#[device]
fn slice_swap(y: &mut [f32]) { y.swap(0, 1); }

#[device]
fn slice_fill(y: &mut [f32]) { y.fill(0.0); }

#[device]
fn slice_copy_from(x: &[f32], y: &mut [f32]) { y.copy_from_slice(x); }

#[device]
fn slice_windows(x: &[f32]) -> f32 { let mut r = 0.0; for w in x.windows(2) { r += w[0]; } r }

#[device]
fn array_map(v: f32) -> f32 { let a = [v, 2.0]; let b = a.map(|e| e * 2.0); b[0] }

#[device]
fn option_take(v: u32) -> u32 { let mut a: Option<u32> = Some(v); let t = a.take(); t.unwrap_or(0) }

#[device]
fn option_xor(v: u32) -> u32 { let a: Option<u32> = Some(v); let b: Option<u32> = None; let c = a.xor(b); c.unwrap_or(0) }

#[device]
fn option_eq(v: u32) -> bool { let a: Option<u32> = Some(v); a == Some(1) }

#[device]
fn iter_nth(x: &[f32]) -> f32 { x.iter().copied().nth(3).unwrap_or(0.0) }

#[device]
fn iter_rposition(x: &[f32]) -> usize { x.iter().rposition(|v| *v > 0.0).unwrap_or(0) }

#[device]
fn iter_filter_map(x: &[f32]) -> f32 { x.iter().filter_map(|v| if *v > 0.0 { Some(*v) } else { None }).sum::<f32>() }

#[device]
fn iter_for_each_tail(x: &[f32], y: &mut [f32]) { x.iter().for_each(|v| y[0] = *v) }

#[device]
fn iter_map_while(x: &[f32]) -> f32 { x.iter().map_while(|v| if *v < 3.0 { Some(*v) } else { None }).sum::<f32>() }

#[device]
fn iter_scan(x: &[f32]) -> f32 { x.iter().scan(0.0, |a, v| { *a += *v; Some(*a) }).sum::<f32>() }

#[device]
fn iter_flat_map(x: &[f32]) -> f32 { x.iter().flat_map(|v| [*v, *v]).sum::<f32>() }

#[device]
fn iter_stored(x: &[f32]) -> f32 { let it = x.iter(); it.sum::<f32>() }

#[device]
fn iter_rev_after(x: &[f32]) -> f32 { x.iter().map(|v| v * 2.0).rev().sum::<f32>() }

#[device]
fn iter_collect(x: &[f32]) -> f32 { let v: [f32; 2] = x.iter().copied().collect(); v[0] }

fn main() {}
