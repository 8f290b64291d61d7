//! Statements: one example per row of the table's "Statements" group.

use cudajit::prelude::*;

#[device]
pub fn let_forms(x: &[f32], i: usize) -> f64 {
    let a = x[i];
    let mut b: f32 = 1.0;
    b += a;
    let (p, q): (f32, u32) = (a, 2);
    b += p * q as f32;
    let c: u32;
    if i % 2 == 0 {
        c = 1;
    } else {
        c = 2;
    }
    (a + b + c as f32) as f64
}

#[device]
pub fn shadowing(x: &[f32], i: usize) -> f64 {
    let v = x[i];
    let v = v * 2.0;
    let v = v as i32 + i as i32;
    v as f64
}

#[device]
pub fn let_else(x: &[f32], i: usize) -> f64 {
    let Some(&next) = x.get(i + 10) else {
        return -1.0;
    };
    next as f64
}

#[device]
pub fn expression_statements(x: &[f32], i: usize) -> f64 {
    let mut acc = x[i];
    super::expressions::twice_of(acc);
    {
        acc += 1.0;
    };
    if acc > 0.0 {
        acc -= 0.5;
    }
    acc as f64
}

#[device]
pub fn items_in_body(x: &[f32], i: usize) -> f64 {
    const K: f32 = 3.0;
    static M: u32 = 7;
    (x[i] * K + M as f32 + i as f32) as f64
}

#[device]
pub fn nested_blocks(x: &[f32], i: usize) -> f64 {
    let mut acc = 0.0f32;
    {
        let t = x[i];
        {
            let u = t * 2.0;
            acc += u;
        }
        acc += t;
    }
    acc as f64
}

group!(statements, ROWS {
    "stmt.let" => let_forms,
    "stmt.shadowing" => shadowing,
    "stmt.let-else" => let_else,
    "stmt.expression" => expression_statements,
    "stmt.item" => items_in_body,
    "stmt.block" => nested_blocks,
});
