//! Small programs as a user writes them from docs/language.md, each combining features, on
//! the simulator and the GPU against the same functions run on the host: a generic struct
//! whose method takes a closure, called on an array of instances passed by value to a
//! generic function (two instances, `f64` and `i32`); a struct method named like an
//! `Option`'s (`map`), which is the struct's own; literals of arrays of arrays, typed and
//! not, read, compounded, copied by row and walked by row (`for row in m`); a module
//! constant as a const generic argument and a constant table read at a runtime index.

use core::ops::{Add, Mul};

use cudajit::prelude::*;

#[derive(Clone, Copy, Debug, PartialEq, DeviceCopy)]
#[repr(C)]
pub struct V2<T> {
    pub x: T,
    pub y: T,
}

#[device]
impl<T: DeviceScalar + Add<Output = T> + Mul<Output = T>> V2<T> {
    pub fn dot(&self, o: &V2<T>) -> T {
        self.x * o.x + self.y * o.y
    }
    pub fn map<F: Fn(T) -> T>(self, f: F) -> V2<T> {
        V2 {
            x: f(self.x),
            y: f(self.y),
        }
    }
}

#[device]
fn weighted<T: DeviceScalar + Add<Output = T> + Mul<Output = T>>(vs: [V2<T>; 3], w: T) -> T {
    let mut acc = vs[0].dot(&vs[0]);
    for k in 1..3 {
        let scaled = vs[k].map(|c| c * w);
        acc = acc + scaled.dot(&vs[0]);
    }
    acc
}

#[kernel]
fn run(a: &[V2<f64>], out: &mut [f64], b: &[V2<i32>], iout: &mut [i32]) {
    let i = global_index();
    if i + 2 < a.len() {
        let vs = [a[i], a[i + 1], a[i + 2]];
        out[i] = weighted(vs, 0.5);
        let ws = [b[i], b[i + 1], b[i + 2]];
        iout[i] = weighted(ws, 3);
    }
}

fn generic_vectors_match_the_host(s: &cudajit::Stream) {
    let a: Vec<V2<f64>> = (0..10)
        .map(|k| V2 {
            x: k as f64 * 0.5,
            y: 1.0 - k as f64,
        })
        .collect();
    let b: Vec<V2<i32>> = (0..10).map(|k| V2 { x: k - 3, y: 2 * k }).collect();
    let (da, db) = (s.clone_htod(&a).unwrap(), s.clone_htod(&b).unwrap());
    let mut o = s.alloc_zeros::<f64>(10).unwrap();
    let mut io = s.alloc_zeros::<i32>(10).unwrap();
    run::launch(s, LaunchConfig::for_elements(10), &da, &mut o, &db, &mut io).unwrap();
    let o = s.clone_dtoh(&o).unwrap();
    let io = s.clone_dtoh(&io).unwrap();
    for i in 0..8 {
        assert_eq!(o[i], weighted([a[i], a[i + 1], a[i + 2]], 0.5), "{i}");
        assert_eq!(io[i], weighted([b[i], b[i + 1], b[i + 2]], 3), "{i}");
    }
}

#[derive(Clone, Copy, Debug, PartialEq, DeviceCopy)]
#[repr(C)]
pub struct P {
    pub x: f32,
    pub y: f32,
}

#[device]
impl P {
    pub fn dot(&self, o: &P) -> f32 {
        self.x * o.x + self.y * o.y
    }
    /// Named like `Option::map`, as a user may name it.
    pub fn map<F: Fn(f32) -> f32>(self, f: F) -> P {
        P {
            x: f(self.x),
            y: f(self.y),
        }
    }
}

#[kernel]
fn mapped(a: &[P], out: &mut [f32], w: f32) {
    let i = global_index();
    if i < a.len() {
        let scaled = a[i].map(|c| c * w);
        let again = scaled.map(|c| c + 1.0);
        out[i] = again.dot(&a[i]);
    }
}

fn mapped_matches_the_host(s: &cudajit::Stream) {
    let a: Vec<P> = (0..10)
        .map(|k| P {
            x: k as f32 * 0.5,
            y: 1.0 - k as f32,
        })
        .collect();
    let da = s.clone_htod(&a).unwrap();
    let mut o = s.alloc_zeros::<f32>(10).unwrap();
    mapped::launch(s, LaunchConfig::for_elements(10), &da, &mut o, 0.5).unwrap();
    let o = s.clone_dtoh(&o).unwrap();
    for i in 0..10 {
        let want = a[i].map(|c| c * 0.5).map(|c| c + 1.0).dot(&a[i]);
        assert_eq!(o[i], want, "{i}");
    }
}

#[device]
fn det2(x: f32, y: f32) -> f32 {
    let m = [[x, 2.0], [y * 0.5, x + y]];
    let mut t: [[f32; 3]; 2] = [[1.0, 2.0, 3.0], [x, y, 6.0]];
    t[1][2] += m[1][0];
    let r = t[1];
    let mut walked = 0.0f32;
    for row in m {
        walked += row[0] * row[1];
    }
    for (k, row) in t.iter().enumerate() {
        walked += row[2] * k as f32;
    }
    m[0][0] * m[1][1] - m[0][1] * m[1][0] + r[2] + t[0][1] + walked
}

#[kernel]
fn determinants(x: &[f32], y: &mut [f32]) {
    let i = global_index();
    if i + 1 < x.len() {
        y[i] = det2(x[i], x[i + 1]);
    }
}

fn determinants_match_the_host(s: &cudajit::Stream) {
    let x: Vec<f32> = (0..8).map(|k| k as f32 * 0.75 - 1.0).collect();
    let dx = s.clone_htod(&x).unwrap();
    let mut dy = s.alloc_zeros::<f32>(8).unwrap();
    determinants::launch(s, LaunchConfig::for_elements(8), &dx, &mut dy).unwrap();
    let y = s.clone_dtoh(&dy).unwrap();
    for i in 0..7 {
        assert_eq!(y[i], det2(x[i], x[i + 1]), "{i}");
    }
}

const LUT: [u32; 8] = [1, 3, 5, 7, 11, 13, 17, 19];
const STAGES: usize = 3;

#[device]
fn pick<const N: usize>(i: usize) -> u32 {
    LUT[i % 8] * N as u32
}

#[kernel]
fn staged(y: &mut [u32]) {
    let i = global_index();
    if i < y.len() {
        y[i] = pick::<STAGES>(i) + LUT[(i * 3) % 8];
    }
}

fn staged_matches_the_host(s: &cudajit::Stream) {
    let mut dy = s.alloc_zeros::<u32>(16).unwrap();
    staged::launch(s, LaunchConfig::for_elements(16), &mut dy).unwrap();
    let y = s.clone_dtoh(&dy).unwrap();
    for (i, v) in y.iter().enumerate() {
        assert_eq!(*v, pick::<STAGES>(i) + LUT[(i * 3) % 8], "{i}");
    }
}

#[test]
fn user_programs_run_on_the_simulator() {
    let s = cudajit::Stream::simulator();
    generic_vectors_match_the_host(&s);
    mapped_matches_the_host(&s);
    determinants_match_the_host(&s);
    staged_matches_the_host(&s);
}

#[test]
fn user_programs_on_the_gpu() {
    let Ok(s) = cudajit::Stream::gpu(0) else {
        eprintln!("skipped: no GPU");
        return;
    };
    generic_vectors_match_the_host(&s);
    mapped_matches_the_host(&s);
    determinants_match_the_host(&s);
    staged_matches_the_host(&s);
}
