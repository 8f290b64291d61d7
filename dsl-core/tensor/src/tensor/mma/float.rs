//! The floating-point MMAs: bf16, f16, tf32 and FP8 inputs into f32 accumulators, and f16
//! inputs into f16 accumulators. Every lane of the warp calls them together
//! (`.sync.aligned`); each is one `mma.sync` instruction with its fragments in registers.

use super::fragments::{
    ABf16, AE4m3, AE5m2, AHalf, ATf32, AccF16, AccF32, BBf16, BE4m3, BE5m2, BHalf, BTf32,
};
use cudajit::device;
use cudajit_core::ptx;

/// `d = a · b + c` on the tensor cores, bf16 inputs, f32 accumulation. The
/// [module](crate::tensor) shows a whole tile.
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

/// `d = a · b + c` on the tensor cores, f16 inputs, f16 accumulation (half the
/// accumulator registers of [`mma_f16`], and f16's 11 significant bits in every sum).
#[device]
pub fn mma_f16_f16(a: AHalf, b: BHalf, c: AccF16) -> AccF16 {
    let (d0, d1) = ptx!((u32, u32): "mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16 {$0, $1}, {$2, $3, $4, $5}, {$6, $7}, {$8, $9};",
        a.a0, a.a1, a.a2, a.a3, b.b0, b.b1, c.c0, c.c1);
    AccF16 { c0: d0, c1: d1 }
}

/// `d = a · b + c` on the tensor cores, `m16n8k8`, tf32 inputs (f32 bit patterns of which
/// the tensor cores read sign, exponent and the top 10 mantissa bits: round them with
/// [`crate::tensor::pack::to_tf32`]), f32 accumulation.
#[device]
pub fn mma_tf32(a: ATf32, b: BTf32, c: AccF32) -> AccF32 {
    let (d0, d1, d2, d3) = ptx!((f32, f32, f32, f32): "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {$0, $1, $2, $3}, {$4, $5, $6, $7}, {$8, $9}, {$10, $11, $12, $13};",
        a.a0, a.a1, a.a2, a.a3, b.b0, b.b1, c.c0, c.c1, c.c2, c.c3);
    AccF32 {
        c0: d0,
        c1: d1,
        c2: d2,
        c3: d3,
    }
}

/// `d = a · b + c` on the tensor cores, `m16n8k32`, FP8 e4m3 inputs, f32 accumulation
/// (sm_89 and newer).
#[device]
pub fn mma_e4m3(a: AE4m3, b: BE4m3, c: AccF32) -> AccF32 {
    let (d0, d1, d2, d3) = ptx!((f32, f32, f32, f32): "mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32 {$0, $1, $2, $3}, {$4, $5, $6, $7}, {$8, $9}, {$10, $11, $12, $13};",
        a.a0, a.a1, a.a2, a.a3, b.b0, b.b1, c.c0, c.c1, c.c2, c.c3);
    AccF32 {
        c0: d0,
        c1: d1,
        c2: d2,
        c3: d3,
    }
}

/// `d = a · b + c` on the tensor cores, `m16n8k32`, FP8 e5m2 inputs, f32 accumulation
/// (sm_89 and newer).
#[device]
pub fn mma_e5m2(a: AE5m2, b: BE5m2, c: AccF32) -> AccF32 {
    let (d0, d1, d2, d3) = ptx!((f32, f32, f32, f32): "mma.sync.aligned.m16n8k32.row.col.f32.e5m2.e5m2.f32 {$0, $1, $2, $3}, {$4, $5, $6, $7}, {$8, $9}, {$10, $11, $12, $13};",
        a.a0, a.a1, a.a2, a.a3, b.b0, b.b1, c.c0, c.c1, c.c2, c.c3);
    AccF32 {
        c0: d0,
        c1: d1,
        c2: d2,
        c3: d3,
    }
}
