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
use crate::ast::UnaryOp;
use crate::ast::{BinaryOp, Expr, ExprKind, ParamType, Stmt};
use crate::layout::base_name;
use crate::lower::error::LowerError;
use crate::methods::{
    method_function_name, operator_function_name, scalar_left_function_name,
    trait_default_function_name, trait_method_function_name, user_trait_function_name,
    OperatorTrait, Rhs,
};
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
        let callee = self.method_callee(name, method, expr.span)?;
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

    /// The function `owner.method(..)` (or `Owner::method(..)`) calls, as Rust finds it:
    /// the inherent method first, then the one user trait's impl that has it, or that
    /// trait's default method. Two traits with the method are ambiguous, as in Rust.
    pub(super) fn method_callee(
        &self,
        owner: &str,
        method: &str,
        span: crate::Span,
    ) -> Result<String, LowerError> {
        // A generic struct's instance (`Pair<f32>`) has the functions of its impl blocks,
        // captured for the struct (`Pair::sum`).
        let instance = owner;
        let owner = crate::layout::base_name(owner);
        let inherent = method_function_name(owner, method);
        // In an instance for a type parameter bound to `owner` (`S: Shape`, `S =
        // Square`), Rust sees only the bound's methods through `S`: a trait's method wins
        // over an inherent one of the same name there, as it loses everywhere else.
        let through_bound = self.spec.structs.iter().any(|(_, s)| *s == instance);
        if self.library.get(&inherent).is_some() && !through_bound {
            return Ok(inherent);
        }
        let mut found: Vec<String> = Vec::new();
        for block in crate::methods::blocks_of(owner) {
            let Some(trait_name) = block.trait_name else {
                continue;
            };
            let written = user_trait_function_name(owner, trait_name, method);
            let default = trait_default_function_name(trait_name, method);
            let callee = [written, default]
                .into_iter()
                .find(|name| self.library.get(name).is_some());
            if let Some(callee) = callee {
                if !found.contains(&callee) {
                    found.push(callee);
                }
            }
        }
        match found.len() {
            0 => Ok(inherent),
            _ if through_bound && self.library.get(&inherent).is_some() && found.len() > 1 => {
                Ok(inherent)
            }
            1 => Ok(found.remove(0)),
            _ => Err(LowerError::new(
                span,
                format!(
                    "`{method}` of `{owner}` is ambiguous: it is a method of several traits ({}); call one as `<{owner} as Trait>::{method}(..)`",
                    found.join(", ")
                ),
            )),
        }
    }

    /// `item` of `owner`'s impl of the user trait `trait_name`: the impl's own function,
    /// or the trait's default method where the impl keeps it. `None` when `owner` has no
    /// `#[device]` impl of the trait with that item.
    pub(super) fn trait_method_callee(
        &self,
        owner: &str,
        trait_name: &str,
        item: &str,
    ) -> Option<String> {
        let owner = crate::layout::base_name(owner);
        crate::methods::blocks_of(owner).find(|b| b.trait_name == Some(trait_name))?;
        [
            user_trait_function_name(owner, trait_name, item),
            trait_default_function_name(trait_name, item),
        ]
        .into_iter()
        .find(|name| self.library.get(name).is_some())
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

    /// `left op right` with a scalar on the left and a struct on the right (`2.0 * v`): the
    /// scalar's `#[device]` impl with the struct on the right (`impl Mul<Vec3> for f32`),
    /// for the scalar type `left` (of type variable `left_var`) can have.
    pub(super) fn scalar_left_operator(
        &mut self,
        expr: &Expr,
        op: BinaryOp,
        left: &Expr,
        left_var: usize,
        name: &'static str,
        right: &Expr,
    ) -> Result<InferTy, LowerError> {
        let symbol = op.symbol();
        let Some(operator) = OperatorTrait::of_binary(op, false) else {
            return Err(LowerError::new(
                expr.span,
                format!("`{symbol}` does not apply to a scalar and the struct `{name}`: structs have the operators of their `#[device]` impls of `Add`, `Sub`, `Mul`, `Div` and `Rem`"),
            ));
        };
        let root = self.find(left_var);
        let fitting: Vec<(Scalar, String)> = Scalar::ALL
            .into_iter()
            .map(|s| (s, scalar_left_function_name(s, &operator, base_name(name))))
            .filter(|(_, callee)| self.library.get(callee).is_some())
            .filter(|(s, _)| {
                super::merge(self.constraint[root], super::Constraint::Known(*s)).is_some()
            })
            .collect();
        let (scalar, callee) = match fitting.as_slice() {
            [one] => one.clone(),
            [] => {
                let scalar = match self.constraint[root] {
                    super::Constraint::Known(s) => s.to_string(),
                    _ => "f32".to_owned(),
                };
                return Err(LowerError::new(
                    expr.span,
                    format!("`{scalar} {symbol} {name}` needs a `#[device]` impl of `{}<{name}>` for `{scalar}`: add `#[device] impl {}<{name}> for {scalar}` (or write `v {symbol} s` with an impl for `{name}`)", operator.name, operator.name),
                ));
            }
            _ => {
                return Err(LowerError::new(
                    left.span,
                    format!("several scalars have a `#[device]` impl of `{}<{name}>`: give this operand a type (`2.0f32`)", operator.name),
                ))
            }
        };
        self.require(left_var, scalar, left.span)?;
        match self.desugared_call(expr, callee, vec![left.clone(), right.clone()])? {
            Some(ty) => Ok(ty),
            None => Err(LowerError::new(expr.span, "this operator returns nothing")),
        }
    }

    /// `left == right` and `left != right` of structs: the struct's `#[device]` impl of
    /// `PartialEq` (`!=` is its `ne`, or `!eq` as `PartialEq`'s default), with both
    /// operands by reference, as `PartialEq::eq(&a, &b)` takes them.
    pub(super) fn struct_comparison(
        &mut self,
        expr: &Expr,
        op: BinaryOp,
        name: &'static str,
        left: &Expr,
        right: &Expr,
    ) -> Result<InferTy, LowerError> {
        let symbol = op.symbol();
        if !matches!(op, BinaryOp::Eq | BinaryOp::Ne) {
            return Err(LowerError::new(
                expr.span,
                format!("`{symbol}` does not apply to the struct `{name}`: structs compare with `==` and `!=` (a `#[device] impl PartialEq`); compare fields for an order"),
            ));
        }
        match self.expr(right)? {
            InferTy::Struct(right_name) if right_name == name => {}
            _ => {
                return Err(LowerError::new(
                    right.span,
                    format!("a `{name}` compares with another `{name}`"),
                ))
            }
        }
        let eq = OperatorTrait::named("PartialEq")
            .ok_or_else(|| LowerError::new(expr.span, "internal: no `PartialEq` operator"))?;
        let callee_of =
            |method: &str| trait_method_function_name(base_name(name), &eq, Rhs::SelfType, method);
        if self.library.get(&callee_of("eq")).is_none() {
            return Err(LowerError::new(
                expr.span,
                format!("`{name}` has no `#[device]` impl of `PartialEq`: add `#[device]` to `impl PartialEq for {name} {{ fn eq(&self, other: &Self) -> bool {{ .. }} }}` (a `#[derive(PartialEq)]` is host code the kernel cannot see; compare the fields or write the impl)"),
            ));
        }
        let by_reference = |operand: &Expr| Expr {
            kind: ExprKind::Reference {
                mutable: false,
                place: Box::new(operand.clone()),
            },
            span: operand.span,
        };
        let arguments = vec![by_reference(left), by_reference(right)];
        let call = |callee: String| Expr {
            kind: ExprKind::Call {
                callee,
                generic_args: Vec::new(),
                args: arguments.clone(),
            },
            span: expr.span,
        };
        let desugared = match op {
            BinaryOp::Ne if self.library.get(&callee_of("ne")).is_some() => call(callee_of("ne")),
            BinaryOp::Ne => Expr {
                kind: ExprKind::Unary {
                    op: UnaryOp::Not,
                    operand: Box::new(call(callee_of("eq"))),
                },
                span: expr.span,
            },
            _ => call(callee_of("eq")),
        };
        let key = expr as *const Expr;
        let desugared = match self.desugared.iter().find(|(k, _)| *k == key) {
            Some((_, existing)) => Rc::clone(existing),
            None => {
                let desugared = Rc::new(desugared);
                self.desugared.push((key, Rc::clone(&desugared)));
                desugared
            }
        };
        let ty = self.expr(&desugared)?;
        let var = self.scalar_of(ty, &desugared)?;
        self.require(var, Scalar::Bool, expr.span)?;
        self.exprs.push((key, var, expr.span));
        Ok(InferTy::Scalar(var))
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
        let callee = operator_function_name(base_name(name), &operator, Rhs::SelfType);
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
                let callee = operator_function_name(base_name(name), operator, Rhs::SelfType);
                match self.library.get(&callee) {
                    Some(_) => Ok(callee),
                    None => Err(missing(name)),
                }
            }
            InferTy::Scalar(var) => {
                let candidates: Vec<(Scalar, String)> = Scalar::ALL
                    .into_iter()
                    .map(|s| {
                        (
                            s,
                            operator_function_name(base_name(name), operator, Rhs::Scalar(s)),
                        )
                    })
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
