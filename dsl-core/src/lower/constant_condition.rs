//! Conditions known when a function is specialised: `if BF16`, `if WIDTH == 8`,
//! `if D >= 128 && !F16`, over literals and the specialisation's constants (const generics
//! and `#[comptime]` parameters).
//!
//! Only the branch taken is inferred and lowered, as C++'s `if constexpr`: rustc has
//! type-checked every branch for every instantiation already, and a branch may hold code
//! that cudajit accepts only for other values of the constants (a `vload8` of 16-bit values
//! beside a `vload4` of 32-bit ones in one generic function). Inference and lowering ask this
//! one evaluator, each with its own scopes, so they always agree on which branch exists.

use crate::ast::{BinaryOp, Expr, ExprKind, Literal, UnaryOp};
use crate::ir;

/// The value of `expr` if it is a condition of constants; `constant` gives the value of a
/// name that is a constant of the specialisation (and not shadowed by a local).
pub(super) fn constant_condition(
    expr: &Expr,
    constant: &dyn Fn(&str) -> Option<ir::Literal>,
) -> Option<bool> {
    match &expr.kind {
        ExprKind::Lit(Literal::Bool(b)) => Some(*b),
        ExprKind::Var(name) => match constant(name)? {
            ir::Literal::Bool(b) => Some(b),
            _ => None,
        },
        ExprKind::Unary {
            op: UnaryOp::Not,
            operand,
        } => constant_condition(operand, constant).map(|b| !b),
        ExprKind::Binary { op, left, right } => match op {
            BinaryOp::And => {
                Some(constant_condition(left, constant)? && constant_condition(right, constant)?)
            }
            BinaryOp::Or => {
                Some(constant_condition(left, constant)? || constant_condition(right, constant)?)
            }
            op if op.is_comparison() => {
                let (l, r) = (
                    integer_value(left, constant)?,
                    integer_value(right, constant)?,
                );
                Some(match op {
                    BinaryOp::Eq => l == r,
                    BinaryOp::Ne => l != r,
                    BinaryOp::Lt => l < r,
                    BinaryOp::Le => l <= r,
                    BinaryOp::Gt => l > r,
                    _ => l >= r,
                })
            }
            _ => None,
        },
        _ => None,
    }
}

/// An integer literal or an integer constant, with its sign: a signed constant's bits are
/// read in its own width.
fn integer_value(expr: &Expr, constant: &dyn Fn(&str) -> Option<ir::Literal>) -> Option<i128> {
    match &expr.kind {
        ExprKind::Lit(Literal::Int { value, .. }) => Some(i128::from(*value)),
        ExprKind::Var(name) => match constant(name)? {
            ir::Literal::Int { bits, ty } if ty.is_signed() => {
                let shift = 64 - ty.bits();
                Some(i128::from(((bits << shift) as i64) >> shift))
            }
            ir::Literal::Int { bits, .. } => Some(i128::from(bits)),
            _ => None,
        },
        _ => None,
    }
}
