//! `loop` used as a value and the `break value`s that give it.
//!
//! `let v = loop { .. break x; .. };` is a hidden local that each `break value` of the
//! loop writes just before leaving it, read after the loop: what CUDA C++ writes by hand
//! (`float v; for (;;) { .. v = x; break; .. }`), a register once optimised.

use cudajit_core::ast::{Block, Expr, ExprKind, Stmt};

use super::parser::Parser;
use super::stmt::label_name;
use super::{span_at, span_of};

impl Parser<'_> {
    /// `[label:] loop { .. }` used as a value.
    pub(super) fn loop_value(&mut self, expr_loop: &syn::ExprLoop) -> Option<Expr> {
        let span = span_at(expr_loop);
        let label = label_name(&expr_loop.label);
        let result = self.fresh_name("loop");
        self.loops.push((label.clone(), Some(result.clone())));
        let body = self.block(&expr_loop.body);
        self.loops.pop();
        let body = self.no_tail_in(body, &expr_loop.body);
        let result_var = Expr {
            kind: ExprKind::Var(result.clone()),
            span,
        };
        Some(Expr {
            kind: ExprKind::Block(Block {
                stmts: vec![
                    Stmt::Let {
                        name: result,
                        mutable: true,
                        ty: None,
                        init: None,
                        span,
                    },
                    Stmt::Loop {
                        label,
                        body,
                        span: span_of(expr_loop.loop_token.span),
                    },
                ],
                tail: Some(Box::new(result_var)),
                span,
            }),
            span,
        })
    }

    /// `break ['label] [value];`: a value is written to the result of the `loop` it
    /// leaves, which must be one used as a value.
    pub(super) fn break_stmt(&mut self, expr_break: &syn::ExprBreak) -> Option<Stmt> {
        let span = span_at(expr_break);
        let label = expr_break.label.as_ref().map(|l| l.ident.to_string());
        let jump = Stmt::Break {
            label: label.clone(),
            span,
        };
        let Some(value) = &expr_break.expr else {
            return Some(jump);
        };
        let target = match &label {
            None => self.loops.last(),
            Some(label) => self
                .loops
                .iter()
                .rev()
                .find(|(l, _)| l.as_deref() == Some(label.as_str())),
        };
        let Some((_, Some(result))) = target.cloned() else {
            self.errors.at(
                value,
                "`break` with a value leaves a `loop` used as a value: `let v = loop { .. break x; };` (or `v = loop { .. }`, `return loop { .. }`); a `loop` ending a function's body is a statement here, so bind its value first",
            );
            return None;
        };
        let value = self.expr(value)?;
        Some(Stmt::Block(Block {
            stmts: vec![
                Stmt::Assign {
                    place: Expr {
                        kind: ExprKind::Var(result),
                        span,
                    },
                    op: None,
                    value,
                    span,
                },
                jump,
            ],
            tail: None,
            span,
        }))
    }
}
