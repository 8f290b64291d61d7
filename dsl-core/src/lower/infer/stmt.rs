//! Statements: `let` bindings, assignments, loops, `if`, `match` arms and blocks.

use super::{Binding, Constraint, InferTy, Inference};
use crate::ast::{BinaryOp, Block, Else, Expr, ExprKind, IfStmt, Literal, MatchArm, Pattern, Stmt};
use crate::lower::constant_condition::constant_condition;
use crate::lower::error::LowerError;
use crate::{Scalar, Span};

impl Inference<'_> {
    /// The type variable of a block's value, which must be a scalar.
    pub(super) fn block_value(&mut self, block: &Block, span: Span) -> Result<usize, LowerError> {
        let ty = self.block_type(block, span)?;
        match &block.tail {
            Some(tail) => self.scalar_of(ty, tail),
            None => Err(LowerError::new(span, "this block must end in a value")),
        }
    }

    /// The type of a block's value: a scalar or a struct.
    pub(super) fn block_type(&mut self, block: &Block, span: Span) -> Result<InferTy, LowerError> {
        self.scopes.push();
        let result = (|| {
            for stmt in &block.stmts {
                self.stmt(stmt)?;
            }
            match &block.tail {
                Some(tail) => self.expr(tail),
                None => Err(LowerError::new(span, "this block must end in a value")),
            }
        })();
        self.scopes.pop();
        result
    }

    pub(super) fn block(&mut self, block: &Block) -> Result<(), LowerError> {
        self.scopes.push();
        let result = block.stmts.iter().try_for_each(|stmt| self.stmt(stmt));
        self.scopes.pop();
        result?;
        match &block.tail {
            Some(tail) => Err(LowerError::new(
                tail.span,
                "a kernel block cannot produce a value here: add `;`",
            )),
            None => Ok(()),
        }
    }

    pub(super) fn if_stmt(&mut self, stmt: &IfStmt) -> Result<(), LowerError> {
        // `if WIDTH == 8 { .. }` of constants: only the branch taken exists (as lowering
        // sees it too), so the other may hold code valid only for other constants.
        if let Some(taken) = self.constant_condition(&stmt.cond) {
            return match (taken, stmt.otherwise.as_deref()) {
                (true, _) => self.block(&stmt.then),
                (false, Some(Else::If(nested))) => self.if_stmt(nested),
                (false, Some(Else::Block(block))) => self.block(block),
                (false, None) => Ok(()),
            };
        }
        let c = self.scalar(&stmt.cond)?;
        self.require(c, Scalar::Bool, stmt.cond.span)?;
        self.block(&stmt.then)?;
        match stmt.otherwise.as_deref() {
            Some(Else::If(nested)) => self.if_stmt(nested),
            Some(Else::Block(block)) => self.block(block),
            None => Ok(()),
        }
    }

    pub(super) fn stmt(&mut self, stmt: &Stmt) -> Result<(), LowerError> {
        if self.struct_index_assignment(stmt)?.is_some() {
            return Ok(());
        }
        match stmt {
            Stmt::Let {
                name,
                ty,
                init,
                span,
                ..
            } => self.let_binding(stmt, name, ty, init, span)?,
            Stmt::LetTuple { .. } => self.let_tuple(stmt)?,
            Stmt::Assign {
                place,
                op: Some(op),
                value,
                ..
            } if matches!(self.expr(place)?, InferTy::Struct(_)) => {
                let name = match self.expr(place)? {
                    InferTy::Struct(name) => name,
                    _ => return Err(LowerError::new(place.span, "a struct is expected here")),
                };
                self.compound_assignment(stmt, place, *op, value, name)?;
            }
            Stmt::Assign {
                place,
                op: None,
                value,
                span,
            } if matches!(self.expr(place)?, InferTy::Struct(_)) => {
                let (InferTy::Struct(a), InferTy::Struct(b)) =
                    (self.expr(place)?, self.expr(value)?)
                else {
                    return Err(LowerError::new(*span, "assign a struct of the same type"));
                };
                if a != b {
                    return Err(LowerError::new(
                        *span,
                        format!("mismatched types: `{a}` and `{b}`"),
                    ));
                }
            }
            // `c = b;` of arrays: a copy of every element.
            Stmt::Assign {
                place,
                op: None,
                value,
                span,
            } if matches!(
                self.expr(place)?,
                InferTy::Array(_) | InferTy::StructArray(_) | InferTy::Rows(_)
            ) =>
            {
                match (self.expr(place)?, self.expr(value)?) {
                    (InferTy::Array(a), InferTy::Array(b))
                    | (InferTy::Rows(a), InferTy::Rows(b)) => self.unify(a, b, value.span)?,
                    (InferTy::StructArray(a), InferTy::StructArray(b)) if a == b => {}
                    _ => {
                        return Err(LowerError::new(
                            *span,
                            "assign an array of the same element type",
                        ))
                    }
                }
            }
            Stmt::Assign {
                place, op, value, ..
            } => {
                let p = self.scalar(place)?;
                let v = match (op, &place.kind, self.expr(value)?) {
                    // `best = Some(hit)` where `let mut best = None;` gave no type.
                    (None, ExprKind::Var(name), InferTy::Struct(ty)) => {
                        let (local, shown) = match name.strip_suffix(".1") {
                            Some(option) => (option, format!("Option<{ty}>")),
                            None => (name.as_str(), ty.to_owned()),
                        };
                        return Err(LowerError::new(
                            value.span,
                            format!("`{local}` is given a `{ty}` here, but its `let` does not say it holds a struct: write its type there, `let mut {local}: {shown} = ..;`"),
                        ));
                    }
                    (_, _, ty) => self.scalar_of(ty, value)?,
                };
                if !op.is_some_and(BinaryOp::is_shift) {
                    self.unify(p, v, value.span)?;
                }
            }
            Stmt::If(if_stmt) => self.if_stmt(if_stmt)?,
            Stmt::While { cond, body, .. } => {
                let c = self.scalar(cond)?;
                self.require(c, Scalar::Bool, cond.span)?;
                self.block(body)?;
            }
            Stmt::Loop { body, .. } => self.block(body)?,
            Stmt::For {
                var,
                range,
                body,
                span,
                ..
            } => {
                let start = self.scalar(&range.start)?;
                let end = self.scalar(&range.end)?;
                self.unify(start, end, range.span)?;
                if let Some(step) = &range.step {
                    let s = self.scalar(step)?;
                    self.require(s, Scalar::Usize, step.span)?;
                }
                self.lets.push((stmt as *const Stmt, start, *span));
                self.scopes.push();
                self.scopes.bind(var, Binding::Var(start));
                let result = self.block(body);
                self.scopes.pop();
                result?;
            }
            Stmt::Break { .. } | Stmt::Continue { .. } => {}
            Stmt::Match {
                scrutinee, arms, ..
            } => {
                let s = self.scalar(scrutinee)?;
                for arm in arms {
                    self.arm_patterns(s, arm)?;
                    self.block(&arm.body)?;
                }
            }
            Stmt::Print { args, .. } => {
                for arg in args {
                    self.scalar(arg)?;
                }
            }
            Stmt::Assert { cond, message, .. } => {
                let c = self.scalar(cond)?;
                self.require(c, Scalar::Bool, cond.span)?;
                for arg in message.iter().flat_map(|(_, args)| args) {
                    self.scalar(arg)?;
                }
            }
            Stmt::Return {
                value: Some(value), ..
            } if self.result_array.is_some() => {
                if let Some(wanted) = self.result_array {
                    self.array_value(value, wanted)?;
                }
            }
            Stmt::Return {
                value: Some(value), ..
            } if self.result_struct.is_some() => {
                let name = self.result_struct.unwrap_or_default();
                self.struct_value(value, name)?;
            }
            Stmt::Return { value, span } => match (value, self.result) {
                (None, None) if self.result_struct.is_some() => {
                    return Err(LowerError::new(*span, "`return` needs a value here"))
                }
                (None, None) => {}
                (Some(value), Some(result)) => {
                    let v = self.scalar(value)?;
                    self.unify(v, result, *span)?;
                }
                (Some(_), None) => {
                    return Err(LowerError::new(*span, "this function returns nothing"))
                }
                (None, Some(_)) => {
                    return Err(LowerError::new(*span, "`return` needs a value here"))
                }
            },
            Stmt::Block(block) => self.block(block)?,
            Stmt::Expr(expr) => match &expr.kind {
                ExprKind::Call {
                    callee,
                    generic_args,
                    args,
                } => {
                    self.call(expr, callee, generic_args, args)?;
                }
                ExprKind::MethodCall {
                    receiver,
                    method,
                    args,
                } => {
                    self.method_call(expr, receiver, method, args)?;
                }
                ExprKind::Intrinsic {
                    intrinsic, args, ..
                } => {
                    self.intrinsic(*intrinsic, args, expr.span)?;
                }
                ExprKind::InlinePtx { args, op, .. } => {
                    self.ptx_arguments(args, op.as_deref())?;
                }
                _ => return Err(LowerError::new(expr.span, "this expression has no effect")),
            },
        }
        Ok(())
    }

    /// Patterns have the scrutinee's type; guards are `bool`.
    pub(super) fn arm_patterns(
        &mut self,
        scrutinee: usize,
        arm: &MatchArm,
    ) -> Result<(), LowerError> {
        for pattern in &arm.patterns {
            let literals = match pattern {
                Pattern::Literal(l) => vec![*l],
                Pattern::Range { start, end, .. } => vec![*start, *end],
                Pattern::Variant { ty, variant } => {
                    let repr = self.library.variant(ty, variant, arm.span)?.scalar();
                    let var = self.known(repr);
                    self.unify(var, scrutinee, arm.span)?;
                    vec![]
                }
                Pattern::Wildcard => vec![],
            };
            for literal in literals {
                let var = match literal {
                    Literal::Bool(_) => self.known(Scalar::Bool),
                    Literal::Int {
                        suffix: Some(s), ..
                    } => self.known(s),
                    Literal::Int { suffix: None, .. } => self.fresh(Constraint::AnyInt),
                    Literal::Float { .. } => {
                        return Err(LowerError::new(
                            arm.span,
                            "float patterns are not supported",
                        ))
                    }
                };
                self.unify(var, scrutinee, arm.span)?;
            }
        }
        if let Some(guard) = &arm.guard {
            let g = self.scalar(guard)?;
            self.require(g, Scalar::Bool, guard.span)?;
        }
        Ok(())
    }

    /// The value of a condition of the specialisation's constants, if it is one
    /// ([`constant_condition`]): a name counts while it is bound to its constant, not once a
    /// local shadows it.
    pub(super) fn constant_condition(&self, cond: &Expr) -> Option<bool> {
        constant_condition(cond, &|name| {
            let (var, value) = self.constant_bindings.get(name)?;
            match self.scopes.lookup(name) {
                Some(Binding::Var(bound)) if bound == *var => Some(*value),
                _ => None,
            }
        })
    }
}
