use cudajit::prelude::*;

#[derive(Clone, Copy, DeviceCopy)]
#[repr(C)]
struct Duo<T> {
    a: T,
    b: T,
}

// An impl for one instance: refused, naming the generic block to write.
#[device]
impl Duo<f32> {
    fn first(&self) -> f32 {
        self.a
    }
}

// An associated constant of a generic block.
#[device]
impl<T: DeviceScalar> Duo<T> {
    const TWO: u32 = 2;
    fn second(&self) -> T {
        self.b
    }
}

#[device]
trait Kind {
    type Out;
    fn kind(&self) -> u32;
}

// An associated type naming the block's parameter.
#[device]
impl<T: DeviceScalar> Kind for Duo<T> {
    type Out = T;
    fn kind(&self) -> u32 {
        1
    }
}

// A lifetime parameter and a `bool` constant on a `DeviceCopy` struct.
#[derive(Clone, Copy, DeviceCopy)]
#[repr(C)]
struct Borrowed<'a, const FLAG: bool> {
    x: &'a f32,
}

fn main() {}
