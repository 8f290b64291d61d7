//! Constant arrays a body names (`const LUT: [u32; 8] = [..];`, `static` tables): each
//! becomes a local array holding rustc's values, declared at the top of the body, so the
//! rest of the lowering sees an ordinary local array (`LUT[i % 8]`, `LUT.len()`, loops
//! over it, passing it by value). This is what CUDA C++ writes for a table inside a
//! function: a constant index reads an immediate, a runtime index a table the compiler
//! keeps (in registers or local memory, which LLVM may turn into a constant global).

use std::borrow::Cow;

use crate::ast::{Block, Expr, ExprKind, FunctionSource, Literal, Stmt, ValueType};
use crate::constant::ConstantValue;
use crate::ir;
use crate::{Scalar, Span};

/// `source` with its constant arrays declared as local arrays at the top of its body;
/// `source` itself when it names none. The tables stay among its constants (where the
/// closures it passes to device functions find them); only scalars are bound as literals.
pub(super) fn with_tables(source: &FunctionSource) -> Cow<'_, FunctionSource> {
    if source.constants.iter().all(|c| c.len.is_none()) {
        return Cow::Borrowed(source);
    }
    let mut source = source.clone();
    let tables: Vec<ConstantValue> = source
        .constants
        .iter()
        .filter(|c| c.len.is_some())
        .copied()
        .collect();
    let span = source.body.span;
    let mut stmts = Vec::new();
    for table in &tables {
        declare(table, span, &mut stmts);
    }
    stmts.append(&mut source.body.stmts);
    source.body = Block {
        stmts,
        tail: source.body.tail.take(),
        span,
    };
    Cow::Owned(source)
}

/// `let NAME: [T; N] = [v0; N]; NAME[1] = v1; ..`, the form array literals take.
fn declare(table: &ConstantValue, span: Span, stmts: &mut Vec<Stmt>) {
    let len = table.len.unwrap_or(0);
    let literal = |k: usize| element(table, k, span);
    let usize_literal = |value: u64| Expr {
        kind: ExprKind::Lit(Literal::Int {
            value,
            suffix: Some(Scalar::Usize),
        }),
        span,
    };
    if len == 0 {
        return;
    }
    stmts.push(Stmt::Let {
        name: table.name.to_owned(),
        mutable: false,
        // A local array's annotation is its element type (`array_annotation`).
        ty: Some(ValueType::Scalar(table.ty)),
        init: Some(Expr {
            kind: ExprKind::Repeat {
                value: Box::new(literal(0)),
                len: Box::new(usize_literal(len as u64)),
            },
            span,
        }),
        span,
    });
    for k in 1..len {
        stmts.push(Stmt::Assign {
            place: Expr {
                kind: ExprKind::Index {
                    base: Box::new(Expr {
                        kind: ExprKind::Var(table.name.to_owned()),
                        span,
                    }),
                    index: Box::new(usize_literal(k as u64)),
                },
                span,
            },
            op: None,
            value: literal(k),
            span,
        });
    }
}

/// Element `k` as an expression of the table's type: exact for every value (a signed
/// integer is its bits as the unsigned type of its width, cast back).
fn element(table: &ConstantValue, k: usize, span: Span) -> Expr {
    let expr = |kind| Expr { kind, span };
    match table.element(k) {
        ir::Literal::Bool(b) => expr(ExprKind::Lit(Literal::Bool(b))),
        ir::Literal::Float { value, ty } => expr(ExprKind::Lit(Literal::Float {
            value,
            suffix: Some(ty),
        })),
        ir::Literal::Int { bits, ty } if ty.is_signed() => {
            let unsigned = ty.to_unsigned();
            expr(ExprKind::Cast {
                value: Box::new(expr(ExprKind::Lit(Literal::Int {
                    value: bits,
                    suffix: Some(unsigned),
                }))),
                ty,
            })
        }
        ir::Literal::Int { bits, ty } => expr(ExprKind::Lit(Literal::Int {
            value: bits,
            suffix: Some(ty),
        })),
    }
}
