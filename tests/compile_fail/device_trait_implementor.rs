use cudajit::prelude::*;

#[device]
trait Shape {
    fn area(&self) -> f32;
}

// A `#[device]` trait's implementors are types kernels hold: `DeviceCopy` ones.
struct Polygon {
    points: Vec<f32>,
}

impl Shape for Polygon {
    fn area(&self) -> f32 {
        self.points.iter().sum()
    }
}

fn main() {}
