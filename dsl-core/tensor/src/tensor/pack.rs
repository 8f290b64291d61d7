//! Two 32-bit floats in one 32-bit register of two 16-bit floats, as MMA operands and
//! packed stores want them: the first argument in the low half; and f32 rounded to tf32
//! for the tf32 MMA.

use cudajit::device;
use cudajit_core::ptx;

/// `lo` and `hi` rounded to bf16 (to nearest even) in one register, `lo` in bits 0–15.
#[device]
pub fn pack_bf16x2(lo: f32, hi: f32) -> u32 {
    // `cvt.rn.bf16x2.f32 d, a, b` puts `a` in the upper half.
    ptx!(u32: "cvt.rn.bf16x2.f32 $0, $1, $2;", hi, lo)
}

/// `lo` and `hi` rounded to f16 (to nearest even) in one register, `lo` in bits 0–15.
#[device]
pub fn pack_f16x2(lo: f32, hi: f32) -> u32 {
    ptx!(u32: "cvt.rn.f16x2.f32 $0, $1, $2;", hi, lo)
}

/// `x` rounded to tf32 (10 mantissa bits, to nearest, ties away from zero), as the bit
/// pattern `mma_tf32`'s fragments hold (the low 13 bits zero).
#[device]
pub fn to_tf32(x: f32) -> u32 {
    ptx!(u32: "cvt.rna.tf32.f32 $0, $1;", x)
}
