// The expressions, statements and items of docs/language.md's conformance table that
// kernels refuse (its "no" rows; tests/conformance.rs checks that each has its error here).
use cudajit::prelude::*;

#[derive(Clone, Copy, DeviceCopy)]
#[repr(C)]
pub struct Pair {
    pub a: f32,
    pub b: u32,
}

#[device]
pub trait Shape {
    fn area(&self) -> f32;
    fn unit() -> Self;
    fn weighted(&self, k: f32) -> f32 {
        self.area() * k
    }
}

#[device]
pub trait Measure {
    fn size(&self) -> f32;
}

#[device]
impl Measure for Square {
    fn size(&self) -> f32 {
        self.side
    }
}

#[derive(Clone, Copy, DeviceCopy)]
#[repr(C)]
pub struct Square {
    pub side: f32,
}

#[device]
impl Shape for Square {
    fn area(&self) -> f32 {
        self.side * self.side
    }
    fn unit() -> Square {
        Square { side: 1.0 }
    }
}

#[device]
fn underscore_assignment(v: f32) -> f32 {
    _ = v * 2.0;
    v
}

#[device]
fn struct_assignment(p: Pair) -> f32 {
    let (mut a, mut b) = (0.0f32, 0u32);
    Pair { a, b } = p;
    a + b as f32
}

#[device]
fn default_value(v: f32) -> f32 {
    let zero: f32 = Default::default();
    v + zero
}

#[device]
fn standard_trait_path(a: u32, b: u32) -> u32 {
    Ord::min(a, b)
}

#[device]
fn char_literal(v: u32) -> u32 {
    v + 'a' as u32
}

#[device]
fn match_on_tuple(a: u32, b: u32) -> u32 {
    match (a, b) {
        (0, 0) => 1,
        _ => 2,
    }
}

#[device]
fn function_value(v: f32) -> f32 {
    let f = f32::sqrt;
    f(v)
}

#[device]
fn const_block(v: u32) -> u32 {
    v + const { 3 + 4 }
}

#[device]
fn matches_macro(v: u32) -> bool {
    matches!(v, 1..=3)
}

#[device]
fn mem_swap(v: f32) -> f32 {
    let mut a = v;
    let mut b = 1.0f32;
    core::mem::swap(&mut a, &mut b);
    a
}

#[device]
fn cmp_max(v: u32) -> u32 {
    core::cmp::max(v, 4)
}

#[device]
fn try_from_conversion(v: u64) -> u32 {
    u32::try_from(v).unwrap_or(0)
}

#[kernel]
fn scalar_reference(acc: &mut f32, v: f32) {
    *acc += v;
}

#[device]
fn bool_reference(flag: &mut bool, v: f32) {
    *flag = v > 0.0;
}

#[device]
fn inferred_type(v: f32) -> f32 {
    let w: _ = v;
    w
}

#[device]
fn use_in_body(v: f32) -> f32 {
    use core::f32::consts::PI;
    PI * v
}

#[device]
fn result_value(v: f32) -> Result<f32, u32> {
    if v > 0.0 {
        Ok(v)
    } else {
        Err(1)
    }
}

#[device]
fn trait_static_function<S: Shape>(k: f32) -> f32 {
    S::unit().area() * k
}

#[device]
fn dyn_trait(s: Square, t: Square, k: bool) -> f32 {
    let d: &dyn Measure = if k { &s } else { &t };
    d.size()
}

fn main() {}
