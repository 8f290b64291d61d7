//! Method calls and operators on structs, resolved once the receiver's type is known.
//!
//! The macro captured `v.length()`, `a + b * 2.0`, `-a` and `a += b` without knowing what
//! `v` and `a` are. When inference finds a struct there, the expression becomes the call
//! of that struct's `#[device]` function (see [`crate::methods`]): `Vec3::length(&v)`,
//! `<Vec3 as Add<Vec3>>::add(a, <Vec3 as Mul<f32>>::mul(b, 2.0))`. The call is a new
//! syntax node, kept in the [`TypeTable`](super::TypeTable) and inferred like any call;
//! lowering lowers it in place of the original, so methods are ordinary device calls:
//! instantiated per specialisation, inlined, never indirect.

use std::rc::Rc;

use super::{InferTy, Inference};
use crate::ast::{BinaryOp, Expr, ExprKind, ParamType, Stmt};
use crate::lower::error::LowerError;
use crate::methods::{method_function_name, operator_function_name, OperatorTrait, Rhs};
use crate::Scalar;

impl Inference<'_> {
    /// `receiver.method(args)`: the `#[device]` method of the receiver's struct. `None` for
    /// a method that returns nothing.
    pub(super) fn method_call(
        &mut self,
        expr: &Expr,
        receiver: &Expr,
        method: &str,
        args: &[Expr],
    ) -> Result<Option<InferTy>, LowerError> {
        let name = match self.expr(receiver)? {
            InferTy::Struct(name) if !name.starts_with('(') => name,
            _ => {
                return Err(LowerError::new(
                    expr.span,
                    format!("method `{method}` is not supported here: kernels call the scalar methods of the kernel language (docs/language.md) and the `#[device]` methods of `DeviceCopy` structs"),
                ))
            }
        };
        let callee = method_function_name(name, method);
        let function = self.library.get(&callee).ok_or_else(|| {
            LowerError::new(
                expr.span,
                format!("`{method}` is not a device method of `{name}`: add `#[device]` to its impl block"),
            )
        })?;
        let receiver_argument = match function.params.first() {
            Some(param) if param.name == "self" => match &param.ty {
                ParamType::Reference { mutable, .. } => Expr {
                    kind: ExprKind::Reference {
                        mutable: *mutable,
                        place: Box::new(receiver.clone()),
                    },
                    span: receiver.span,
                },
                _ => receiver.clone(),
            },
            _ => {
                return Err(LowerError::new(
                    expr.span,
                    format!(
                    "`{callee}` is an associated function, not a method: call it as `{callee}(..)`"
                ),
                ))
            }
        };
        let arguments = std::iter::once(receiver_argument)
            .chain(args.iter().cloned())
            .collect();
        self.desugared_call(expr, callee, arguments)
    }

    /// A method call used as a value.
    pub(super) fn method_value(
        &mut self,
        expr: &Expr,
        receiver: &Expr,
        method: &str,
        args: &[Expr],
    ) -> Result<InferTy, LowerError> {
        self.method_call(expr, receiver, method, args)?
            .ok_or_else(|| {
                LowerError::new(
                    expr.span,
                    format!("`{method}` returns nothing, so its call cannot be used as a value"),
                )
            })
    }

    /// `left op right` with a struct on the left: its `#[device]` operator impl.
    pub(super) fn binary_operator(
        &mut self,
        expr: &Expr,
        op: BinaryOp,
        name: &'static str,
        right: &Expr,
    ) -> Result<InferTy, LowerError> {
        let ExprKind::Binary { left, .. } = &expr.kind else {
            return Err(LowerError::new(
                expr.span,
                "internal: not a binary operator",
            ));
        };
        let Some(operator) = OperatorTrait::of_binary(op, false) else {
            return Err(LowerError::new(
                expr.span,
                format!("`{}` does not apply to the struct `{name}`: structs have the operators of their `#[device]` impls of `Add`, `Sub`, `Mul`, `Div`, `Rem` and `Neg`", op.symbol()),
            ));
        };
        let callee = self.operator_callee(name, &operator, right, expr.span)?;
        let arguments = vec![(**left).clone(), right.clone()];
        match self.desugared_call(expr, callee, arguments)? {
            Some(ty) => Ok(ty),
            None => Err(LowerError::new(expr.span, "this operator returns nothing")),
        }
    }

    /// `-operand` of a struct: its `#[device]` impl of `Neg`.
    pub(super) fn negation(
        &mut self,
        expr: &Expr,
        name: &'static str,
        operand: &Expr,
    ) -> Result<InferTy, LowerError> {
        let operator = OperatorTrait::named("Neg")
            .ok_or_else(|| LowerError::new(expr.span, "internal: no `Neg` operator"))?;
        let callee = operator_function_name(name, &operator, Rhs::SelfType);
        if self.library.get(&callee).is_none() {
            return Err(LowerError::new(
                expr.span,
                format!("`{name}` has no `#[device]` impl of `Neg`: add `#[device]` to `impl Neg for {name}`"),
            ));
        }
        match self.desugared_call(expr, callee, vec![operand.clone()])? {
            Some(ty) => Ok(ty),
            None => Err(LowerError::new(expr.span, "`neg` returns nothing")),
        }
    }

    /// `place op= value` of a struct place: its `#[device]` impl of `AddAssign`, ...,
    /// called with `&mut place`.
    pub(super) fn compound_assignment(
        &mut self,
        stmt: &Stmt,
        place: &Expr,
        op: BinaryOp,
        value: &Expr,
        name: &'static str,
    ) -> Result<(), LowerError> {
        let span = place.span;
        let Some(operator) = OperatorTrait::of_binary(op, true) else {
            return Err(LowerError::new(
                span,
                format!("`{}=` does not apply to the struct `{name}`", op.symbol()),
            ));
        };
        let callee = self.operator_callee(name, &operator, value, span)?;
        let target = Expr {
            kind: ExprKind::Reference {
                mutable: true,
                place: Box::new(place.clone()),
            },
            span,
        };
        let call = Rc::new(Expr {
            kind: ExprKind::Call {
                callee: callee.clone(),
                generic_args: Vec::new(),
                args: vec![target, value.clone()],
            },
            span,
        });
        self.desugared_stmts
            .push((stmt as *const Stmt, Rc::clone(&call)));
        self.call(&call, &callee, &[], call_args(&call))?;
        Ok(())
    }

    /// The operator function of `name` for `operator` with `right` on the right: the
    /// struct's own impl for a struct operand, the impl for the operand's scalar type (or,
    /// for an unsuffixed literal, the one impl of a matching kind) otherwise.
    fn operator_callee(
        &mut self,
        name: &'static str,
        operator: &OperatorTrait,
        right: &Expr,
        span: crate::Span,
    ) -> Result<String, LowerError> {
        let missing = |rhs: &str| {
            LowerError::new(
                span,
                format!(
                    "`{name}` has no `#[device]` impl of `{}<{rhs}>`: add `#[device]` to `impl {}<{rhs}> for {name}`",
                    operator.name, operator.name
                ),
            )
        };
        match self.expr(right)? {
            InferTy::Struct(right_name) if right_name == name => {
                let callee = operator_function_name(name, operator, Rhs::SelfType);
                match self.library.get(&callee) {
                    Some(_) => Ok(callee),
                    None => Err(missing(name)),
                }
            }
            InferTy::Scalar(var) => {
                let candidates: Vec<(Scalar, String)> = Scalar::ALL
                    .into_iter()
                    .map(|s| (s, operator_function_name(name, operator, Rhs::Scalar(s))))
                    .filter(|(_, callee)| self.library.get(callee).is_some())
                    .collect();
                let root = self.find(var);
                let fitting: Vec<&(Scalar, String)> = candidates
                    .iter()
                    .filter(|(s, _)| {
                        super::merge(self.constraint[root], super::Constraint::Known(*s)).is_some()
                    })
                    .collect();
                match fitting.as_slice() {
                    [(_, callee)] => Ok(callee.clone()),
                    [] => Err(missing(&match self.constraint[root] {
                        super::Constraint::Known(s) => s.to_string(),
                        _ => "f32".to_owned(),
                    })),
                    _ => Err(LowerError::new(
                        right.span,
                        format!("`{name}` has several `#[device]` impls of `{}` for scalars: give this operand a type (`2.0f32`)", operator.name),
                    )),
                }
            }
            _ => Err(LowerError::new(
                right.span,
                format!("the operators of `{name}` take a `{name}` or a scalar on the right"),
            )),
        }
    }

    /// Replaces `expr` by the call of `callee` with `arguments` and infers the call.
    fn desugared_call(
        &mut self,
        expr: &Expr,
        callee: String,
        arguments: Vec<Expr>,
    ) -> Result<Option<InferTy>, LowerError> {
        let key = expr as *const Expr;
        let call = match self.desugared.iter().find(|(k, _)| *k == key) {
            Some((_, call)) => Rc::clone(call),
            None => {
                let call = Rc::new(Expr {
                    kind: ExprKind::Call {
                        callee: callee.clone(),
                        generic_args: Vec::new(),
                        args: arguments,
                    },
                    span: expr.span,
                });
                self.desugared.push((key, Rc::clone(&call)));
                call
            }
        };
        let result = self.call(&call, &callee, &[], call_args(&call))?;
        // The original node has the call's type too: lowering asks either.
        for node in [&*call as *const Expr, key] {
            match result {
                Some(InferTy::Struct(name)) => self.structs.push((node, name)),
                Some(InferTy::Scalar(var)) => self.exprs.push((node, var, call.span)),
                _ => {}
            }
        }
        Ok(result)
    }
}

/// The arguments of a desugared call.
fn call_args(call: &Expr) -> &[Expr] {
    match &call.kind {
        ExprKind::Call { args, .. } => args,
        _ => &[],
    }
}
