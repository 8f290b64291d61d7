//! `if let`, `let … else` and `while let` over `x.get(i)` and `x.get_mut(i)`, and over
//! any other `Option` (taken apart by `option_value.rs`).
//!
//! `Some(v) = x.get(i)` is the bounds test CUDA C++
//! writes, `if (i < n) { float& v = x[i]; .. }`. The index is evaluated once, into a
//! hidden local; `v` then stands for the element `x[$i]` (read and written where the body
//! uses it, as through the reference Rust binds), or is a copy for `Some(&v)` and
//! `Some(mut v)`.

use cudajit_core::ast::{BinaryOp, Block, Else, Expr, ExprKind, IfStmt, Stmt, ValueType};
use cudajit_core::Scalar;

use super::parser::Parser;
use super::stmt::label_name;
use super::{span_at, span_of};

const SUPPORTED: &str = "`if let`, `while let` and `let … else` in a kernel match `Some(v)` against an `Option` (`x.get(i)` of a slice or array is the bounds test `i < x.len()`); test other values with `if` or `match`";

/// `Some(pat) = x.get(index)` (or another `Option`), taken apart.
struct Get<'p> {
    /// `let $i = index;` (what computes the `Option`).
    prelude: Vec<Stmt>,
    /// `$i < x.len()` (whether a value is present).
    present: Expr,
    /// `x[$i]` (the value, read only when present).
    element: Expr,
    /// The pattern inside `Some(..)`.
    pat: &'p syn::Pat,
}

impl Parser<'_> {
    /// `Some(pat) = x.get(index)` of an `if let`, `while let` or `let … else`.
    fn get_pattern<'p>(&mut self, pat: &'p syn::Pat, scrutinee: &syn::Expr) -> Option<Get<'p>> {
        let inner = match pat {
            syn::Pat::TupleStruct(some)
                if some.qself.is_none() && some.path.is_ident("Some") && some.elems.len() == 1 =>
            {
                &some.elems[0]
            }
            other => {
                self.errors.at(other, SUPPORTED);
                return None;
            }
        };
        let get = match scrutinee {
            syn::Expr::MethodCall(call)
                if (call.method == "get" || call.method == "get_mut") && call.args.len() == 1 =>
            {
                self.get_call(call)
            }
            other => {
                let span = span_at(other);
                let parts = self.option_parts(other)?;
                let parts = self.settle(parts, span);
                let element = parts.value.unwrap_or_else(|| {
                    super::option_value::zero_of(&ValueType::Scalar(Scalar::U32), span)
                });
                return Some(Get {
                    prelude: parts.prelude,
                    present: parts.present,
                    element,
                    pat: inner,
                });
            }
        };
        let (index_let, present, element) = get?;
        Some(Get {
            prelude: vec![index_let],
            present,
            element,
            pat: inner,
        })
    }

    /// `x.get(index)` of a slice or array by name: `let $i = index;`, `$i < x.len()` and
    /// `x[$i]`.
    pub(super) fn get_call(&mut self, call: &syn::ExprMethodCall) -> Option<(Stmt, Expr, Expr)> {
        let span = span_at(call);
        let base = match &*call.receiver {
            syn::Expr::Path(path) if path.path.get_ident().is_some() => self.expr(&call.receiver),
            other => {
                self.errors.at(
                    other,
                    "`get` in a kernel applies to a slice or array by its name: bind other values with `let` first",
                );
                None
            }
        };
        let index = self.expr(&call.args[0]);
        let (base, index) = (base?, index?);
        let name = self.fresh_name("get");
        let var = Expr {
            kind: ExprKind::Var(name.clone()),
            span,
        };
        let len = Expr {
            kind: ExprKind::Len(Box::new(base.clone())),
            span,
        };
        let index_let = Stmt::Let {
            name,
            mutable: false,
            ty: Some(ValueType::Scalar(Scalar::Usize)),
            init: Some(index),
            span,
        };
        let element = Expr {
            kind: ExprKind::Index {
                base: Box::new(base),
                index: Box::new(var.clone()),
            },
            span,
        };
        Some((index_let, binary(BinaryOp::Lt, var, len), element))
    }

    /// Binds the pattern inside `Some(..)` in the current scope: a name stands for the
    /// element, `&v` and `mut v` are copies (`let` statements, returned), `_` binds
    /// nothing.
    pub(super) fn bind_some(&mut self, pat: &syn::Pat, element: Expr) -> Option<Vec<Stmt>> {
        let copy = |parser: &mut Self, ident: &syn::PatIdent, element: Expr| {
            let name = ident.ident.to_string();
            parser.bind(&name);
            Some(vec![Stmt::Let {
                name,
                mutable: ident.mutability.is_some(),
                ty: None,
                span: element.span,
                init: Some(element),
            }])
        };
        match pat {
            syn::Pat::Wild(_) => Some(Vec::new()),
            syn::Pat::Ident(ident) if ident.by_ref.is_none() && ident.subpat.is_none() => {
                if ident.mutability.is_some() {
                    return copy(self, ident, element);
                }
                self.bind_alias(&ident.ident.to_string(), element);
                Some(Vec::new())
            }
            syn::Pat::Reference(reference) => match &*reference.pat {
                syn::Pat::Ident(ident) if ident.by_ref.is_none() && ident.subpat.is_none() => {
                    copy(self, ident, element)
                }
                other => {
                    self.errors.at(other, "`Some(&v)` binds a name");
                    None
                }
            },
            other => {
                self.errors.at(
                    other,
                    "`Some(..)` in a kernel binds a name, `&name`, `mut name` or `_`",
                );
                None
            }
        }
    }

    /// `if let Some(v) = x.get(i) { .. } [else ..]` as a statement.
    pub(super) fn if_let_stmt(&mut self, expr_if: &syn::ExprIf) -> Option<Stmt> {
        let syn::Expr::Let(condition) = &*expr_if.cond else {
            return None;
        };
        let get = self.get_pattern(&condition.pat, &condition.expr)?;
        self.push_scope();
        let prelude = self.bind_some(get.pat, get.element.clone());
        let then = self.block(&expr_if.then_branch);
        self.pop_scope();
        let mut then = self.no_tail_in(then, &expr_if.then_branch);
        let otherwise = match &expr_if.else_branch {
            None => None,
            Some((_, else_expr)) => Some(Box::new(self.else_branch(else_expr)?)),
        };
        let mut stmts = prelude?;
        stmts.append(&mut then.stmts);
        then.stmts = stmts;
        let span = span_of(expr_if.if_token.span);
        let mut stmts = get.prelude;
        stmts.push(Stmt::If(IfStmt {
            cond: get.present,
            then,
            otherwise,
            span,
        }));
        Some(Stmt::Block(Block {
            stmts,
            tail: None,
            span,
        }))
    }

    /// The `else` of an `if` statement: a block, an `else if`, or an `else if let`.
    pub(super) fn else_branch(&mut self, else_expr: &syn::Expr) -> Option<Else> {
        match else_expr {
            syn::Expr::If(nested) if matches!(&*nested.cond, syn::Expr::Let(_)) => {
                let span = span_of(nested.if_token.span);
                Some(Else::Block(Block {
                    stmts: vec![self.if_let_stmt(nested)?],
                    tail: None,
                    span,
                }))
            }
            syn::Expr::If(nested) => Some(Else::If(self.if_stmt(nested)?)),
            syn::Expr::Block(block) => {
                let parsed = self.block(&block.block);
                Some(Else::Block(self.no_tail_in(parsed, &block.block)))
            }
            other => {
                self.errors.at(other, "unexpected `else` branch");
                None
            }
        }
    }

    /// `if let Some(v) = x.get(i) { a } else { b }` used as a value.
    pub(super) fn if_let_value(&mut self, expr_if: &syn::ExprIf) -> Option<Expr> {
        let span = span_at(expr_if);
        let syn::Expr::Let(condition) = &*expr_if.cond else {
            return None;
        };
        let Some((_, else_expr)) = &expr_if.else_branch else {
            self.errors.at(
                expr_if,
                "an `if let` used as a value needs an `else` branch",
            );
            return None;
        };
        let get = self.get_pattern(&condition.pat, &condition.expr)?;
        self.push_scope();
        let prelude = self.bind_some(get.pat, get.element.clone());
        let then = self.block(&expr_if.then_branch);
        self.pop_scope();
        let otherwise = match &**else_expr {
            syn::Expr::Block(block) => self.block(&block.block),
            nested => {
                let value = self.expr(nested)?;
                Block {
                    stmts: Vec::new(),
                    span: value.span,
                    tail: Some(Box::new(value)),
                }
            }
        };
        let mut then = then;
        let mut stmts = prelude?;
        stmts.append(&mut then.stmts);
        then.stmts = stmts;
        if then.tail.is_none() || otherwise.tail.is_none() {
            self.errors.at(
                expr_if,
                "both branches of an `if let` used as a value must end in a value",
            );
            return None;
        }
        let value = Expr {
            kind: ExprKind::If {
                cond: Box::new(get.present),
                then,
                otherwise,
            },
            span,
        };
        Some(Expr {
            kind: ExprKind::Block(Block {
                stmts: get.prelude,
                tail: Some(Box::new(value)),
                span,
            }),
            span,
        })
    }

    /// `let Some(v) = x.get(i) else { .. };`: the `else` block runs (and leaves the block,
    /// as Rust requires) when `i` is out of bounds; `v` is bound for the rest of the block.
    pub(super) fn let_else(&mut self, local: &syn::Local) -> Option<Stmt> {
        let init = local.init.as_ref()?;
        let (_, diverge) = init.diverge.as_ref()?;
        let span = span_of(local.let_token.span);
        let get = self.get_pattern(&local.pat, &init.expr)?;
        let syn::Expr::Block(otherwise) = &**diverge else {
            self.errors
                .at(diverge, "the `else` of a `let … else` is a block");
            return None;
        };
        let otherwise_block = self.block(&otherwise.block);
        let otherwise_block = self.no_tail_in(otherwise_block, &otherwise.block);
        let missing = Expr {
            kind: ExprKind::Unary {
                op: cudajit_core::ast::UnaryOp::Not,
                operand: Box::new(get.present),
            },
            span,
        };
        let mut stmts = get.prelude;
        stmts.push(Stmt::If(IfStmt {
            cond: missing,
            then: otherwise_block,
            otherwise: None,
            span,
        }));
        stmts.extend(self.bind_some(get.pat, get.element)?);
        self.emit(stmts)
    }

    /// `[label:] while let Some(v) = x.get(i) { .. }`: a `loop` that evaluates the index,
    /// leaves when it is out of bounds, then binds `v` and runs the body.
    pub(super) fn while_let(&mut self, expr_while: &syn::ExprWhile) -> Option<Stmt> {
        let syn::Expr::Let(condition) = &*expr_while.cond else {
            return None;
        };
        let span = span_at(expr_while);
        let get = self.get_pattern(&condition.pat, &condition.expr)?;
        let label = label_name(&expr_while.label);
        self.push_scope();
        let prelude = self.bind_some(get.pat, get.element.clone());
        self.loops.push((label.clone(), None));
        let body = self.block(&expr_while.body);
        self.loops.pop();
        self.pop_scope();
        let mut body = self.no_tail_in(body, &expr_while.body);
        let leave = Block {
            stmts: vec![Stmt::Break { label: None, span }],
            tail: None,
            span,
        };
        let missing = Expr {
            kind: ExprKind::Unary {
                op: cudajit_core::ast::UnaryOp::Not,
                operand: Box::new(get.present),
            },
            span,
        };
        let mut stmts = get.prelude;
        stmts.push(Stmt::If(IfStmt {
            cond: missing,
            then: leave,
            otherwise: None,
            span,
        }));
        stmts.extend(prelude?);
        stmts.append(&mut body.stmts);
        body.stmts = stmts;
        Some(Stmt::Loop { label, body, span })
    }
}

fn binary(op: BinaryOp, left: Expr, right: Expr) -> Expr {
    let span = left.span;
    Expr {
        kind: ExprKind::Binary {
            op,
            left: Box::new(left),
            right: Box::new(right),
        },
        span,
    }
}
