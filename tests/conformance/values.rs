//! Methods and operations of `bool`, slices, arrays, `Option` and `core` items: one
//! example per row of the table's groups of those types.

use core::cmp::Ordering;

use cudajit::prelude::*;

use super::expressions::halve;
use super::items::Vec2;

#[device]
pub fn bool_operators(x: &[f32], i: usize) -> f64 {
    let a = x[i] > 0.0;
    let b = i % 2 == 0;
    let v = (a & b) as u32 + 2 * (a | b) as u32 + 4 * (a ^ b) as u32 + 8 * (!a) as u32;
    let mut c = a;
    c &= b;
    c |= i == 3;
    v as f64 + c as u8 as f64
}

#[device]
pub fn bool_cast(x: &[f32], i: usize) -> f64 {
    let a = x[i] < 1.0;
    (a as u8 as f64) + (a as i64 as f64) * 2.0 + (a as u32 * i as u32) as f64
}

#[device]
pub fn slice_len(x: &[f32], i: usize) -> f64 {
    (x.len() + i) as f64
}

#[device]
pub fn slice_get(x: &[f32], i: usize) -> f64 {
    let a = x.get(i + 5).copied().unwrap_or(-9.0);
    let b = if let Some(v) = x.get(i) { *v } else { 0.0 };
    (a + b) as f64
}

#[device]
pub fn total(x: &[f32]) -> f32 {
    let mut s = 0.0f32;
    for v in x.iter() {
        s += *v;
    }
    s
}

#[device]
pub fn slice_ranges(x: &[f32], i: usize) -> f64 {
    let lo = i % 5;
    let row = &x[lo..lo + 4];
    let tail = &row[1..];
    (total(row) + tail[0] + total(&x[..lo]) + total(&x[lo..]) + total(&x[..])) as f64
}

#[device]
pub fn slice_split_at(x: &[f32], i: usize) -> f64 {
    let (lo, hi) = x.split_at(i);
    (total(lo) * 2.0 + total(hi) + lo.len() as f32) as f64
}

#[device]
pub fn slice_iter(x: &[f32], i: usize) -> f64 {
    let mut acc = 0.0f32;
    for (k, v) in x.iter().enumerate() {
        if k <= i {
            acc += *v;
        }
    }
    let tail = &x[i..];
    for v in tail {
        acc -= v * 0.5;
    }
    acc as f64
}

#[device]
pub fn array_value(x: &[f32], i: usize) -> f64 {
    let a = [x[i], 1.0, 2.0, 3.0];
    let mut b = a;
    b[0] = 10.0;
    let mut c = [0.0f32; 4];
    let before = c[1];
    c = b;
    (a[0] + b[0] + c[0] + before + a.len() as f32) as f64
}

#[device]
pub fn doubled(v: [f32; 3]) -> [f32; 3] {
    let mut out = v;
    for k in 0..3 {
        out[k] *= 2.0;
    }
    out
}

#[device]
pub fn bump(acc: &mut [f32; 3], by: f32) {
    for k in 0..acc.len() {
        acc[k] += by;
    }
}

#[device]
pub fn array_parameters(x: &[f32], i: usize) -> f64 {
    let mut a = [x[i], i as f32, 0.5];
    let d = doubled(a);
    bump(&mut a, 1.0);
    (d[0] + d[1] + a[0] + a[2] + doubled(a)[2]) as f64
}

#[device]
pub fn array_iteration(x: &[f32], i: usize) -> f64 {
    let mut a = [x[i], 2.0, -1.0];
    for v in a.iter_mut() {
        *v *= 3.0;
    }
    let mut s = 0.0f32;
    for v in a {
        s += v;
    }
    for (w, v) in a.iter().zip(x.iter()) {
        s += w * v;
    }
    (s + i as f32) as f64
}

#[device]
pub fn nested_arrays(x: &[f32], i: usize) -> f64 {
    let mut m = [[0.0f32; 3]; 2];
    m[1][i % 3] = x[i];
    m[0][0] += 2.0;
    let row = m[1];
    m[1] = m[0];
    m[0] = row;
    (m[0][i % 3] + m[1][0] + m.len() as f32 + m[0].len() as f32) as f64
}

#[device]
fn nested_trace(m: [[f32; 2]; 2], scale: &mut [[f32; 2]; 2]) -> [[f32; 2]; 2] {
    scale[1][0] = m[0][0] + m[1][1];
    let mut out = m;
    out[0] = scale[1];
    out
}

#[device]
pub fn nested_parameters(x: &[f32], i: usize) -> f64 {
    let m = [[x[i], 2.0], [0.5, 3.0]];
    let mut s = [[1.0f32; 2]; 2];
    let r = nested_trace(m, &mut s);
    (r[0][0] + r[0][1] * 2.0 + r[1][0] + s[1][0]) as f64
}

#[device]
pub fn nested_literal(x: &[f32], i: usize) -> f64 {
    let m = [[x[i], 2.0, -1.0], [0.5, x[i] * x[i], 3.0]];
    let t: [[u32; 2]; 2] = [[i as u32, 7], [1, 2]];
    (m[1][1] - m[0][2] * m[1][0] + m[0][0] + (t[0][0] * t[0][1] + t[1][1]) as f32) as f64
}

#[device]
pub fn weighted(w: [f32; 3], v: f32) -> f32 {
    w[0] * v + w[1] * v * v + w[2]
}

#[device]
pub fn ends(v: f32) -> [f32; 2] {
    if v > 1.0 {
        return [v, -v];
    }
    [v * 0.5, 1.0]
}

#[device]
pub fn literal_values(x: &[f32], i: usize) -> f64 {
    let a = weighted([0.5, x[i], 2.0], x[i]);
    let e = ends(x[i]);
    let mut walked = 0.0f32;
    for w in [1.0f32, 2.0, 4.0] {
        walked += w * x[i];
    }
    let short = i < x.len() && weighted([x[i]; 3], 1.0) > 0.0;
    (a + e[0] - e[1] + walked) as f64 + short as u32 as f64
}

#[device]
pub fn option_values(x: &[f32], i: usize) -> f64 {
    let mut best: Option<u32> = None;
    if x[i] > 0.0 {
        best = Some(i as u32);
    }
    let copy = best;
    (copy.unwrap_or(99) + best.is_some() as u32 * 1000 + best.is_none() as u32 * 7) as f64
}

#[device]
pub fn option_methods(x: &[f32], i: usize) -> f64 {
    let n = i as u32;
    let a = halve(n).map(|v| v * 3).unwrap_or_else(|| n + 7);
    let b = halve(n).and_then(halve).unwrap_or_default();
    let c = halve(n).filter(|v| *v > 2).map_or(9, |v| v + 1);
    let d = halve(n).or(halve(n + 1)).unwrap_or(0);
    let e = halve(n).is_some_and(|v| v % 3 == 0) as u32
        + halve(n).is_none_or(|v| v > 5) as u32
        + x.get(i + 8)
            .map_or_else(|| 40, |v| ((*v * 4.0) as i32 + 40) as u32);
    let f = halve(n + (n % 2)).unwrap() + halve(2).expect("2 is even");
    (a + 3 * b + 5 * c + 7 * d + 11 * e + 13 * f) as f64 + x[i] as f64
}

/// The first point of `x` above `q`, as a `Vec2` of its index and value.
#[device]
pub fn first_above(x: &[f32], q: f32) -> Option<Vec2> {
    for k in 0..x.len() {
        if x[k] > q {
            return Some(Vec2::new(k as f32, x[k]));
        }
    }
    None
}

/// Its two halves, or `None` for an odd `n`.
#[device]
pub fn halves(n: u32) -> Option<[u32; 2]> {
    let h = halve(n)?;
    Some([h, n - h])
}

#[device]
pub fn option_struct_values(x: &[f32], i: usize) -> f64 {
    let found = first_above(x, x[i]);
    let a = found.map_or(-1.0, |p| p.x + p.y);
    let mut best: Option<Vec2> = None;
    if let Some(p) = found {
        if p.y < 3.0 {
            best = Some(p);
        }
    }
    let b = match best {
        Some(p) => p.length_squared(),
        None => 0.5,
    };
    let c = match halves(i as u32) {
        Some(h) => h[0] * 10 + h[1],
        None => 7,
    };
    (a + b) as f64 + c as f64
}

#[device]
pub fn or_default(o: Option<u32>, d: u32) -> u32 {
    o.unwrap_or(d) * 3
}

#[device]
pub fn option_passed_on(x: &[f32], i: usize) -> f64 {
    (or_default(halve(i as u32), 7) + or_default(halve(halve(i as u32).unwrap_or(1)), 2)) as f64
        + x[i] as f64
}

#[device]
pub fn orderings(x: &[f32], i: usize) -> f64 {
    let n = i as i32;
    let a = match n.cmp(&4) {
        Ordering::Less => 1,
        Ordering::Equal => 2,
        Ordering::Greater => 3,
    };
    let b = x[i].total_cmp(&0.5).reverse().then(Ordering::Less) as i32;
    let c = x[i].partial_cmp(&1.0).map_or(9, |o| o as i32 + 5);
    (a * 100 + b * 10 + c) as f64 + (n.cmp(&2).is_ge() as u32) as f64
}

#[device]
pub fn core_functions(x: &[f32], i: usize) -> f64 {
    let a = u32::max(i as u32, 4) + usize::min(i, 9) as u32 + 3u8.max(i as u8) as u32;
    let b = x[i] as f64 + (i > 3) as u32 as f64;
    a as f64 + b
}

#[device]
pub fn array_of_structs(x: &[f32], i: usize) -> f64 {
    let mut a = [Vec2::new(1.0, 2.0); 3];
    a[i % 3].x = x[i];
    a[i % 3] += Vec2::new(0.5, 0.5);
    let b = a[i % 3];
    let mut s = 0.0f32;
    for p in a {
        s += p.length_squared();
    }
    (b.x + s + a.len() as f32) as f64
}

#[device]
pub fn core_from(x: &[f32], i: usize) -> f64 {
    let v = x[i];
    let wide = f64::from(v);
    let n = u32::from(v > 0.0) + u32::from(i as u16) + u32::from(3u8);
    let s = i64::from(i as i32 - 8) * 3;
    wide + f64::from(n) + s as f64
}

group!(values, ROWS {
    "bool.operators" => bool_operators,
    "bool.cast" => bool_cast,
    "slice.len" => slice_len,
    "slice.get" => slice_get,
    "slice.range" => slice_ranges,
    "slice.split-at" => slice_split_at,
    "slice.iter" => slice_iter,
    "array.value" => array_value,
    "array.parameter" => array_parameters,
    "array.iter" => array_iteration,
    "array.nested" => nested_arrays,
    "array.nested-literal" => nested_literal,
    "array.literal-value" => literal_values,
    "array.nested-parameter" => nested_parameters,
    "array.structs" => array_of_structs,
    "option.value" => option_values,
    "option.methods" => option_methods,
    "option.passed-on" => option_passed_on,
    "item.option-struct" => option_struct_values,
    "core.ord" => core_functions,
    "core.ordering" => orderings,
    "core.from" => core_from,
});
