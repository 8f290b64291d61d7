//! Kernels that exercise the language, with CPU references, shared by the CPU pipeline
//! tests (which compile them) and the GPU tests (which run them).
#![allow(dead_code)]

use cudajit::prelude::*;

#[kernel]
pub fn saxpy(a: f32, x: &[f32], y: &mut [f32]) {
    let i = global_index();
    if i < y.len() {
        y[i] = a * x[i] + y[i];
    }
}

pub fn saxpy_ref(a: f32, x: &[f32], y: &mut [f32]) {
    for (y, x) in y.iter_mut().zip(x) {
        *y += a * x;
    }
}

/// Wrapping arithmetic, division, shifts by large amounts, bit operations, comparisons.
#[kernel]
pub fn int_ops(a: &[i32], b: &[i32], shift: u32, out: &mut [i32], flags: &mut [u32]) {
    let i = global_index();
    if i >= out.len() {
        return;
    }
    let x = a[i];
    let y = b[i];
    let mut r = x * 31 + y * 17 - 5;
    r ^= x << shift;
    r = r + (x >> (shift + 3)) + ((y as u32 >> shift) as i32);
    if y != 0 {
        r += x / y + x % y;
    }
    let u = x as u32;
    let mut f: u32 = 0;
    if x < y {
        f |= 1;
    }
    if u < y as u32 {
        f |= 2;
    }
    if x == y || (x > 0 && !(y > 0)) {
        f |= 4;
    }
    f += (u >> shift) & 0xf0;
    out[i] = !r;
    flags[i] = f;
}

pub fn int_ops_ref(a: &[i32], b: &[i32], shift: u32, out: &mut [i32], flags: &mut [u32]) {
    for i in 0..out.len() {
        let x = a[i];
        let y = b[i];
        let mut r = x
            .wrapping_mul(31)
            .wrapping_add(y.wrapping_mul(17))
            .wrapping_sub(5);
        r ^= x.wrapping_shl(shift);
        r = r
            .wrapping_add(x.wrapping_shr(shift + 3))
            .wrapping_add(((y as u32).wrapping_shr(shift)) as i32);
        if y != 0 {
            r = r
                .wrapping_add(x.wrapping_div(y))
                .wrapping_add(x.wrapping_rem(y));
        }
        let u = x as u32;
        let mut f: u32 = 0;
        if x < y {
            f |= 1;
        }
        if u < y as u32 {
            f |= 2;
        }
        if x == y || (x > 0 && y <= 0) {
            f |= 4;
        }
        f = f.wrapping_add((u.wrapping_shr(shift)) & 0xf0);
        out[i] = !r;
        flags[i] = f;
    }
}

/// Rust's `as`: saturating float-to-int (NaN to 0), int-to-float, widening and narrowing.
#[kernel]
pub fn casts(
    x: &[f32],
    to_i32: &mut [i32],
    to_u8: &mut [u8],
    to_i16: &mut [i16],
    to_f64: &mut [f64],
    to_u64: &mut [u64],
) {
    let i = global_index();
    if i < x.len() {
        let v = x[i];
        to_i32[i] = v as i32;
        to_u8[i] = v as u8;
        to_i16[i] = v as i16;
        to_f64[i] = v as f64 * 0.5 + (i as f64);
        to_u64[i] = (v as i64) as u64 + (i as u8) as u64;
    }
}

pub fn casts_ref(
    x: &[f32],
    to_i32: &mut [i32],
    to_u8: &mut [u8],
    to_i16: &mut [i16],
    to_f64: &mut [f64],
    to_u64: &mut [u64],
) {
    for i in 0..x.len() {
        let v = x[i];
        to_i32[i] = v as i32;
        to_u8[i] = v as u8;
        to_i16[i] = v as i16;
        to_f64[i] = v as f64 * 0.5 + (i as f64);
        to_u64[i] = ((v as i64) as u64).wrapping_add((i as u8) as u64);
    }
}

/// Every loop form: stepped and inclusive ranges, `while`, `loop` with `break`, labelled
/// `continue`, an `if` used as a value and a `mut` parameter.
#[kernel]
pub fn loops(mut limit: u64, out: &mut [u64]) {
    let i = global_index();
    if i >= out.len() {
        return;
    }
    limit += 1;
    let n = i as u64;
    let mut sum: u64 = 0;
    for j in (0..n).step_by(3) {
        sum += j;
    }
    for j in 1..=4u64 {
        sum += j * 1000;
    }
    let mut k = n;
    while k > 0 {
        sum += k & 1;
        k >>= 1;
    }
    let mut steps = 0u64;
    loop {
        steps += 1;
        if steps * steps > n || steps >= limit {
            break;
        }
    }
    'outer: for a in 0..3u64 {
        for b in 0..3u64 {
            if b > a {
                continue 'outer;
            }
            sum += a * 10 + b;
        }
    }
    let parity = if n % 2 == 0 { 100 } else { 200 };
    out[i] = sum + steps * 1_000_000 + parity;
}

pub fn loops_ref(limit: u64, out: &mut [u64]) {
    let limit = limit + 1;
    for (i, slot) in out.iter_mut().enumerate() {
        let n = i as u64;
        let mut sum: u64 = (0..n).step_by(3).sum();
        sum += (1..=4u64).map(|j| j * 1000).sum::<u64>();
        sum += u64::from(n.count_ones());
        let mut steps = 0u64;
        loop {
            steps += 1;
            if steps * steps > n || steps >= limit {
                break;
            }
        }
        for a in 0..3u64 {
            for b in 0..=a {
                sum += a * 10 + b;
            }
        }
        let parity = if n % 2 == 0 { 100 } else { 200 };
        *slot = sum + steps * 1_000_000 + parity;
    }
}

/// Two-dimensional grid: a transpose of a `rows` x `cols` matrix.
#[kernel]
pub fn transpose(rows: u32, cols: u32, input: &[f64], output: &mut [f64]) {
    let c = block_idx().x * block_dim().x + thread_idx().x;
    let r = block_idx().y * block_dim().y + thread_idx().y;
    if r < rows && c < cols {
        output[(c * rows + r) as usize] = input[(r * cols + c) as usize];
    }
}

/// `bool` parameters and slices, and short-circuit logic.
#[kernel]
pub fn bools(invert: bool, x: &[bool], y: &[i64], out: &mut [bool]) {
    let i = global_index();
    if i < out.len() {
        let v = x[i] && y[i] > 0 || !x[i] && y[i] % 3 == 0;
        out[i] = v != invert;
    }
}

pub fn bools_ref(invert: bool, x: &[bool], y: &[i64], out: &mut [bool]) {
    for i in 0..out.len() {
        let v = x[i] && y[i] > 0 || !x[i] && y[i] % 3 == 0;
        out[i] = v != invert;
    }
}

/// A grid-stride loop, the usual way to cover any size with a fixed grid.
#[kernel]
pub fn scale_strided(factor: f64, data: &mut [f64]) {
    for i in (global_index()..data.len()).step_by(grid_stride()) {
        data[i] *= factor;
    }
}
