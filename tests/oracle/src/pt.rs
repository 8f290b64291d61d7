//! The struct every generated program may use, with methods (`self`, `&self`, `&mut self`,
//! an associated function) and an operator, written once and compiled both ways: as
//! `#[device]` code by cudajit, as ordinary Rust by rustc.

use cudajit::prelude::*;
use std::ops::Add;

#[derive(Clone, Copy, Debug, PartialEq, DeviceCopy)]
#[repr(C)]
pub struct Pt {
    pub a: i32,
    pub b: f32,
}

#[device]
impl Pt {
    pub fn new(a: i32, b: f32) -> Pt {
        Pt { a, b }
    }

    pub fn norm1(&self) -> f32 {
        self.a as f32 + self.b
    }

    pub fn key(&self) -> i64 {
        (self.a as i64).wrapping_mul(3) ^ (self.b as i64)
    }

    pub fn mix(self, other: Pt) -> Pt {
        Pt {
            a: self.a ^ other.a.rotate_left(3),
            b: self.b - other.b,
        }
    }

    pub fn scaled(self, k: i32) -> Pt {
        Pt::new(self.a.wrapping_mul(k), self.b * k as f32)
    }

    /// A product of two points, the other by reference: `p.dot(&q)`, `Pt::dot(&p, &q)`.
    pub fn dot(&self, other: &Pt) -> f32 {
        self.a as f32 * other.b - self.b * other.a as f32
    }

    pub fn bump(&mut self, k: i32) {
        self.a = self.a.wrapping_add(k);
        self.b += 1.0;
    }
}

#[device]
impl Add for Pt {
    type Output = Pt;
    fn add(self, other: Pt) -> Pt {
        Pt::new(self.a.wrapping_add(other.a), self.b + other.b)
    }
}
