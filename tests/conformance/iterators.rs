//! Iterator chains: one example per row of the table's "Iterators" group. Each chain is
//! lowered to one index loop; rustc runs the same chain on the host.

use cudajit::prelude::*;

#[device]
pub fn map_sum(x: &[f32], i: usize) -> f64 {
    let s: f32 = x.iter().map(|v| v * 2.0 + i as f32).sum();
    s as f64
}

#[device]
pub fn filter(x: &[f32], i: usize) -> f64 {
    let s: f32 = x.iter().filter(|v| **v > x[i]).sum();
    s as f64
}

#[device]
pub fn enumerate(x: &[f32], i: usize) -> f64 {
    let s: f32 = x.iter().enumerate().map(|(k, v)| (k + i) as f32 * v).sum();
    s as f64
}

#[device]
pub fn zip(x: &[f32], i: usize) -> f64 {
    let s: f32 = x.iter().zip(x[i..].iter()).map(|(a, b)| a * b).sum();
    s as f64
}

#[device]
pub fn rev(x: &[f32], i: usize) -> f64 {
    let s = x.iter().rev().fold(0.0f32, |a, v| a * 0.5 + v);
    let t = (0..i).rev().fold(0u32, |a, k| a * 3 % 1000 + k as u32);
    (s + t as f32) as f64
}

#[device]
pub fn step_by(x: &[f32], i: usize) -> f64 {
    let s: f32 = x.iter().step_by(i % 4 + 1).sum();
    let t: u32 = (0..20u32).step_by(3).sum();
    (s + t as f32) as f64
}

#[device]
pub fn take_skip(x: &[f32], i: usize) -> f64 {
    let s: f32 = x.iter().skip(i).take(3).sum();
    s as f64
}

#[device]
pub fn take_skip_while(x: &[f32], i: usize) -> f64 {
    let a: f32 = x.iter().take_while(|v| **v < 4.0).sum();
    let b: f32 = x.iter().skip_while(|v| **v < x[i]).sum();
    (a + b * 2.0) as f64
}

#[device]
pub fn chain(x: &[f32], i: usize) -> f64 {
    let s: f32 = x.iter().take(i).chain(x.iter().skip(12)).map(|v| *v).sum();
    s as f64
}

#[device]
pub fn copied_cloned(x: &[f32], i: usize) -> f64 {
    let a = x.iter().copied().fold(0.0f32, |acc, v| acc + v);
    let b = x
        .iter()
        .cloned()
        .skip(i)
        .fold(1.0f32, |acc, v| acc * 0.5 + v);
    (a + b) as f64
}

#[device]
pub fn product(x: &[f32], i: usize) -> f64 {
    let p: f32 = x.iter().take(i % 6).map(|v| 1.0 + v * 0.1).product();
    let q: u64 = (1..=(i as u64 % 8)).product();
    (p + q as f32) as f64
}

#[device]
pub fn count(x: &[f32], i: usize) -> f64 {
    let a = x.iter().filter(|v| **v > 0.0).count();
    let b = (0..i).filter(|k| k % 3 == 0).count();
    (a * 100 + b) as f64
}

#[device]
pub fn add(a: f32, b: f32) -> f32 {
    a + b
}

#[device]
pub fn fold(x: &[f32], i: usize) -> f64 {
    let a = x.iter().fold(f32::NEG_INFINITY, |a, &b| a.max(b));
    let b = x.iter().copied().fold(x[i], f32::min);
    let c = x.iter().copied().fold(0.0, add);
    (a + b + c) as f64
}

#[device]
pub fn min_max(x: &[f32], i: usize) -> f64 {
    let a = (0..i as u32 + 3).map(|k| (k * 7) % 5).max().unwrap_or(0);
    let b = (1..=5u32).map(|k| k ^ i as u32).min().unwrap();
    (a + b * 10) as f64 + x[i] as f64
}

#[device]
pub fn by_comparator(x: &[f32], i: usize) -> f64 {
    let a = x
        .iter()
        .copied()
        .max_by(|p, q| p.total_cmp(q))
        .unwrap_or(0.0);
    let b = x[i..]
        .iter()
        .min_by(|p, q| p.partial_cmp(q).unwrap())
        .copied()
        .unwrap_or(99.0);
    (a * 100.0 + b) as f64
}

#[device]
pub fn by_key(x: &[f32], i: usize) -> f64 {
    let a = (0..x.len())
        .max_by_key(|k| (x[*k] * 4.0) as i32)
        .unwrap_or(0);
    let b = (i..x.len())
        .min_by_key(|&k| (x[k] * 4.0) as i32)
        .unwrap_or(99);
    (a * 100 + b) as f64
}

#[device]
pub fn reduce(x: &[f32], i: usize) -> f64 {
    x[i..].iter().copied().reduce(|a, b| a - b).unwrap_or(-1.0) as f64
}

#[device]
pub fn position(x: &[f32], i: usize) -> f64 {
    x.iter().position(|&v| v > x[i]).unwrap_or(99) as f64
}

#[device]
pub fn find(x: &[f32], i: usize) -> f64 {
    x.iter().copied().find(|v| *v > x[i] + 1.0).unwrap_or(7.0) as f64
}

#[device]
pub fn last(x: &[f32], i: usize) -> f64 {
    x[..i].iter().copied().last().unwrap_or(0.5) as f64
}

#[device]
pub fn any_all(x: &[f32], i: usize) -> f64 {
    let a = x.iter().any(|&v| v == x[(i + 3) % 16] + 1.0);
    let b = x.iter().all(|v| *v > x[i] - 5.0);
    (a as u32 + 2 * b as u32) as f64
}

#[device]
pub fn for_over_chain(x: &[f32], i: usize) -> f64 {
    let mut acc = 0.0f32;
    for (k, v) in x.iter().map(|v| v + 1.0).enumerate().skip(i) {
        acc += k as f32 * v;
    }
    for v in x.iter().filter(|v| **v > 0.0).take(5) {
        acc -= *v;
    }
    for k in (0..i).step_by(2).map(|k| k * 2) {
        acc += k as f32;
    }
    acc as f64
}

#[device]
pub fn integer_sums(x: &[f32], i: usize) -> f64 {
    let a: u32 = (0..i as u32).sum();
    let t = [1u32, 2, 3];
    let b = t.iter().sum::<u32>();
    let c: i64 = (0..i).map(|k| k as i64 - 4).sum();
    (a + b) as f64 + c as f64 + x[i] as f64
}

#[device]
pub fn for_each(x: &[f32], i: usize) -> f64 {
    let mut acc = x[i];
    x.iter().for_each(|v| acc = acc * 0.5 + v);
    (0..i).for_each(|k| {
        acc -= k as f32;
    });
    x.iter()
        .enumerate()
        .filter(|(k, _)| k % 3 == i % 3)
        .for_each(|(k, &v)| acc += v * k as f32);
    let mut w = [0.0f32; 4];
    w.iter_mut().for_each(|v: &mut f32| *v = acc);
    (acc + w[3]) as f64
}

group!(iterators, ROWS {
    "iter.map" => map_sum,
    "iter.sum" => integer_sums,
    "iter.filter" => filter,
    "iter.enumerate" => enumerate,
    "iter.zip" => zip,
    "iter.rev" => rev,
    "iter.step-by" => step_by,
    "iter.take-skip" => take_skip,
    "iter.take-while" => take_skip_while,
    "iter.chain" => chain,
    "iter.copied" => copied_cloned,
    "iter.product" => product,
    "iter.count" => count,
    "iter.fold" => fold,
    "iter.min-max" => min_max,
    "iter.by-key" => by_key,
    "iter.max-by" => by_comparator,
    "iter.reduce" => reduce,
    "iter.position" => position,
    "iter.find" => find,
    "iter.last" => last,
    "iter.any-all" => any_all,
    "iter.for" => for_over_chain,
    "iter.for-each" => for_each,
});
