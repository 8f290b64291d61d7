//! `stmatrix.sync.aligned.m8n8` (sm_90): `ldmatrix` run backwards. Every lane holds its
//! part of each 8×8 matrix of 16-bit elements in the MMA accumulator layout (lane `l`:
//! row `l / 4`, elements `2(l % 4)` and `2(l % 4) + 1`, the lower in the low half), and
//! lanes `8m..8m + 8` give the shared addresses of matrix `m`'s eight 16-byte rows, which
//! the warp writes together. `.trans` writes the transpose (lane `l`'s pair becomes column
//! `l / 4` of rows `2(l % 4)` and `2(l % 4) + 1`).
//!
//! Addresses are `.shared` addresses (`shared_address(&tile[i])`), 16-byte aligned. Every
//! lane of the warp calls these together. The usual use is an epilogue: an accumulator
//! packed to 16-bit pairs and stored as 16-byte rows ([`store_acc_bf16`]), instead of
//! each lane's scattered 4-byte stores.

use super::mma::{AccF16, AccF32};
use super::pack::pack_bf16x2;
use cudajit::device;
use cudajit_core::ptx;

/// One 8×8 matrix from `r0` (lanes 0–7 give the rows).
#[device]
pub fn stmatrix_x1(address: u32, r0: u32) {
    ptx!(
        "stmatrix.sync.aligned.m8n8.x1.shared.b16 [$0], {$1};",
        address,
        r0
    );
}

/// One 8×8 matrix, transposed.
#[device]
pub fn stmatrix_x1_trans(address: u32, r0: u32) {
    ptx!(
        "stmatrix.sync.aligned.m8n8.x1.trans.shared.b16 [$0], {$1};",
        address,
        r0
    );
}

/// Two 8×8 matrices from `r0`, `r1` (lanes 0–15 give the rows).
#[device]
pub fn stmatrix_x2(address: u32, r0: u32, r1: u32) {
    ptx!(
        "stmatrix.sync.aligned.m8n8.x2.shared.b16 [$0], {$1, $2};",
        address,
        r0,
        r1
    );
}

/// Two 8×8 matrices, each transposed.
#[device]
pub fn stmatrix_x2_trans(address: u32, r0: u32, r1: u32) {
    ptx!(
        "stmatrix.sync.aligned.m8n8.x2.trans.shared.b16 [$0], {$1, $2};",
        address,
        r0,
        r1
    );
}

/// Four 8×8 matrices from `r0` .. `r3` (all 32 lanes give rows).
#[device]
pub fn stmatrix_x4(address: u32, r0: u32, r1: u32, r2: u32, r3: u32) {
    ptx!(
        "stmatrix.sync.aligned.m8n8.x4.shared.b16 [$0], {$1, $2, $3, $4};",
        address,
        r0,
        r1,
        r2,
        r3
    );
}

/// Four 8×8 matrices, each transposed.
#[device]
pub fn stmatrix_x4_trans(address: u32, r0: u32, r1: u32, r2: u32, r3: u32) {
    ptx!(
        "stmatrix.sync.aligned.m8n8.x4.trans.shared.b16 [$0], {$1, $2, $3, $4};",
        address,
        r0,
        r1,
        r2,
        r3
    );
}

/// A 16×8 f16 accumulator stored as a row-major 16×8 f16 tile: lane `l` (0–15) gives the
/// address of row `l` (16 bytes; lanes 16–31 are ignored).
#[device]
pub fn store_acc_f16(address: u32, acc: AccF16) {
    stmatrix_x2(address, acc.c0, acc.c1);
}

/// A 16×8 f32 accumulator rounded to bf16 (to nearest even) and stored as a row-major
/// 16×8 bf16 tile: lane `l` (0–15) gives the address of row `l`.
#[device]
pub fn store_acc_bf16(address: u32, acc: AccF32) {
    stmatrix_x2(
        address,
        pack_bf16x2(acc.c0, acc.c1),
        pack_bf16x2(acc.c2, acc.c3),
    );
}
