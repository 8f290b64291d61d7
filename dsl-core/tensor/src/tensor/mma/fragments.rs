//! The fragments of `mma.sync.aligned.m16n8kK`: one struct per shape, role (A, B, C/D)
//! and element type, each holding exactly the 32-bit registers the PTX ISA gives one lane
//! ([the module](super) has the layouts). Distinct types, so rustc rejects a B fragment
//! passed as A, or bf16 where f16 is expected; the fields are the registers in the order
//! the instruction takes them.

use cudajit::DeviceCopy;

/// The A operand of a bf16 `m16n8k16` MMA: 16×16 bf16, eight per lane, two a register.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, DeviceCopy)]
#[repr(C)]
pub struct ABf16 {
    pub a0: u32,
    pub a1: u32,
    pub a2: u32,
    pub a3: u32,
}

/// The B operand of a bf16 `m16n8k16` MMA: 16×8 bf16, four per lane, two a register.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, DeviceCopy)]
#[repr(C)]
pub struct BBf16 {
    pub b0: u32,
    pub b1: u32,
}

/// The A operand of a f16 `m16n8k16` MMA: 16×16 f16, eight per lane, two a register.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, DeviceCopy)]
#[repr(C)]
pub struct AHalf {
    pub a0: u32,
    pub a1: u32,
    pub a2: u32,
    pub a3: u32,
}

/// The B operand of a f16 `m16n8k16` MMA: 16×8 f16, four per lane, two a register.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, DeviceCopy)]
#[repr(C)]
pub struct BHalf {
    pub b0: u32,
    pub b1: u32,
}

/// The A operand of a tf32 `m16n8k8` MMA: 16×8 tf32, four per lane, one a register (an f32 bit pattern of which the MMA reads the top 19 bits: round with `to_tf32`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, DeviceCopy)]
#[repr(C)]
pub struct ATf32 {
    pub a0: u32,
    pub a1: u32,
    pub a2: u32,
    pub a3: u32,
}

/// The B operand of a tf32 `m16n8k8` MMA: 8×8 tf32, two per lane, one a register.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, DeviceCopy)]
#[repr(C)]
pub struct BTf32 {
    pub b0: u32,
    pub b1: u32,
}

/// The A operand of a FP8 e4m3 `m16n8k32` MMA: 16×32 FP8 e4m3, sixteen per lane, four a register.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, DeviceCopy)]
#[repr(C)]
pub struct AE4m3 {
    pub a0: u32,
    pub a1: u32,
    pub a2: u32,
    pub a3: u32,
}

/// The B operand of a FP8 e4m3 `m16n8k32` MMA: 32×8 FP8 e4m3, eight per lane, four a register.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, DeviceCopy)]
#[repr(C)]
pub struct BE4m3 {
    pub b0: u32,
    pub b1: u32,
}

/// The A operand of a FP8 e5m2 `m16n8k32` MMA: 16×32 FP8 e5m2, sixteen per lane, four a register.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, DeviceCopy)]
#[repr(C)]
pub struct AE5m2 {
    pub a0: u32,
    pub a1: u32,
    pub a2: u32,
    pub a3: u32,
}

/// The B operand of a FP8 e5m2 `m16n8k32` MMA: 32×8 FP8 e5m2, eight per lane, four a register.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, DeviceCopy)]
#[repr(C)]
pub struct BE5m2 {
    pub b0: u32,
    pub b1: u32,
}

/// The A operand of a s8 `m16n8k32` MMA: 16×32 s8, sixteen per lane, four a register.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, DeviceCopy)]
#[repr(C)]
pub struct AS8 {
    pub a0: u32,
    pub a1: u32,
    pub a2: u32,
    pub a3: u32,
}

/// The B operand of a s8 `m16n8k32` MMA: 32×8 s8, eight per lane, four a register.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, DeviceCopy)]
#[repr(C)]
pub struct BS8 {
    pub b0: u32,
    pub b1: u32,
}

/// The A operand of a u8 `m16n8k32` MMA: 16×32 u8, sixteen per lane, four a register.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, DeviceCopy)]
#[repr(C)]
pub struct AU8 {
    pub a0: u32,
    pub a1: u32,
    pub a2: u32,
    pub a3: u32,
}

/// The B operand of a u8 `m16n8k32` MMA: 32×8 u8, eight per lane, four a register.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, DeviceCopy)]
#[repr(C)]
pub struct BU8 {
    pub b0: u32,
    pub b1: u32,
}

/// A 16×8 f32 accumulator (C and D of every MMA with f32 results), four per lane.
#[derive(Clone, Copy, Debug, Default, PartialEq, DeviceCopy)]
#[repr(C)]
pub struct AccF32 {
    pub c0: f32,
    pub c1: f32,
    pub c2: f32,
    pub c3: f32,
}

/// A 16×8 f16 accumulator (`m16n8k16` with f16 accumulation), four per lane as two
/// `f16x2` registers: `c0` holds (g, 2t) in its low half and (g, 2t+1) in its high half,
/// `c1` the same columns of row g+8 — ready to store as packed pairs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, DeviceCopy)]
#[repr(C)]
pub struct AccF16 {
    pub c0: u32,
    pub c1: u32,
}

/// A 16×8 s32 accumulator (the s8 and u8 MMAs), four per lane.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, DeviceCopy)]
#[repr(C)]
pub struct AccS32 {
    pub c0: i32,
    pub c1: i32,
    pub c2: i32,
    pub c3: i32,
}
