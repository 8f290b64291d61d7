//! `ldmatrix.sync.aligned.m8n8`: each lane gives the shared-memory address of one 16-byte
//! row of an 8×8 matrix of 16-bit elements (lanes 0–7 the rows of matrix 0, 8–15 of matrix
//! 1, …), and every lane receives its part of each matrix in the MMA fragment layout (lane
//! `l` holds row `l / 4`, elements `2(l % 4)` and `2(l % 4) + 1`). `.trans` delivers the
//! transpose, so a k-major (row-major B) tile loads as a B fragment.
//!
//! Addresses are `.shared` addresses (`shared_address(&tile[i])`), 16-byte aligned. Every
//! lane of the warp calls these together.
//!
//! The fragment loaders work in bytes, the same for every element type, because a
//! fragment's 32-bit register is always 4 consecutive bytes of one row (A) or column (B):
//! for A (row-major, 16 rows of 32 bytes: 16 bf16/f16, 8 tf32 or 32 8-bit elements) lane
//! `l` gives row `l % 16` at byte `16 (l / 16)`; for B (stored column by column, each of
//! the 8 columns 32 bytes of k) lanes 0–7 give column `l` at byte 0 and lanes 8–15 the
//! same columns at byte 16. `.trans` loaders exist for 16-bit elements only (`ldmatrix`
//! transposes 16-bit elements).

use super::mma::{
    ABf16, AE4m3, AE5m2, AHalf, ATf32, BBf16, BE4m3, BE5m2, BHalf, BTf32, AS8, AU8, BS8, BU8,
};
use cudajit::device;
use cudajit_core::ptx;

/// Four 8×8 matrices: register `i` holds this lane's part of matrix `i`.
#[device]
pub fn ldmatrix_x4(address: u32) -> (u32, u32, u32, u32) {
    let (r0, r1, r2, r3) = ptx!((u32, u32, u32, u32): "ldmatrix.sync.aligned.m8n8.x4.shared.b16 {$0, $1, $2, $3}, [$4];", address);
    (r0, r1, r2, r3)
}

/// Four 8×8 matrices, each transposed.
#[device]
pub fn ldmatrix_x4_trans(address: u32) -> (u32, u32, u32, u32) {
    let (r0, r1, r2, r3) = ptx!((u32, u32, u32, u32): "ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {$0, $1, $2, $3}, [$4];", address);
    (r0, r1, r2, r3)
}

/// Two 8×8 matrices (lanes 0–15 give the rows).
#[device]
pub fn ldmatrix_x2(address: u32) -> (u32, u32) {
    let (r0, r1) =
        ptx!((u32, u32): "ldmatrix.sync.aligned.m8n8.x2.shared.b16 {$0, $1}, [$2];", address);
    (r0, r1)
}

/// Two 8×8 matrices, each transposed.
#[device]
pub fn ldmatrix_x2_trans(address: u32) -> (u32, u32) {
    let (r0, r1) =
        ptx!((u32, u32): "ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {$0, $1}, [$2];", address);
    (r0, r1)
}

/// One 8×8 matrix (lanes 0–7 give the rows).
#[device]
pub fn ldmatrix_x1(address: u32) -> u32 {
    ptx!(u32: "ldmatrix.sync.aligned.m8n8.x1.shared.b16 {$0}, [$1];", address)
}

/// One 8×8 matrix, transposed.
#[device]
pub fn ldmatrix_x1_trans(address: u32) -> u32 {
    ptx!(u32: "ldmatrix.sync.aligned.m8n8.x1.trans.shared.b16 {$0}, [$1];", address)
}

/// A bf16 A fragment from a row-major 16×16 tile: lane `l` gives the address of row
/// `l % 16`, columns `8 (l / 16) ..` (matrices: rows 0–7 and 8–15 of columns 0–7, then of
/// columns 8–15 — the order of `a0..a3`).
#[device]
pub fn load_a_bf16(address: u32) -> ABf16 {
    let (a0, a1, a2, a3) = ldmatrix_x4(address);
    ABf16 { a0, a1, a2, a3 }
}

/// An f16 A fragment, as [`load_a_bf16`].
#[device]
pub fn load_a_f16(address: u32) -> AHalf {
    let (a0, a1, a2, a3) = ldmatrix_x4(address);
    AHalf { a0, a1, a2, a3 }
}

/// A bf16 B fragment from a tile stored column by column (each column's 16 k values
/// contiguous, "col" B): lanes 0–7 give the addresses of columns 0–7 at k `0..8`, lanes
/// 8–15 the same columns at k `8..16` (lanes 16–31 are ignored). For two adjacent
/// fragments in one instruction use [`ldmatrix_x4`]: its registers are `b0, b1` of
/// columns `0..8` then of columns `8..16` when lanes 16–31 give columns 8–15.
#[device]
pub fn load_b_bf16(address: u32) -> BBf16 {
    let (b0, b1) = ldmatrix_x2(address);
    BBf16 { b0, b1 }
}

/// A bf16 B fragment from a row-major (k-major) tile, through `.trans`: lanes 0–7 give the
/// addresses of k rows 0–7, lanes 8–15 of k rows 8–15, each at the fragment's 8 columns.
#[device]
pub fn load_b_bf16_trans(address: u32) -> BBf16 {
    let (b0, b1) = ldmatrix_x2_trans(address);
    BBf16 { b0, b1 }
}

/// An f16 B fragment, as [`load_b_bf16`].
#[device]
pub fn load_b_f16(address: u32) -> BHalf {
    let (b0, b1) = ldmatrix_x2(address);
    BHalf { b0, b1 }
}

/// An f16 B fragment from a row-major tile, as [`load_b_bf16_trans`].
#[device]
pub fn load_b_f16_trans(address: u32) -> BHalf {
    let (b0, b1) = ldmatrix_x2_trans(address);
    BHalf { b0, b1 }
}

/// A tf32 (16×8 f32 bit patterns) A fragment from a row-major tile: lane `l` gives row `l % 16` at byte
/// `16 (l / 16)` (the [module](self)'s rule).
#[device]
pub fn load_a_tf32(address: u32) -> ATf32 {
    let (a0, a1, a2, a3) = ldmatrix_x4(address);
    ATf32 { a0, a1, a2, a3 }
}

/// A tf32 (16×8 f32 bit patterns) B fragment from a tile stored column by column: lanes 0–7 give columns 0–7
/// at byte 0, lanes 8–15 the same columns at byte 16.
#[device]
pub fn load_b_tf32(address: u32) -> BTf32 {
    let (b0, b1) = ldmatrix_x2(address);
    BTf32 { b0, b1 }
}

/// A FP8 e4m3 A fragment from a row-major tile: lane `l` gives row `l % 16` at byte
/// `16 (l / 16)` (the [module](self)'s rule).
#[device]
pub fn load_a_e4m3(address: u32) -> AE4m3 {
    let (a0, a1, a2, a3) = ldmatrix_x4(address);
    AE4m3 { a0, a1, a2, a3 }
}

/// A FP8 e4m3 B fragment from a tile stored column by column: lanes 0–7 give columns 0–7
/// at byte 0, lanes 8–15 the same columns at byte 16.
#[device]
pub fn load_b_e4m3(address: u32) -> BE4m3 {
    let (b0, b1) = ldmatrix_x2(address);
    BE4m3 { b0, b1 }
}

/// A FP8 e5m2 A fragment from a row-major tile: lane `l` gives row `l % 16` at byte
/// `16 (l / 16)` (the [module](self)'s rule).
#[device]
pub fn load_a_e5m2(address: u32) -> AE5m2 {
    let (a0, a1, a2, a3) = ldmatrix_x4(address);
    AE5m2 { a0, a1, a2, a3 }
}

/// A FP8 e5m2 B fragment from a tile stored column by column: lanes 0–7 give columns 0–7
/// at byte 0, lanes 8–15 the same columns at byte 16.
#[device]
pub fn load_b_e5m2(address: u32) -> BE5m2 {
    let (b0, b1) = ldmatrix_x2(address);
    BE5m2 { b0, b1 }
}

/// A s8 A fragment from a row-major tile: lane `l` gives row `l % 16` at byte
/// `16 (l / 16)` (the [module](self)'s rule).
#[device]
pub fn load_a_s8(address: u32) -> AS8 {
    let (a0, a1, a2, a3) = ldmatrix_x4(address);
    AS8 { a0, a1, a2, a3 }
}

/// A s8 B fragment from a tile stored column by column: lanes 0–7 give columns 0–7
/// at byte 0, lanes 8–15 the same columns at byte 16.
#[device]
pub fn load_b_s8(address: u32) -> BS8 {
    let (b0, b1) = ldmatrix_x2(address);
    BS8 { b0, b1 }
}

/// A u8 A fragment from a row-major tile: lane `l` gives row `l % 16` at byte
/// `16 (l / 16)` (the [module](self)'s rule).
#[device]
pub fn load_a_u8(address: u32) -> AU8 {
    let (a0, a1, a2, a3) = ldmatrix_x4(address);
    AU8 { a0, a1, a2, a3 }
}

/// A u8 B fragment from a tile stored column by column: lanes 0–7 give columns 0–7
/// at byte 0, lanes 8–15 the same columns at byte 16.
#[device]
pub fn load_b_u8(address: u32) -> BU8 {
    let (b0, b1) = ldmatrix_x2(address);
    BU8 { b0, b1 }
}
