//! Methods of the integer types: one example per row of the table's "Integer methods".
//! The operands are kept where Rust defines the result (no overflow where Rust panics in
//! a debug build), so the host's debug build is the reference.

use cudajit::prelude::*;

/// A signed operand: -8 ..= 7, and `i32::MIN` for the last element.
#[device]
pub fn signed(i: usize) -> i32 {
    if i == 15 {
        i32::MIN
    } else {
        i as i32 - 8
    }
}

#[device]
pub fn abs(x: &[f32], i: usize) -> f64 {
    let a = (i as i32 - 8).abs();
    let b = (x[i] as i64 * 3).abs();
    (a as i64 + b) as f64
}

#[device]
pub fn min_max(x: &[f32], i: usize) -> f64 {
    let n = i as u32;
    let s = x[i] as i16;
    (n.min(5) + n.max(9)) as f64 + (s.min(-1) + s.max(2)) as f64
}

#[device]
pub fn clamp(x: &[f32], i: usize) -> f64 {
    (i as u64).clamp(3, 11) as f64 + (x[i] as i32).clamp(-2, 2) as f64
}

#[device]
pub fn pow(x: &[f32], i: usize) -> f64 {
    (i as u64).pow(3) as f64 + (x[i] as i32).pow(2) as f64 + 3u32.pow(i as u32 % 10) as f64
}

#[device]
pub fn count_ones(x: &[f32], i: usize) -> f64 {
    let n = (i as u32).wrapping_mul(2654435761);
    (n.count_ones() + signed(i).count_ones() + (x[i] as i8).count_ones()) as f64
}

#[device]
pub fn leading_zeros(x: &[f32], i: usize) -> f64 {
    let n = i as u32;
    (n.leading_zeros() + (i as u64).leading_zeros() + (x[i] as i16).leading_zeros()) as f64
}

#[device]
pub fn trailing_zeros(x: &[f32], i: usize) -> f64 {
    let n = (i as u32) << 3;
    (n.trailing_zeros() + (i as u8).trailing_zeros() + signed(i).trailing_zeros()) as f64
        + x[i] as f64
}

#[device]
pub fn wrapping(x: &[f32], i: usize) -> f64 {
    let n = i as u8;
    let a = n.wrapping_add(250).wrapping_sub(3).wrapping_mul(77);
    let b = signed(i)
        .wrapping_neg()
        .wrapping_shl(35)
        .wrapping_shr(i as u32);
    a as f64 + b as f64 + x[i] as f64
}

#[device]
pub fn saturating(x: &[f32], i: usize) -> f64 {
    let n = (i * 20) as u8;
    let a = n.saturating_add(200) as i64 + n.saturating_sub(100) as i64;
    let b = signed(i).saturating_mul(1 << 28) as i64 + (x[i] as i8).saturating_sub(127) as i64;
    (a + b) as f64
}

#[device]
pub fn rotate(x: &[f32], i: usize) -> f64 {
    let n = 0x1234_5678u32 ^ i as u32;
    (n.rotate_left(i as u32 + 30) as u64 + n.rotate_right(5) as u64) as f64 + x[i] as f64
}

#[device]
pub fn reverse_bits(x: &[f32], i: usize) -> f64 {
    ((i as u32).reverse_bits() as u64 + (i as u8).reverse_bits() as u64) as f64 + x[i] as f64
}

#[device]
pub fn swap_bytes(x: &[f32], i: usize) -> f64 {
    ((0x0102_0304u32 + i as u32).swap_bytes() as u64 + (i as u16 + 1).swap_bytes() as u64) as f64
        + x[i] as f64
}

#[device]
pub fn abs_diff(x: &[f32], i: usize) -> f64 {
    ((i as u32).abs_diff(7) + signed(i).abs_diff(3)) as f64 + x[i] as f64
}

#[device]
pub fn euclid(x: &[f32], i: usize) -> f64 {
    let n = i as i32 - 8;
    (n.div_euclid(3) * 100 + n.rem_euclid(3)) as f64 + (x[i] as i64).rem_euclid(4) as f64
}

#[device]
pub fn signum(x: &[f32], i: usize) -> f64 {
    ((i as i32 - 8).signum() + (x[i] as i64).signum() as i32) as f64
}

#[device]
pub fn div_ceil(x: &[f32], i: usize) -> f64 {
    ((i as u32).div_ceil(3) + 10u32.div_ceil(i as u32 + 1)) as f64 + x[i] as f64
}

#[device]
pub fn generic_int<T: Int>(a: T, b: T) -> T {
    a.max(b) - a.min(b) + T::one() + T::zero()
}

#[device]
pub fn int_trait(x: &[f32], i: usize) -> f64 {
    (generic_int(i as u32, 9) + generic_int(x[i] as i32, -2) as u32) as f64
}

#[device]
pub fn constants(x: &[f32], i: usize) -> f64 {
    (u32::BITS + i as u32) as f64
        + (usize::MAX - i) as f64
        + i64::MIN as f64
        + u8::MAX as f64
        + x[i] as f64
}

group!(int_methods, ROWS {
    "int.constants" => constants,
    "int.abs" => abs,
    "int.min-max" => min_max,
    "int.clamp" => clamp,
    "int.pow" => pow,
    "int.count-ones" => count_ones,
    "int.leading-zeros" => leading_zeros,
    "int.trailing-zeros" => trailing_zeros,
    "int.wrapping" => wrapping,
    "int.saturating" => saturating,
    "int.rotate" => rotate,
    "int.reverse-bits" => reverse_bits,
    "int.swap-bytes" => swap_bytes,
    "int.abs-diff" => abs_diff,
    "int.euclid" => euclid,
    "int.signum" => signum,
    "int.div-ceil" => div_ceil,
    "int.generic" => int_trait,
});
