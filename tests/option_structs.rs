//! `Option` of a `DeviceCopy` struct and of an array, and structs as the values of `if`
//! and `match`, in kernels: locals, results of `#[device]` functions and methods,
//! parameters, a call's `Option` passed straight on, `?`, `match`, `if let`, `let … else`,
//! `map`, `map_or`, `unwrap_or`, `is_some`, `is_some_and`, `is_none_or`. Each use is
//! checked against rustc running the same `#[device]` functions on the host; on the CPU
//! simulator always, on a GPU when there is one.
#![allow(clippy::manual_map)]

mod common;

use cudajit::prelude::*;
use cudajit::Stream;

/// The nearest sample to a query, with its index.
#[derive(Clone, Copy, Debug, PartialEq, DeviceCopy)]
#[repr(C)]
pub struct Hit {
    pub distance: f32,
    pub index: u32,
}

/// The nearest element of `x` to `q` within `radius`, searched by hand.
#[device]
pub fn nearest(x: &[f32], q: f32, radius: f32) -> Option<Hit> {
    let mut best: Option<Hit> = None;
    let mut k = 0;
    while k < x.len() {
        let d = (x[k] - q).abs();
        let closer = match best {
            Some(b) => d < b.distance,
            None => d <= radius,
        };
        if closer {
            best = Some(Hit {
                distance: d,
                index: k as u32,
            });
        }
        k += 1;
    }
    best
}

/// `?` on an `Option<Hit>`, and a struct built from it.
#[device]
pub fn nearest_twice(x: &[f32], q: f32, radius: f32) -> Option<Hit> {
    let first = nearest(x, q, radius)?;
    let again = nearest(x, q + first.distance, radius)?;
    Some(Hit {
        distance: first.distance + again.distance,
        index: first.index * 100 + again.index,
    })
}

/// An `Option<Hit>` parameter.
#[device]
pub fn score(hit: Option<Hit>, bias: f32) -> f32 {
    if let Some(h) = hit {
        h.distance + h.index as f32 + bias
    } else {
        -1.0
    }
}

/// The two smallest of a pair, or `None` when they are equal.
#[device]
pub fn ordered(a: f32, b: f32) -> Option<[f32; 2]> {
    if a == b {
        None
    } else if a < b {
        Some([a, b])
    } else {
        Some([b, a])
    }
}

/// The consumers of an `Option` of a struct and of an array.
#[device]
pub fn consumers(x: &[f32], i: usize) -> f32 {
    let q = x[i];
    let hit = nearest(x, q * 0.5, 2.0);
    let a = hit.map(|h| h.distance).unwrap_or(-3.0);
    let b = if hit.is_some() { 1.0 } else { 0.0 };
    let c = match nearest_twice(x, q, 1.5) {
        Some(h) => h.index as f32,
        None => -7.0,
    };
    let d = score(hit, 0.25) + score(None, 0.5);
    let fallback = Hit {
        distance: 9.0,
        index: 9,
    };
    let e = nearest(x, q + 100.0, 1.0).unwrap_or(fallback).distance;
    let pair = ordered(q, x[(i + 1) % x.len()]);
    let f = match pair {
        Some(p) => p[1] - p[0],
        None => 0.0,
    };
    let g = pair.map_or(-1.0, |p| p[0]);
    a + b * 2.0 + c * 3.0 + d * 5.0 + e * 7.0 + f * 11.0 + g * 13.0
}

/// A grid of samples searched by a method returning an `Option` of a struct.
#[derive(Clone, Copy, Debug, PartialEq, DeviceCopy)]
#[repr(C)]
pub struct Window {
    pub lo: f32,
    pub hi: f32,
}

#[device]
impl Window {
    /// The first element of `x` inside the window.
    pub fn first_inside(&self, x: &[f32]) -> Option<Hit> {
        for k in 0..x.len() {
            if x[k] >= self.lo && x[k] <= self.hi {
                return Some(Hit {
                    distance: x[k] - self.lo,
                    index: k as u32,
                });
            }
        }
        None
    }
}

/// Struct values of `if` and `match`, and the other ways of taking an `Option<Hit>` apart.
#[device]
pub fn more(x: &[f32], i: usize) -> f32 {
    let q = x[i];
    let near = Hit {
        distance: q.abs(),
        index: i as u32,
    };
    let far = Hit {
        distance: q * 2.0,
        index: 7,
    };
    // A struct as the value of an `if` and of a `match`.
    let chosen = if q > 0.0 { near } else { far };
    let picked = match i % 3 {
        0 => near,
        1 => far,
        _ => Hit {
            distance: 0.5,
            index: 3,
        },
    };
    let window = Window {
        lo: q - 1.0,
        hi: q + 1.5,
    };
    let mut total = chosen.distance + picked.index as f32;
    if let Some(h) = window.first_inside(x) {
        total += h.distance * 3.0 + h.index as f32;
    }
    let Some(first) = Window { lo: q, hi: q + 0.5 }.first_inside(x) else {
        return total - 100.0;
    };
    total += first.index as f32 * 0.25;
    let mut best: Option<Hit> = None;
    for k in 0..x.len() {
        if x[k] > q && best.is_none_or(|b| x[k] < x[b.index as usize]) {
            best = Some(Hit {
                distance: x[k] - q,
                index: k as u32,
            });
        }
    }
    if best.is_some_and(|b| b.distance < 2.0) {
        total += 10.0;
    }
    total + best.map_or(-5.0, |b| b.distance)
}

/// The weight of a hit, 0 without one.
#[device]
pub fn weigh(hit: Option<Hit>) -> f32 {
    hit.map_or(0.0, |h| h.distance * 2.0 + h.index as f32)
}

/// A call's `Option<Hit>` passed straight on, and an `Option` of an array read into a
/// local array.
#[device]
pub fn passed_on(x: &[f32], i: usize) -> f32 {
    let a = weigh(nearest(x, x[i] + 0.3, 1.0));
    let mut p = [-1.0f32; 2];
    if let Some(v) = ordered(x[i], 1.0) {
        p = v;
    }
    a + p[0] * 3.0 + p[1] * 5.0
}

/// Arrays as the values of `if`s and blocks, and `unwrap_or` of an `Option` of an array.
#[device]
pub fn array_branches(x: &[f32], i: usize) -> f32 {
    let low = [x[i], 1.0];
    let high = [2.0, x[i] * 0.5];
    let chosen = if x[i] > 0.0 { low } else { high };
    let nested = if i % 3 == 0 {
        [0.25f32; 2]
    } else if i % 3 == 1 {
        ordered(x[i], 0.5).unwrap_or([9.0, 8.0])
    } else {
        let mut t = high;
        t[0] += 1.0;
        t
    };
    let block = {
        let mut b = chosen;
        b[1] *= 3.0;
        b
    };
    chosen[0] + chosen[1] * 2.0 + nested[0] * 3.0 + nested[1] * 5.0 + block[1] * 7.0
}

#[kernel]
fn option_structs(x: &[f32], out: &mut [f32]) {
    let i = global_index();
    if i >= x.len() {
        return;
    }
    out[i] = consumers(x, i);
    out[x.len() + i] = more(x, i);
    out[2 * x.len() + i] = passed_on(x, i);
    out[3 * x.len() + i] = array_branches(x, i);
}

fn inputs() -> Vec<f32> {
    (0..53)
        .map(|i| ((i * 29 % 53) as f32 - 26.0) * 0.375)
        .collect()
}

fn check(stream: &Stream) {
    let x = inputs();
    let n = x.len();
    let dx = stream.clone_htod(&x).unwrap();
    let mut out = stream.alloc_zeros::<f32>(4 * n).unwrap();
    option_structs::launch(stream, LaunchConfig::for_elements(n), &dx, &mut out).unwrap();
    let got = stream.clone_dtoh(&out).unwrap();
    for (i, g) in got.iter().enumerate() {
        let w = match i / n {
            0 => consumers(&x, i),
            1 => more(&x, i - n),
            2 => passed_on(&x, i - 2 * n),
            _ => array_branches(&x, i - 3 * n),
        };
        assert_eq!(g.to_bits(), w.to_bits(), "out[{i}]: cudajit {g}, rustc {w}");
    }
}

#[test]
fn options_of_structs_and_arrays_on_the_simulator() {
    check(&Stream::simulator());
}

#[test]
fn options_of_structs_and_arrays_on_the_gpu() {
    common::on_gpu_without_fma(check);
}

/// An `Option` of a struct is a flag and the struct's fields in registers.
#[test]
fn options_of_structs_compile_without_local_memory() {
    common::assert_inlined_without_local_memory(option_structs::KERNEL.captured());
}

/// `let mut best = None;` later given a struct: Rust infers `Option<Hit>` from the
/// assignment, the kernel language needs it written.
#[kernel]
fn untyped_best(x: &[f32], out: &mut [u32]) {
    let mut best = None;
    for k in 0..x.len() {
        if x[k] > 0.0 {
            best = Some(Hit {
                distance: x[k],
                index: k as u32,
            });
        }
    }
    out[0] = best.map_or(0, |h: Hit| h.index);
}

#[test]
fn an_untyped_option_of_a_struct_names_the_annotation_to_write() {
    let stream = Stream::simulator();
    let dx = stream.clone_htod(&inputs()).unwrap();
    let mut out = stream.alloc_zeros::<u32>(1).unwrap();
    let error = untyped_best::launch(&stream, LaunchConfig::for_elements(1), &dx, &mut out)
        .expect_err("the `let` has no type");
    let text = error.to_string();
    assert!(
        text.contains("write its type there, `let mut best: Option<Hit> = ..;`"),
        "{text}"
    );
}
