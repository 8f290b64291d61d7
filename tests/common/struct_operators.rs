//! Kernels of the struct operators that need more than a call of a by-value method: a
//! scalar on the left (`2.0 * v`, `impl Mul<V3> for f32`), `==`/`!=` (`impl PartialEq`),
//! `v[i]` read and written through `Index`/`IndexMut` (a `match` over fields, and an array
//! field's element), and slices of structs passed to `#[device]` functions (`&[Body]`,
//! `&mut [Body]`). The host runs the same impls for the expected values:
//! `tests/struct_operators.rs` runs the kernels on the simulator and the GPU and checks the
//! PTX; `tests/differential.rs` compares the two.
#![allow(dead_code)]

use std::ops::{Add, Index, IndexMut, Mul};

use cudajit::prelude::*;
use cudajit::{Error, Stream};

use super::cases::{Output, Outputs, Tolerance, Values};

#[derive(Clone, Copy, Debug, DeviceCopy)]
#[repr(C)]
pub struct V3 {
    pub x: f32,
    pub y: f32,
    pub z: f32,
}

#[device]
impl V3 {
    pub fn new(x: f32, y: f32, z: f32) -> V3 {
        V3 { x, y, z }
    }

    pub fn dot(&self, o: V3) -> f32 {
        self.x * o.x + self.y * o.y + self.z * o.z
    }

    pub fn length(&self) -> f32 {
        self.dot(*self).sqrt()
    }

    /// `&mut self`, and `self[k]` of the struct's own `Index`/`IndexMut` in a method.
    pub fn normalize(&mut self) {
        let length = self.length();
        if length > 0.0 {
            for k in 0..3 {
                self[k] /= length;
            }
        }
    }

    pub fn largest(&self) -> f32 {
        let mut largest = self[0];
        for k in 1..3 {
            largest = largest.max(self[k]);
        }
        largest
    }
}

#[device]
impl Add for V3 {
    type Output = V3;
    fn add(self, o: V3) -> V3 {
        V3 {
            x: self.x + o.x,
            y: self.y + o.y,
            z: self.z + o.z,
        }
    }
}

/// `2.0 * v`: the scalar's impl, with the struct on the right.
#[device]
impl Mul<V3> for f32 {
    type Output = V3;
    fn mul(self, v: V3) -> V3 {
        V3 {
            x: self * v.x,
            y: self * v.y,
            z: self * v.z,
        }
    }
}

#[device]
impl PartialEq for V3 {
    fn eq(&self, o: &V3) -> bool {
        self.x == o.x && self.y == o.y && self.z == o.z
    }
}

/// The fields by number, as CUDA C++'s `float& operator[](int)` over `x`, `y`, `z`.
#[device]
impl Index<usize> for V3 {
    type Output = f32;
    fn index(&self, i: usize) -> &f32 {
        match i {
            0 => &self.x,
            1 => &self.y,
            _ => &self.z,
        }
    }
}

#[device]
impl IndexMut<usize> for V3 {
    fn index_mut(&mut self, i: usize) -> &mut f32 {
        match i {
            0 => &mut self.x,
            1 => &mut self.y,
            _ => &mut self.z,
        }
    }
}

/// The common form: an array field's element.
#[derive(Clone, Copy, Debug, DeviceCopy)]
#[repr(C)]
pub struct Row {
    pub data: [f32; 4],
}

#[device]
impl Index<usize> for Row {
    type Output = f32;
    fn index(&self, i: usize) -> &f32 {
        &self.data[i]
    }
}

#[device]
impl IndexMut<usize> for Row {
    fn index_mut(&mut self, i: usize) -> &mut f32 {
        &mut self.data[i]
    }
}

/// `ne` written by the impl (not `!eq`): `!=` calls it.
#[derive(Clone, Copy, Debug, DeviceCopy)]
#[repr(C)]
pub struct Cell {
    pub key: u32,
    pub weight: f32,
}

#[device]
impl PartialEq for Cell {
    fn eq(&self, o: &Cell) -> bool {
        self.key == o.key
    }
    #[allow(clippy::partialeq_ne_impl)]
    fn ne(&self, o: &Cell) -> bool {
        self.key != o.key
    }
}

#[derive(Clone, Copy, Debug, PartialEq, DeviceCopy)]
#[repr(C)]
pub struct Body {
    pub x: f32,
    pub v: f32,
    pub mass: f32,
}

/// A slice of structs as a `#[device]` parameter, read.
#[device]
pub fn energy(bodies: &[Body]) -> f32 {
    let mut e = 0.0f32;
    for k in 0..bodies.len() {
        e += 0.5 * bodies[k].mass * bodies[k].v * bodies[k].v;
    }
    e
}

/// ... written, and passed on.
#[device]
pub fn drift(bodies: &mut [Body], k: usize, dt: f32) {
    bodies[k].x += bodies[k].v * dt;
}

#[device]
pub fn step(bodies: &mut [Body], k: usize, dt: f32) -> f32 {
    drift(bodies, k, dt);
    bodies[k].x
}

/// Outputs per element of [`struct_operators`].
pub const PER_ELEMENT: usize = 11;

#[kernel]
pub fn struct_operators(xs: &[V3], cells: &[Cell], out: &mut [f32]) {
    let i = global_index();
    if i + 1 < xs.len() {
        let o = PER_ELEMENT * i;
        let a = 2.0 * xs[i] + 0.5f32 * xs[i + 1];
        let mut b = xs[i + 1];
        b[1] = a[2] - 1.0;
        b[2] += a[0];
        b[i % 3] *= 3.0;
        let mut row = Row { data: [0.0; 4] };
        for k in 0..4 {
            row[k] = k as f32 + a[k % 3];
        }
        row[3] *= 2.0;
        row[1] -= 1.0;
        out[o] = a[0] + a[1] + a[2];
        out[o + 1] = b[0] + b[1] * 10.0 + b[2] * 100.0;
        out[o + 2] = row[0] + row[1] + row[2] + row[3] + row[1] * row[3];
        out[o + 3] = if xs[i] == xs[i + 1] { 1.0 } else { 0.0 };
        out[o + 4] = if a != b { 1.0 } else { 0.0 };
        out[o + 5] = if cells[i] == cells[i + 1] { 1.0 } else { 0.0 };
        out[o + 6] = if cells[i] != cells[i + 1] { 1.0 } else { 0.0 };
        out[o + 7] = xs[i][i % 3];
        // Methods, and indexing an element of an array of structs.
        let mut pair = [V3::new(1.0, 2.0, 2.0), b];
        pair[1].normalize();
        pair[0][i % 3] += a.dot(b);
        out[o + 8] = pair[0].length() + pair[1][0];
        out[o + 9] = pair[1].largest() + pair[0].largest();
        out[o + 10] = pair[1][2];
    }
}

/// The host's `struct_operators`: the same impls, run by rustc's code.
pub fn struct_operators_on_host(xs: &[V3], cells: &[Cell], out: &mut [f32]) {
    for i in 0..xs.len().saturating_sub(1) {
        let o = PER_ELEMENT * i;
        let a = 2.0 * xs[i] + 0.5f32 * xs[i + 1];
        let mut b = xs[i + 1];
        b[1] = a[2] - 1.0;
        b[2] += a[0];
        b[i % 3] *= 3.0;
        let mut row = Row { data: [0.0; 4] };
        for k in 0..4 {
            row[k] = k as f32 + a[k % 3];
        }
        row[3] *= 2.0;
        row[1] -= 1.0;
        out[o] = a[0] + a[1] + a[2];
        out[o + 1] = b[0] + b[1] * 10.0 + b[2] * 100.0;
        out[o + 2] = row[0] + row[1] + row[2] + row[3] + row[1] * row[3];
        out[o + 3] = if xs[i] == xs[i + 1] { 1.0 } else { 0.0 };
        out[o + 4] = if a != b { 1.0 } else { 0.0 };
        out[o + 5] = if cells[i] == cells[i + 1] { 1.0 } else { 0.0 };
        out[o + 6] = if cells[i] != cells[i + 1] { 1.0 } else { 0.0 };
        out[o + 7] = xs[i][i % 3];
        // Methods, and indexing an element of an array of structs.
        let mut pair = [V3::new(1.0, 2.0, 2.0), b];
        pair[1].normalize();
        pair[0][i % 3] += a.dot(b);
        out[o + 8] = pair[0].length() + pair[1][0];
        out[o + 9] = pair[1].largest() + pair[0].largest();
        out[o + 10] = pair[1][2];
    }
}

/// Each thread moves its body and reads back the energy of all of them.
#[kernel]
pub fn body_slices(dt: f32, bodies: &mut [Body], out: &mut [f32]) {
    let i = global_index();
    if i < bodies.len() {
        out[2 * i] = step(bodies, i, dt);
        out[2 * i + 1] = energy(bodies);
    }
}

pub fn body_slices_on_host(dt: f32, bodies: &mut [Body], out: &mut [f32]) {
    for i in 0..bodies.len() {
        out[2 * i] = step(bodies, i, dt);
        out[2 * i + 1] = energy(bodies);
    }
}

/// Inputs: every fourth pair equal (`==` true), cells with equal keys but different
/// weights (their `eq` ignores the weight).
pub fn inputs(n: usize) -> (Vec<V3>, Vec<Cell>) {
    let xs = (0..n)
        .map(|i| {
            let j = if i % 4 == 1 { i - 1 } else { i };
            V3 {
                x: j as f32 * 0.5 - 3.0,
                y: (j % 7) as f32,
                z: 1.0 - (j % 3) as f32 * 0.25,
            }
        })
        .collect();
    let cells = (0..n)
        .map(|i| Cell {
            key: (i / 3) as u32,
            weight: i as f32,
        })
        .collect();
    (xs, cells)
}

/// The bodies of [`body_slices`]: speeds that make the energy a sum of exact products.
pub fn bodies(n: usize) -> Vec<Body> {
    (0..n)
        .map(|i| Body {
            x: i as f32,
            v: (i % 5) as f32 - 2.0,
            mass: 1.0 + (i % 3) as f32,
        })
        .collect()
}

pub fn run_struct_operators(stream: &Stream, n: usize) -> Result<Vec<f32>, Error> {
    let (xs, cells) = inputs(n);
    let dxs = stream.clone_htod(&xs)?;
    let dcells = stream.clone_htod(&cells)?;
    let mut dout = stream.alloc_zeros::<f32>(PER_ELEMENT * n)?;
    struct_operators::launch(
        stream,
        LaunchConfig::for_elements(n),
        &dxs,
        &dcells,
        &mut dout,
    )?;
    stream.clone_dtoh(&dout)
}

/// Each thread writes only its body's `x`; `energy` reads the speeds and masses, which no
/// thread writes, so the result does not depend on the threads' order.
pub fn run_body_slices(stream: &Stream, n: usize) -> Result<(Vec<Body>, Vec<f32>), Error> {
    let mut dbodies = stream.clone_htod(&bodies(n))?;
    let mut dout = stream.alloc_zeros::<f32>(2 * n)?;
    body_slices::launch(
        stream,
        LaunchConfig::for_elements(n),
        0.25,
        &mut dbodies,
        &mut dout,
    )?;
    Ok((stream.clone_dtoh(&dbodies)?, stream.clone_dtoh(&dout)?))
}

/// The differential case: the simulator and the GPU agree bit for bit (no libdevice, no
/// contraction under `CUDAJIT_FMA=0`).
pub fn struct_operators_case(stream: &Stream) -> Result<Outputs, Error> {
    let out = run_struct_operators(stream, 257)?;
    let (bodies, energies) = run_body_slices(stream, 100)?;
    Ok(vec![
        Output {
            name: "struct operators".into(),
            values: Values::F32(out),
            tolerance: Tolerance::Exact,
        },
        Output {
            name: "bodies moved through &mut [Body]".into(),
            values: Values::F32(bodies.iter().map(|b| b.x).collect()),
            tolerance: Tolerance::Exact,
        },
        Output {
            name: "energy over &[Body]".into(),
            values: Values::F32(energies),
            tolerance: Tolerance::Exact,
        },
    ])
}
