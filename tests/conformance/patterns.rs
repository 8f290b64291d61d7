//! Patterns: one example per row of the table's "Patterns" group.

use cudajit::prelude::*;

use super::items::{Op, Pair};

#[device]
pub fn identifier(x: &[f32], i: usize) -> f64 {
    let v = x[i];
    let mut w = v;
    w *= 2.0;
    let _unused = i;
    (v + w) as f64
}

#[device]
pub fn tuple_pattern(x: &[f32], i: usize) -> f64 {
    let (a, mut b, _) = (x[i], i as u32, 9u8);
    b += 1;
    let (c, _, _) = (1.0f32, 2.0f32, 3.0f32);
    (a + b as f32 + c) as f64
}

#[device]
pub fn array_pattern(x: &[f32], i: usize) -> f64 {
    let arr = [x[i], 2.0, 3.0, i as f32];
    let [first, .., last] = arr;
    let [_, mut second, _, _] = arr;
    second += 1.0;
    (first + second + last) as f64
}

#[device]
pub fn literal_patterns(x: &[f32], i: usize) -> f64 {
    let n = i as i32 - 8;
    let v = match n {
        0 => 1,
        -3 => 2,
        7 => 3,
        _ => 4,
    };
    let b = match x[i] > 0.0 {
        true => 10,
        false => 20,
    };
    (v + b) as f64
}

#[device]
pub fn range_patterns(x: &[f32], i: usize) -> f64 {
    let v = match i {
        0..3 => 1,
        3..=5 => 2,
        _ => 3,
    };
    v as f64 + x[i] as f64
}

#[device]
pub fn or_patterns(x: &[f32], i: usize) -> f64 {
    let v = match i % 6 {
        0 | 2 | 4 => 1,
        1 | 5 => 2,
        _ => 3,
    };
    v as f64 + x[i] as f64
}

#[device]
pub fn guards(x: &[f32], i: usize) -> f64 {
    let v = match i {
        0 | 4 | 8 | 12 if x[i] < 0.0 => 1,
        0..8 if x[i] > 0.0 => 2,
        _ => 3,
    };
    v as f64
}

#[device]
pub fn path_patterns(x: &[f32], i: usize) -> f64 {
    let op = if x[i] > 0.0 { Op::Add } else { Op::Mul };
    let v = match op {
        Op::Add | Op::Sub => 1,
        Op::Mul => 2,
    };
    v as f64 + i as f64
}

#[device]
pub fn option_patterns(x: &[f32], i: usize) -> f64 {
    let o = super::expressions::halve(i as u32);
    let v = match o {
        Some(h) if h > 3 => h,
        Some(_) => 100,
        None => 200,
    };
    let w = if let Some(&y) = x.get(i + 4) { y } else { 0.0 };
    (v as f32 + w) as f64
}

#[device]
pub fn reference_patterns(x: &[f32], i: usize) -> f64 {
    let mut acc = 0.0f32;
    for &v in x.iter() {
        acc += v;
    }
    let s: f32 = x.iter().map(|&v| v * 2.0).sum();
    (acc + s + i as f32) as f64
}

#[device]
pub fn closure_parameter_patterns(x: &[f32], i: usize) -> f64 {
    let s: f32 = x.iter().enumerate().map(|(k, v)| k as f32 * v).sum();
    let t = x.iter().fold(0.0, |acc, &v| acc + v * 0.5);
    (s + t + i as f32) as f64
}

#[device]
pub fn struct_patterns(x: &[f32], i: usize) -> f64 {
    let p = Pair {
        a: x[i],
        b: i as u32,
    };
    let Pair { a, b } = p;
    let m = super::items::Meters(a, b);
    let v = match m {
        super::items::Meters(w, 0) => w,
        super::items::Meters(w, k) if w > 0.0 => w * k as f32,
        super::items::Meters(_, k) => k as f32,
    };
    (a + b as f32 + v) as f64
}

group!(patterns, ROWS {
    "pat.identifier" => identifier,
    "pat.tuple" => tuple_pattern,
    "pat.slice" => array_pattern,
    "pat.literal" => literal_patterns,
    "pat.range" => range_patterns,
    "pat.or" => or_patterns,
    "pat.guard" => guards,
    "pat.path" => path_patterns,
    "pat.struct" => struct_patterns,
    "pat.option" => option_patterns,
    "pat.reference" => reference_patterns,
    "pat.closure-parameter" => closure_parameter_patterns,
});
