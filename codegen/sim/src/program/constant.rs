//! Conditions known when the kernel is compiled: comparisons of literals, which a const
//! generic parameter becomes once the kernel is specialised (`if D == 64 { .. }`). Only
//! the branch taken is compiled, as the GPU's compiler folds the others away, so a branch
//! written for another specialisation (a `ptx!` whose register count fits another `D`)
//! is never read.

use cudajit_core::ast::{BinaryOp, UnaryOp};
use cudajit_core::ir::{Expression, Function, Handle, Literal};

/// The value of the `bool` expression `handle` if it is a constant.
pub(super) fn known_condition(function: &Function, handle: Handle<Expression>) -> Option<bool> {
    match function.expressions[handle] {
        Expression::Literal(Literal::Bool(b)) => Some(b),
        Expression::Unary {
            op: UnaryOp::Not,
            operand,
        } => known_condition(function, operand).map(|b| !b),
        Expression::Logical { and, left, right } => {
            match (
                known_condition(function, left),
                known_condition(function, right),
            ) {
                // `false && x` and `true || x`, whatever `x` is.
                (Some(l), _) if l != and => Some(l),
                (Some(_), r) => r,
                (None, Some(r)) if r != and => Some(r),
                _ => None,
            }
        }
        Expression::Binary { op, left, right } if op.is_comparison() => {
            let integer = |h: Handle<Expression>| match function.expressions[h] {
                Expression::Literal(Literal::Int { bits, ty }) => Some((bits, ty)),
                _ => None,
            };
            let ((a, ty), (b, other)) = (integer(left)?, integer(right)?);
            if ty != other {
                return None;
            }
            let ordering = if ty.is_signed() {
                let sign = |x: u64| {
                    let shift = 64 - ty.bits();
                    ((x << shift) as i64) >> shift
                };
                sign(a).cmp(&sign(b))
            } else {
                a.cmp(&b)
            };
            Some(match op {
                BinaryOp::Eq => ordering.is_eq(),
                BinaryOp::Ne => ordering.is_ne(),
                BinaryOp::Lt => ordering.is_lt(),
                BinaryOp::Le => ordering.is_le(),
                BinaryOp::Gt => ordering.is_gt(),
                _ => ordering.is_ge(),
            })
        }
        _ => None,
    }
}
