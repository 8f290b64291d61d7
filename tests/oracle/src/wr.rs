//! The tuple struct every generated program may use, with a method, written once and
//! compiled both ways: as `#[device]` code by cudajit, as ordinary Rust by rustc.

use cudajit::prelude::*;

#[derive(Clone, Copy, Debug, PartialEq, DeviceCopy)]
#[repr(C)]
pub struct Wr(pub i32, pub f32);

#[device]
impl Wr {
    /// Both fields as one `f32`.
    pub fn total(&self) -> f32 {
        self.0 as f32 + self.1
    }
}
