use cudajit::prelude::*;
use std::ops::{Index, Mul};

#[derive(Clone, Copy, DeviceCopy)]
#[repr(C)]
struct Vec2 {
    x: f32,
    y: f32,
}

#[derive(Clone, Copy)]
struct Pair<T> {
    a: T,
}

trait Shape {
    fn area(&self) -> f32;
}

// A generic impl with a `where` clause.
#[device]
impl<T> Pair<T>
where
    T: Copy,
{
    fn first(self) -> T {
        self.a
    }
}

// A trait that is not `#[device]`: refused at the impl, naming the fix.
#[device]
impl Shape for Vec2 {
    fn area(&self) -> f32 {
        self.x * self.y
    }
}

// A trait object.
#[device]
impl dyn Shape {
    fn twice(&self) -> f32 {
        2.0 * self.area()
    }
}

// An index that is not an integer.
#[device]
impl Index<f32> for Vec2 {
    type Output = f32;
    fn index(&self, i: f32) -> &f32 {
        if i == 0.0 { &self.x } else { &self.y }
    }
}

// A comparison with another type.
#[device]
impl PartialEq<f32> for Vec2 {
    fn eq(&self, o: &f32) -> bool {
        self.x == *o
    }
}

// A scalar's impl of an operator that is not binary arithmetic.
#[device]
impl PartialEq<Vec2> for f32 {
    fn eq(&self, o: &Vec2) -> bool {
        *self == o.x
    }
}

// An operator with another struct on the right.
#[device]
impl Mul<Pair<f32>> for Vec2 {
    type Output = Vec2;
    fn mul(self, p: Pair<f32>) -> Vec2 {
        Vec2 { x: self.x * p.a, y: self.y * p.a }
    }
}

fn main() {}
