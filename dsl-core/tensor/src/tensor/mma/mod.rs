//! `mma.sync.aligned.m16n8kK`: a warp multiplies a 16×K A tile by a K×8 B tile and
//! accumulates into a 16×8 tile, each lane holding the registers the PTX ISA assigns it
//! ("Matrix fragments for mma.m16n8k8/k16/k32").
//!
//! | function | shape | A, B | C, D | arch |
//! | --- | --- | --- | --- | --- |
//! | [`mma_bf16`] | m16n8k16 | [`ABf16`], [`BBf16`] | [`AccF32`] | sm_80 |
//! | [`mma_f16`] | m16n8k16 | [`AHalf`], [`BHalf`] | [`AccF32`] | sm_80 |
//! | [`mma_f16_f16`] | m16n8k16 | [`AHalf`], [`BHalf`] | [`AccF16`] | sm_80 |
//! | [`mma_tf32`] | m16n8k8 | [`ATf32`], [`BTf32`] | [`AccF32`] | sm_80 |
//! | [`mma_e4m3`] | m16n8k32 | [`AE4m3`], [`BE4m3`] | [`AccF32`] | sm_89 |
//! | [`mma_e5m2`] | m16n8k32 | [`AE5m2`], [`BE5m2`] | [`AccF32`] | sm_89 |
//! | [`mma_s8`], [`mma_s8_satfinite`] | m16n8k32 | [`AS8`], [`BS8`] | [`AccS32`] | sm_80 |
//! | [`mma_u8`], [`mma_u8_satfinite`] | m16n8k32 | [`AU8`], [`BU8`] | [`AccS32`] | sm_80 |
//!
//! With `g = lane / 4` (the group), `t = lane % 4` (the thread in the group) and `p`
//! elements in a 32-bit register (two 16-bit, one tf32, four 8-bit; K = 8p):
//!
//! | fragment | register | elements (row, column) |
//! | --- | --- | --- |
//! | A (16×K, row-major) | `a0` | (g, pt .. pt+p) |
//! | | `a1` | (g+8, pt .. pt+p) |
//! | | `a2` | (g, pt+K/2 .. pt+K/2+p) |
//! | | `a3` | (g+8, pt+K/2 .. pt+K/2+p) |
//! | B (K×8, "col": k-major per column) | `b0` | (pt .. pt+p, g) |
//! | | `b1` | (pt+K/2 .. pt+K/2+p, g) |
//! | C/D f32, s32 (16×8) | `c0`, `c1` | (g, 2t), (g, 2t+1) |
//! | | `c2`, `c3` | (g+8, 2t), (g+8, 2t+1) |
//! | C/D f16 (16×8) | `c0` | (g, 2t) low half, (g, 2t+1) high half |
//! | | `c1` | (g+8, 2t), (g+8, 2t+1) |
//!
//! So for bf16/f16 `a0` is (g, 2t), (g, 2t+1); for tf32 (g, t); for 8-bit types (g, 4t ..
//! 4t+3). A register holds its elements in order, the lower-numbered in the lower bits.
//! [`crate::tensor::ldmatrix`] loads A and B fragments of every type in exactly this
//! order; [`accumulator`] maps an accumulator's (lane, element) to (row, column) and back.

mod accumulator;
mod float;
mod fragments;
mod integer;

pub use accumulator::{acc_f16_zero, acc_owner, acc_position, acc_s32_zero, acc_zero};
pub use float::{mma_bf16, mma_e4m3, mma_e5m2, mma_f16, mma_f16_f16, mma_tf32};
pub use fragments::{
    ABf16, AE4m3, AE5m2, AHalf, ATf32, AccF16, AccF32, AccS32, BBf16, BE4m3, BE5m2, BHalf, BTf32,
    AS8, AU8, BS8, BU8,
};
pub use integer::{mma_s8, mma_s8_satfinite, mma_u8, mma_u8_satfinite};
