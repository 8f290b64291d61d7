//! `mma.sync.aligned.m16n8k16`: a warp multiplies a 16×16 A tile by a 16×8 B tile and
//! accumulates into a 16×8 f32 tile, each lane holding the registers the PTX ISA assigns it.
//!
//! With `g = lane / 4` (the group) and `t = lane % 4` (the thread in the group):
//!
//! | fragment | register | elements (row, column) |
//! | --- | --- | --- |
//! | A (16×16, row-major) | `a0` | (g, 2t), (g, 2t+1) |
//! | | `a1` | (g+8, 2t), (g+8, 2t+1) |
//! | | `a2` | (g, 2t+8), (g, 2t+9) |
//! | | `a3` | (g+8, 2t+8), (g+8, 2t+9) |
//! | B (16×8, "col": k-major per column) | `b0` | (2t, g), (2t+1, g) |
//! | | `b1` | (2t+8, g), (2t+9, g) |
//! | C/D (16×8, f32) | `c0`, `c1` | (g, 2t), (g, 2t+1) |
//! | | `c2`, `c3` | (g+8, 2t), (g+8, 2t+1) |
//!
//! A 32-bit register of A or B holds two 16-bit elements, the lower-numbered one in its low
//! half. [`crate::tensor::ldmatrix`] loads A and B fragments in exactly this order.

use crate::{device, DeviceCopy};
use cudajit_core::ptx;

/// The A operand of a bf16 `m16n8k16` MMA: 16×16 bf16, eight per lane.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, DeviceCopy)]
#[repr(C)]
pub struct ABf16 {
    pub a0: u32,
    pub a1: u32,
    pub a2: u32,
    pub a3: u32,
}

/// The B operand of a bf16 `m16n8k16` MMA: 16×8 bf16, four per lane.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, DeviceCopy)]
#[repr(C)]
pub struct BBf16 {
    pub b0: u32,
    pub b1: u32,
}

/// The A operand of an f16 `m16n8k16` MMA: 16×16 f16, eight per lane.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, DeviceCopy)]
#[repr(C)]
pub struct AHalf {
    pub a0: u32,
    pub a1: u32,
    pub a2: u32,
    pub a3: u32,
}

/// The B operand of an f16 `m16n8k16` MMA: 16×8 f16, four per lane.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, DeviceCopy)]
#[repr(C)]
pub struct BHalf {
    pub b0: u32,
    pub b1: u32,
}

/// A 16×8 f32 accumulator (C and D of the MMA), four per lane.
#[derive(Clone, Copy, Debug, Default, PartialEq, DeviceCopy)]
#[repr(C)]
pub struct AccF32 {
    pub c0: f32,
    pub c1: f32,
    pub c2: f32,
    pub c3: f32,
}

/// An accumulator of zeros.
#[device]
pub fn acc_zero() -> AccF32 {
    AccF32 {
        c0: 0.0,
        c1: 0.0,
        c2: 0.0,
        c3: 0.0,
    }
}

/// `d = a · b + c` on the tensor cores, bf16 inputs, f32 accumulation. Every lane of the
/// warp calls it together (`.sync.aligned`). The [module](crate::tensor) shows a whole tile.
///
/// ```no_run
/// use cudajit::prelude::*;
/// use cudajit::tensor::ldmatrix::{load_a_bf16, load_b_bf16};
/// use cudajit::tensor::mma::{mma_bf16, AccF32};
///
/// /// One step of a warp's k loop: `acc += a_tile · b_tile` for 16-deep slices of the
/// /// tiles at these shared addresses (this lane's rows, as `ldmatrix` wants them).
/// #[device]
/// fn k_step(a_row: u32, b_column: u32, acc: AccF32) -> AccF32 {
///     mma_bf16(load_a_bf16(a_row), load_b_bf16(b_column), acc)
/// }
/// # fn main() {}
/// ```
#[device]
pub fn mma_bf16(a: ABf16, b: BBf16, c: AccF32) -> AccF32 {
    let (d0, d1, d2, d3) = ptx!((f32, f32, f32, f32): "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {$0, $1, $2, $3}, {$4, $5, $6, $7}, {$8, $9}, {$10, $11, $12, $13};",
        a.a0, a.a1, a.a2, a.a3, b.b0, b.b1, c.c0, c.c1, c.c2, c.c3);
    AccF32 {
        c0: d0,
        c1: d1,
        c2: d2,
        c3: d3,
    }
}

/// `d = a · b + c` on the tensor cores, f16 inputs, f32 accumulation.
#[device]
pub fn mma_f16(a: AHalf, b: BHalf, c: AccF32) -> AccF32 {
    let (d0, d1, d2, d3) = ptx!((f32, f32, f32, f32): "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {$0, $1, $2, $3}, {$4, $5, $6, $7}, {$8, $9}, {$10, $11, $12, $13};",
        a.a0, a.a1, a.a2, a.a3, b.b0, b.b1, c.c0, c.c1, c.c2, c.c3);
    AccF32 {
        c0: d0,
        c1: d1,
        c2: d2,
        c3: d3,
    }
}
