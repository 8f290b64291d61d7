use cudajit::prelude::*;
use cudajit::tensor::ldmatrix::{load_a_bf16, load_a_f16, load_b_bf16, load_b_e4m3, load_b_s8};
use cudajit::tensor::mma::{acc_zero, mma_bf16, mma_e4m3, mma_s8};

// A fragment's role is its type: a B fragment where A is expected does not compile.
#[kernel]
fn b_as_a(a_row: u32, b_column: u32, out: &mut [f32]) {
    let b = load_b_bf16(b_column);
    out[0] = mma_bf16(b, load_b_bf16(a_row), acc_zero()).c0;
}

// So is its element type: f16 where bf16 is expected.
#[kernel]
fn f16_as_bf16(a_row: u32, b_column: u32, out: &mut [f32]) {
    out[0] = mma_bf16(load_a_f16(a_row), load_b_bf16(b_column), acc_zero()).c0;
}

// And its shape: an m16n8k16 bf16 A where the m16n8k32 e4m3 MMA wants its own.
#[kernel]
fn k16_as_k32(a_row: u32, b_column: u32, out: &mut [f32]) {
    out[0] = mma_e4m3(load_a_bf16(a_row), load_b_e4m3(b_column), acc_zero()).c0;
}

// An integer MMA accumulates into s32, not f32.
#[kernel]
fn f32_accumulator_for_s8(a_row: u32, b_column: u32, out: &mut [i32]) {
    let a = cudajit::tensor::ldmatrix::load_a_s8(a_row);
    out[0] = mma_s8(a, load_b_s8(b_column), acc_zero()).c0;
}

fn main() {}
