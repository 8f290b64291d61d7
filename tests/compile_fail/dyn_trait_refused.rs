use cudajit::prelude::*;

#[derive(Clone, Copy, DeviceCopy)]
#[repr(C)]
struct Circle {
    r: f32,
}

#[derive(Clone, Copy, DeviceCopy)]
#[repr(C)]
struct Square {
    side: f32,
}

#[device]
trait Shape {
    fn area(&self) -> f32;
}

#[device]
impl Shape for Circle {
    fn area(&self) -> f32 {
        3.0 * self.r * self.r
    }
}

#[device]
impl Shape for Square {
    fn area(&self) -> f32 {
        self.side * self.side
    }
}

// A kernel cannot take a trait object: the host has no device vtable.
#[kernel]
fn kernel_object(s: &dyn Shape, out: &mut [f32]) {
    out[0] = s.area();
}

// Nor be generic over a trait.
#[kernel]
fn kernel_impl(s: impl Shape + Copy, out: &mut [f32]) {
    out[0] = s.area();
}

// A slice of trait objects: each element would need its vtable.
#[device]
fn total(shapes: &[&dyn Shape]) -> f32 {
    shapes[0].area()
}

// A boxed trait object.
#[device]
fn boxed(s: Box<dyn Shape>) -> f32 {
    s.area()
}

// A trait object returned.
#[device]
fn pick(a: &Circle) -> Box<dyn Shape> {
    Box::new(*a)
}

// A trait object chosen at run time, and one that is mutable.
#[device]
fn chosen(c: Circle, q: Square, k: bool) -> f32 {
    let s: &dyn Shape = if k { &c } else { &q };
    let mut d = c;
    let m: &mut dyn Shape = &mut d;
    s.area() + m.area()
}

fn main() {}
