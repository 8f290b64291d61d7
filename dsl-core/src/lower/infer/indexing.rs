//! `v[i]` of a struct with `#[device]` impls of `Index`/`IndexMut`, inlined to the place
//! the method returns.
//!
//! Device functions cannot return references, and a CUDA C++ `operator[]` returning
//! `float&` is inlined by nvcc to the element it names. So the body of `index` (reads)
//! or `index_mut` (writes) is put where `v[i]` is written, with `self` replaced by `v` and
//! the index parameter by `i`: `&self.data[i]` makes `v[i]` the place `v.data[i]` (read,
//! written and compounded in place, the array field in registers when `i` is a constant
//! after unrolling), and `match i { 0 => &self.x, .. }` makes a read the `match` of the
//! fields' values and a write a `match` whose arms write the field each names.
//!
//! The body is therefore a place expression: `&place` (a field, an element, at any
//! depth, of `self`), or a `match`/`if` whose arms end in one. The index is substituted
//! where the body names it, so it must not have effects (a call): `let k = f(..); v[k]`.

use std::rc::Rc;

use super::{InferTy, Inference};
use crate::ast::{Block, Expr, ExprKind, MatchArm, Stmt};
use crate::lower::error::LowerError;
use crate::methods::{operator_function_name, OperatorTrait, Rhs};
use crate::Scalar;

/// What a `#[device]` `index`/`index_mut` body may be, for the messages.
const PLACE_BODIES: &str = "`&self.field`, `&self.array[i]` (at any depth), or a `match`/`if` on the index whose arms end in such places";

impl Inference<'_> {
    /// `base[index]` read, `base` a struct: the place its `index` returns.
    pub(super) fn struct_index(
        &mut self,
        expr: &Expr,
        name: &'static str,
        base: &Expr,
        index: &Expr,
    ) -> Result<InferTy, LowerError> {
        let key = expr as *const Expr;
        let place = match self.desugared.iter().find(|(k, _)| *k == key) {
            Some((_, place)) => Rc::clone(place),
            None => {
                let place = Rc::new(self.inlined_index(name, "Index", base, index, expr)?);
                self.desugared.push((key, Rc::clone(&place)));
                place
            }
        };
        let ty = self.expr(&place)?;
        match ty {
            InferTy::Scalar(var) => self.exprs.push((key, var, expr.span)),
            InferTy::Struct(name) => self.structs.push((key, name)),
            _ => {}
        }
        Ok(ty)
    }

    /// `base[index] op= value` (or `=`), `base` a struct: the assignment of the place its
    /// `index_mut` returns; for a `match`/`if` body, the `match`/`if` whose arms assign
    /// their places. `None` if `place` is not such an index.
    pub(super) fn struct_index_assignment(
        &mut self,
        stmt: &Stmt,
    ) -> Result<Option<()>, LowerError> {
        let Stmt::Assign {
            place,
            op,
            value,
            span,
        } = stmt
        else {
            return Ok(None);
        };
        let ExprKind::Index { base, index } = &place.kind else {
            return Ok(None);
        };
        let InferTy::Struct(name) = self.expr(base)? else {
            return Ok(None);
        };
        let key = stmt as *const Stmt;
        let replacement = match self.replaced_stmts.iter().find(|(k, _)| *k == key) {
            Some((_, replacement)) => Rc::clone(replacement),
            None => {
                let body = self.inlined_index(name, "IndexMut", base, index, place)?;
                let replacement = Rc::new(assignment_of(body, *op, value, *span));
                self.replaced_stmts.push((key, Rc::clone(&replacement)));
                replacement
            }
        };
        self.stmt(&replacement)?;
        Ok(Some(()))
    }

    /// The body of `name`'s `trait_name` method (the impl for the index's integer type),
    /// with `self` replaced by `base` and the index parameter by `index`: a place
    /// expression (`&` removed).
    fn inlined_index(
        &mut self,
        name: &'static str,
        trait_name: &str,
        base: &Expr,
        index: &Expr,
        at: &Expr,
    ) -> Result<Expr, LowerError> {
        let operator = OperatorTrait::named(trait_name)
            .ok_or_else(|| LowerError::new(at.span, "internal: no indexing operator"))?;
        let index_var = self.scalar(index)?;
        let root = self.find(index_var);
        let fitting: Vec<(Scalar, String)> = Scalar::ALL
            .into_iter()
            .filter(|s| s.is_integer())
            .map(|s| (s, operator_function_name(name, &operator, Rhs::Scalar(s))))
            .filter(|(_, callee)| self.library.get(callee).is_some())
            .filter(|(s, _)| {
                super::merge(self.constraint[root], super::Constraint::Known(*s)).is_some()
            })
            .collect();
        let (scalar, callee) = match fitting.as_slice() {
            [one] => one.clone(),
            [] => {
                let use_ = if trait_name == "Index" { "read" } else { "written" };
                return Err(LowerError::new(
                    at.span,
                    format!("`{name}` is {use_} by index here but has no `#[device]` impl of `{trait_name}` for this index: add `#[device]` to `impl {trait_name}<usize> for {name}`"),
                ));
            }
            _ => {
                return Err(LowerError::new(
                    index.span,
                    format!("`{name}` has several `#[device]` impls of `{trait_name}`: give the index a type (`2usize`)"),
                ))
            }
        };
        self.require(index_var, scalar, index.span)?;
        if !is_pure(index) {
            return Err(LowerError::new(
                index.span,
                format!("the index of a `{name}` is put where its `{}` uses it, so it cannot call a function: bind it first (`let k = ..; v[k]`)", operator.method),
            ));
        }
        if !is_pure(base) {
            return Err(LowerError::new(
                base.span,
                format!("a `{name}` indexed through `{}` is put where the body names `self`, so it cannot be a call's result: bind it first (`let v = ..; v[i]`)", operator.method),
            ));
        }
        let function = self
            .library
            .get(&callee)
            .ok_or_else(|| LowerError::new(at.span, "internal: no indexing function"))?;
        let [receiver, parameter] = function.params.as_slice() else {
            return Err(LowerError::new(
                at.span,
                format!("`{callee}` takes `self` and the index"),
            ));
        };
        let body = match (&function.body.stmts[..], &function.body.tail) {
            ([], Some(tail)) => tail,
            _ => {
                return Err(LowerError::new(
                    function.body.span,
                    format!("`{callee}` is inlined where `{name}` is indexed, so its body is one place expression: {PLACE_BODIES}"),
                ))
            }
        };
        let substitution = Substitution {
            receiver: &receiver.name,
            base,
            parameter: &parameter.name,
            index,
            callee: &callee,
        };
        substitution.place_body(body)
    }
}

/// `self` and the index parameter of an inlined `index`, and what replaces them.
struct Substitution<'a> {
    receiver: &'a str,
    base: &'a Expr,
    parameter: &'a str,
    index: &'a Expr,
    callee: &'a str,
}

impl Substitution<'_> {
    fn refuse(&self, expr: &Expr) -> LowerError {
        LowerError::new(
            expr.span,
            format!("`{}` is inlined where its struct is indexed, so its body is a place: {PLACE_BODIES}", self.callee),
        )
    }

    /// A body returning a reference: `&place`, or a `match`/`if`/block ending in one. The
    /// result has the places without `&`.
    fn place_body(&self, body: &Expr) -> Result<Expr, LowerError> {
        let kind = match &body.kind {
            ExprKind::Reference { place, .. } => return self.place(place),
            ExprKind::Block(block) => ExprKind::Block(self.place_block(block)?),
            ExprKind::If {
                cond,
                then,
                otherwise,
            } => ExprKind::If {
                cond: Box::new(self.value(cond)?),
                then: self.place_block(then)?,
                otherwise: self.place_block(otherwise)?,
            },
            ExprKind::Match { scrutinee, arms } => ExprKind::Match {
                scrutinee: Box::new(self.value(scrutinee)?),
                arms: arms
                    .iter()
                    .map(|arm| {
                        Ok(MatchArm {
                            patterns: arm.patterns.clone(),
                            guard: arm.guard.as_ref().map(|g| self.value(g)).transpose()?,
                            body: self.place_block(&arm.body)?,
                            span: arm.span,
                        })
                    })
                    .collect::<Result<_, LowerError>>()?,
            },
            _ => return Err(self.refuse(body)),
        };
        Ok(Expr {
            kind,
            span: body.span,
        })
    }

    fn place_block(&self, block: &Block) -> Result<Block, LowerError> {
        match (&block.stmts[..], &block.tail) {
            ([], Some(tail)) => Ok(Block {
                stmts: Vec::new(),
                tail: Some(Box::new(self.place_body(tail)?)),
                span: block.span,
            }),
            _ => Err(LowerError::new(
                block.span,
                format!("`{}` is inlined where its struct is indexed: each branch of its body ends in a place (`&self.x`), with no statements", self.callee),
            )),
        }
    }

    /// A place of the body: `self`'s fields and elements at any depth.
    fn place(&self, place: &Expr) -> Result<Expr, LowerError> {
        let kind = match &place.kind {
            ExprKind::Var(name) if name == self.receiver => return Ok(self.base.clone()),
            ExprKind::Field { base, field } => ExprKind::Field {
                base: Box::new(self.place(base)?),
                field: field.clone(),
            },
            ExprKind::Index { base, index } => ExprKind::Index {
                base: Box::new(self.place(base)?),
                index: Box::new(self.value(index)?),
            },
            _ => return Err(self.refuse(place)),
        };
        Ok(Expr {
            kind,
            span: place.span,
        })
    }

    /// A value the body computes from the index (a scrutinee, an element's index, a
    /// guard): arithmetic on the index parameter, literals and `self`'s fields.
    fn value(&self, value: &Expr) -> Result<Expr, LowerError> {
        let kind = match &value.kind {
            ExprKind::Var(name) if name == self.parameter => return Ok(self.index.clone()),
            ExprKind::Var(name) if name == self.receiver => return Ok(self.base.clone()),
            ExprKind::Lit(_) => value.kind.clone(),
            ExprKind::Unary { op, operand } => ExprKind::Unary {
                op: *op,
                operand: Box::new(self.value(operand)?),
            },
            ExprKind::Binary { op, left, right } => ExprKind::Binary {
                op: *op,
                left: Box::new(self.value(left)?),
                right: Box::new(self.value(right)?),
            },
            ExprKind::Cast { value: inner, ty } => ExprKind::Cast {
                value: Box::new(self.value(inner)?),
                ty: *ty,
            },
            ExprKind::Field { .. } | ExprKind::Index { .. } => return self.place(value),
            ExprKind::Len(base) => ExprKind::Len(Box::new(self.place(base)?)),
            _ => {
                return Err(LowerError::new(
                    value.span,
                    format!("`{}` is inlined where its struct is indexed: the index is computed from the index parameter, literals and `self`'s fields (no names of the caller's, constants or calls)", self.callee),
                ))
            }
        };
        Ok(Expr {
            kind,
            span: value.span,
        })
    }
}

/// `place op= value` for an inlined `index_mut` body: the assignment itself for a place,
/// the `match`/`if` whose arms assign theirs otherwise.
fn assignment_of(
    body: Expr,
    op: Option<crate::ast::BinaryOp>,
    value: &Expr,
    span: crate::Span,
) -> Stmt {
    let arm_block = |block: Block| Block {
        stmts: block
            .tail
            .map(|tail| assignment_of(*tail, op, value, span))
            .into_iter()
            .collect(),
        tail: None,
        span: block.span,
    };
    match body.kind {
        ExprKind::Block(block) => Stmt::Block(arm_block(block)),
        ExprKind::If {
            cond,
            then,
            otherwise,
        } => Stmt::If(crate::ast::IfStmt {
            cond: *cond,
            then: arm_block(then),
            otherwise: Some(Box::new(crate::ast::Else::Block(arm_block(otherwise)))),
            span: body.span,
        }),
        ExprKind::Match { scrutinee, arms } => Stmt::Match {
            scrutinee: *scrutinee,
            arms: arms
                .into_iter()
                .map(|arm| MatchArm {
                    body: arm_block(arm.body),
                    ..arm
                })
                .collect(),
            span: body.span,
        },
        _ => Stmt::Assign {
            place: body,
            op,
            value: value.clone(),
            span,
        },
    }
}

/// Whether evaluating `expr` has no effect and gives the same value each time, so it can
/// be put where an inlined body names it (any number of times).
fn is_pure(expr: &Expr) -> bool {
    match &expr.kind {
        ExprKind::Lit(_) | ExprKind::Var(_) | ExprKind::Constant { .. } | ExprKind::Builtin(_) => {
            true
        }
        ExprKind::Unary { operand, .. } => is_pure(operand),
        ExprKind::Binary { left, right, .. } => is_pure(left) && is_pure(right),
        ExprKind::Cast { value, .. } | ExprKind::ConvertTo { value, .. } => is_pure(value),
        ExprKind::Field { base, .. } | ExprKind::Len(base) => is_pure(base),
        ExprKind::Index { base, index } => is_pure(base) && is_pure(index),
        _ => false,
    }
}
