//! The integer MMAs, `m16n8k32` s8 and u8 inputs into s32 accumulators: exact products
//! and sums, the result wrapping to 32 bits or, with `.satfinite`, clamped to `i32`'s
//! range. Every lane of the warp calls them together (`.sync.aligned`).

use super::fragments::{AccS32, AS8, AU8, BS8, BU8};
use cudajit::device;
use cudajit_core::ptx;

/// `d = a · b + c`, s8 inputs, s32 accumulation wrapping on overflow.
#[device]
pub fn mma_s8(a: AS8, b: BS8, c: AccS32) -> AccS32 {
    let (d0, d1, d2, d3) = ptx!((i32, i32, i32, i32): "mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 {$0, $1, $2, $3}, {$4, $5, $6, $7}, {$8, $9}, {$10, $11, $12, $13};",
        a.a0, a.a1, a.a2, a.a3, b.b0, b.b1, c.c0, c.c1, c.c2, c.c3);
    AccS32 {
        c0: d0,
        c1: d1,
        c2: d2,
        c3: d3,
    }
}

/// `d = a · b + c`, s8 inputs, s32 accumulation clamped to `i32::MIN..=i32::MAX`.
#[device]
pub fn mma_s8_satfinite(a: AS8, b: BS8, c: AccS32) -> AccS32 {
    let (d0, d1, d2, d3) = ptx!((i32, i32, i32, i32): "mma.sync.aligned.m16n8k32.row.col.satfinite.s32.s8.s8.s32 {$0, $1, $2, $3}, {$4, $5, $6, $7}, {$8, $9}, {$10, $11, $12, $13};",
        a.a0, a.a1, a.a2, a.a3, b.b0, b.b1, c.c0, c.c1, c.c2, c.c3);
    AccS32 {
        c0: d0,
        c1: d1,
        c2: d2,
        c3: d3,
    }
}

/// `d = a · b + c`, u8 inputs, s32 accumulation wrapping on overflow.
#[device]
pub fn mma_u8(a: AU8, b: BU8, c: AccS32) -> AccS32 {
    let (d0, d1, d2, d3) = ptx!((i32, i32, i32, i32): "mma.sync.aligned.m16n8k32.row.col.s32.u8.u8.s32 {$0, $1, $2, $3}, {$4, $5, $6, $7}, {$8, $9}, {$10, $11, $12, $13};",
        a.a0, a.a1, a.a2, a.a3, b.b0, b.b1, c.c0, c.c1, c.c2, c.c3);
    AccS32 {
        c0: d0,
        c1: d1,
        c2: d2,
        c3: d3,
    }
}

/// `d = a · b + c`, u8 inputs, s32 accumulation clamped to `i32::MIN..=i32::MAX`.
#[device]
pub fn mma_u8_satfinite(a: AU8, b: BU8, c: AccS32) -> AccS32 {
    let (d0, d1, d2, d3) = ptx!((i32, i32, i32, i32): "mma.sync.aligned.m16n8k32.row.col.satfinite.s32.u8.u8.s32 {$0, $1, $2, $3}, {$4, $5, $6, $7}, {$8, $9}, {$10, $11, $12, $13};",
        a.a0, a.a1, a.a2, a.a3, b.b0, b.b1, c.c0, c.c1, c.c2, c.c3);
    AccS32 {
        c0: d0,
        c1: d1,
        c2: d2,
        c3: d3,
    }
}
