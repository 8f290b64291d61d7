//! The types of expressions: literals, operators, casts, paths, blocks as values, and the
//! dispatch to calls, intrinsics, methods and struct values.

use super::{Binding, Constraint, InferTy, Inference};
use crate::ast::{Builtin, Expr, ExprKind, Literal, UnaryOp, ValueType};
use crate::intrinsics::Intrinsic;
use crate::lower::error::LowerError;
use crate::lower::spec::Resolved;
use crate::{Scalar, Span};

impl Inference<'_> {
    pub(super) fn scalar(&mut self, expr: &Expr) -> Result<usize, LowerError> {
        let ty = self.expr(expr)?;
        self.scalar_of(ty, expr)
    }

    /// The type variable of `expr`, whose type `ty` is, if it is a scalar.
    pub(super) fn scalar_of(&mut self, ty: InferTy, expr: &Expr) -> Result<usize, LowerError> {
        match ty {
            InferTy::Scalar(var) => Ok(var),
            InferTy::Slice { .. }
            | InferTy::Array(_)
            | InferTy::StructSlice { .. }
            | InferTy::Rows(_)
            | InferTy::StructArray(_) => Err(LowerError::new(
                expr.span,
                "a slice or array can only be indexed or asked for its `.len()` here",
            )),
            InferTy::Struct(name) => Err(LowerError::new(
                expr.span,
                format!("a `{name}` is a struct: use one of its fields here"),
            )),
        }
    }

    /// The type of an `if`, `match` or block from its branches' values (of `what`): one
    /// scalar type, unified, or one struct, recorded for the lowering.
    fn branch_values(
        &mut self,
        expr: &Expr,
        values: Vec<(InferTy, Span)>,
        what: &str,
    ) -> Result<InferTy, LowerError> {
        let mut result: Option<InferTy> = None;
        for (value, at) in values {
            result = Some(match (result, value) {
                (None, InferTy::Scalar(v)) => InferTy::Scalar(v),
                (None, InferTy::Struct(name)) => InferTy::Struct(name),
                (Some(InferTy::Scalar(a)), InferTy::Scalar(b)) => {
                    self.unify(a, b, at)?;
                    InferTy::Scalar(a)
                }
                (Some(InferTy::Struct(a)), InferTy::Struct(b)) if a == b => InferTy::Struct(a),
                (Some(InferTy::Struct(a)), InferTy::Struct(b)) => {
                    return Err(LowerError::new(
                        at,
                        format!("this {what}'s branches give a `{a}` and a `{b}`: give one type"),
                    ))
                }
                // An array of one element type from every branch (`if` and blocks; a
                // `match` gives scalars and structs).
                (None, array @ (InferTy::Array(_) | InferTy::Rows(_) | InferTy::StructArray(_)))
                    if what != "`match`" =>
                {
                    array
                }
                (Some(InferTy::Array(a)), InferTy::Array(b)) => {
                    self.unify(a, b, at)?;
                    InferTy::Array(a)
                }
                (Some(InferTy::Rows(a)), InferTy::Rows(b)) => {
                    self.unify(a, b, at)?;
                    InferTy::Rows(a)
                }
                (Some(InferTy::StructArray(a)), InferTy::StructArray(b)) if a == b => {
                    InferTy::StructArray(a)
                }
                (Some(InferTy::Struct(name)), _) | (Some(InferTy::Scalar(_)), InferTy::Struct(name)) => {
                    return Err(LowerError::new(
                        at,
                        format!("this {what}'s branches give a `{name}` and a value of another type: give one type"),
                    ))
                }
                _ => {
                    return Err(LowerError::new(
                        at,
                        "a `match` whose value is an array is not supported in kernels: write instead a local array assigned in each arm (`let mut a = [0.0f32; 2]; match k { 0 => a = b, _ => a = c }`), or an `if`",
                    ))
                }
            });
        }
        match result {
            Some(InferTy::Struct(name)) => {
                self.structs.push((expr as *const Expr, name));
                Ok(InferTy::Struct(name))
            }
            Some(array @ (InferTy::Array(_) | InferTy::Rows(_) | InferTy::StructArray(_))) => {
                self.array_branches.push(expr as *const Expr);
                Ok(array)
            }
            Some(InferTy::Scalar(var)) => {
                self.exprs.push((expr as *const Expr, var, expr.span));
                Ok(InferTy::Scalar(var))
            }
            _ => Err(LowerError::new(
                expr.span,
                format!("a {what} used as a value needs one"),
            )),
        }
    }

    pub(super) fn expr(&mut self, expr: &Expr) -> Result<InferTy, LowerError> {
        let span = expr.span;
        let var = match &expr.kind {
            ExprKind::Lit(Literal::Bool(_)) => self.known(Scalar::Bool),
            ExprKind::Lit(Literal::Int { suffix, .. }) => match suffix {
                Some(s) => self.known(*s),
                None => self.fresh(Constraint::AnyInt),
            },
            ExprKind::Lit(Literal::Float { suffix, .. }) => match suffix {
                Some(s) => self.known(*s),
                None => self.fresh(Constraint::AnyFloat),
            },
            ExprKind::Var(name) => match self.scopes.lookup(name) {
                Some(Binding::Var(var) | Binding::ScalarRef(var)) => var,
                Some(Binding::Slice { elem, mutable }) => {
                    return Ok(InferTy::Slice { elem, mutable })
                }
                Some(Binding::Array(elem, _)) => return Ok(InferTy::Array(elem)),
                Some(Binding::StructArray(name)) => return Ok(InferTy::StructArray(name)),
                Some(Binding::Rows(elem)) => return Ok(InferTy::Rows(elem)),
                Some(Binding::Struct(name) | Binding::StructRef(name)) => {
                    return Ok(InferTy::Struct(name))
                }
                Some(Binding::StructSlice { name, mutable }) => {
                    return Ok(InferTy::StructSlice { name, mutable })
                }
                Some(Binding::TensorMap) => {
                    return Err(LowerError::new(
                        span,
                        format!("`{name}` is a tensor map, which kernels use only as `tensor_map_address(&{name})`"),
                    ))
                }
                None => {
                    return Err(LowerError::new(
                        span,
                        format!("cannot find `{name}` in the kernel"),
                    ))
                }
            },
            ExprKind::Unary { op, operand } => {
                let operand_ty = self.expr(operand)?;
                if let (UnaryOp::Neg, InferTy::Struct(name)) = (op, operand_ty) {
                    return self.negation(expr, name, operand);
                }
                let var = self.scalar_of(operand_ty, operand)?;
                if *op == UnaryOp::Not {
                    let root = self.find(var);
                    if self.constraint[root] == Constraint::AnyFloat {
                        return Err(LowerError::new(span, "`!` does not apply to floats"));
                    }
                }
                var
            }
            ExprKind::Binary { op, left, right } => {
                let left_ty = self.expr(left)?;
                if let InferTy::Struct(name) = left_ty {
                    if op.is_comparison() {
                        return self.struct_comparison(expr, *op, name, left, right);
                    }
                    if !op.is_logical() {
                        return self.binary_operator(expr, *op, name, right);
                    }
                }
                let l = self.scalar_of(left_ty, left)?;
                let right_ty = self.expr(right)?;
                if let InferTy::Struct(name) = right_ty {
                    return self.scalar_left_operator(expr, *op, left, l, name, right);
                }
                let r = self.scalar_of(right_ty, right)?;
                if op.is_logical() {
                    self.require(l, Scalar::Bool, left.span)?;
                    self.require(r, Scalar::Bool, right.span)?;
                    l
                } else if op.is_comparison() {
                    self.unify(l, r, span)?;
                    self.known(Scalar::Bool)
                } else if op.is_shift() {
                    l
                } else {
                    self.unify(l, r, span)?;
                    l
                }
            }
            ExprKind::Cast { value, ty } => {
                self.scalar(value)?;
                self.known(*ty)
            }
            ExprKind::ConvertTo { value, ty } => {
                self.scalar(value)?;
                let to = self.spec.resolve(ty, span)?;
                self.known(to)
            }
            ExprKind::Index { base, index } => {
                let elem = match self.expr(base)? {
                    InferTy::Slice { elem, .. } => self.known(elem),
                    InferTy::Array(elem) => elem,
                    InferTy::StructSlice { name, .. } | InferTy::StructArray(name) => {
                        let i = self.scalar(index)?;
                        self.require(i, Scalar::Usize, index.span)?;
                        self.structs.push((expr as *const Expr, name));
                        return Ok(InferTy::Struct(name));
                    }
                    InferTy::Struct(name) => return self.struct_index(expr, name, base, index),
                    // `m[i]` of an array of arrays: a row, which is indexed in turn.
                    InferTy::Rows(elem) => {
                        let i = self.scalar(index)?;
                        self.require(i, Scalar::Usize, index.span)?;
                        return Ok(InferTy::Array(elem));
                    }
                    InferTy::Scalar(_) => {
                        return Err(LowerError::new(base.span, "only slices and arrays can be indexed"))
                    }
                };
                let i = self.scalar(index)?;
                self.require(i, Scalar::Usize, index.span)?;
                elem
            }
            ExprKind::SplitAt { .. } => {
                return Err(LowerError::new(expr.span, crate::lower::views::SPLIT_AT_LET))
            }
            ExprKind::Closure { .. } => {
                return Err(LowerError::new(expr.span, crate::lower::closures::CLOSURE_PLACES))
            }
            ExprKind::ClosureCall { callee, .. } => {
                return Err(LowerError::new(
                    expr.span,
                    format!("internal: `{callee}(..)` outside an instance made for a closure"),
                ))
            }
            ExprKind::SubSlice {
                base,
                start,
                end,
                mutable,
            } => {
                for bound in start.iter().chain(end) {
                    let b = self.scalar(bound)?;
                    self.require(b, Scalar::Usize, bound.span)?;
                }
                return match self.expr(base)? {
                    InferTy::Slice { elem, .. } => Ok(InferTy::Slice {
                        elem,
                        mutable: *mutable,
                    }),
                    _ => Err(LowerError::new(
                        base.span,
                        "only slices of scalars can be sub-sliced (`&x[a..b]`): index a slice of structs whole",
                    )),
                };
            }
            ExprKind::Len(base) => {
                if matches!(self.expr(base)?, InferTy::Scalar(_)) {
                    return Err(LowerError::new(base.span, "`.len()` applies to slices and arrays"));
                }
                self.known(Scalar::Usize)
            }
            ExprKind::Repeat { .. } => {
                return Err(LowerError::new(
                    span,
                    "an array is only supported as the initial value of a local: `let mut acc = [0.0f32; 8];`",
                ))
            }
            ExprKind::Tuple(_) => {
                return Err(LowerError::new(
                    span,
                    "tuples are only supported as the values of `vstore4`/`vstore2` and as what a `#[device]` function returning a tuple returns",
                ))
            }
            ExprKind::StructLiteral { ty, fields } => {
                let name = self.struct_literal(ty, fields, span)?;
                self.structs.push((expr as *const Expr, name));
                return Ok(InferTy::Struct(name));
            }
            ExprKind::Builtin(builtin) => self.known(match builtin {
                Builtin::GlobalIndex | Builtin::GridStride => Scalar::Usize,
                _ => Scalar::U32,
            }),
            ExprKind::If {
                cond,
                then,
                otherwise,
            } => {
                let values = match self.constant_condition(cond) {
                    // Of constants: only the branch taken exists (see `if_stmt`).
                    Some(true) => vec![(self.block_type(then, span)?, span)],
                    Some(false) => vec![(self.block_type(otherwise, span)?, span)],
                    None => {
                        let c = self.scalar(cond)?;
                        self.require(c, Scalar::Bool, cond.span)?;
                        let a = self.block_type(then, span)?;
                        let b = self.block_type(otherwise, span)?;
                        vec![(a, then.span), (b, otherwise.span)]
                    }
                };
                return self.branch_values(expr, values, "`if`");
            }
            ExprKind::Block(block) => {
                let value = self.block_type(block, span)?;
                return self.branch_values(expr, vec![(value, span)], "block");
            }
            ExprKind::Intrinsic {
                intrinsic: Intrinsic::VectorLoadArray,
                ty,
                args,
            } => return self.vector_array_load(ty.as_ref(), args, span),
            ExprKind::Intrinsic {
                intrinsic, args, ..
            } => match self.intrinsic(*intrinsic, args, span)? {
                Some(var) => var,
                None => {
                    return Err(LowerError::new(
                        span,
                        format!("`{}()` produces no value", intrinsic.name()),
                    ))
                }
            },
            ExprKind::Reference { .. } => {
                return Err(LowerError::new(
                    span,
                    "references are only supported as the target of an atomic",
                ))
            }
            ExprKind::Match { scrutinee, arms } => {
                let s = self.scalar(scrutinee)?;
                let mut values = Vec::new();
                for arm in arms {
                    self.arm_patterns(s, arm)?;
                    values.push((self.block_type(&arm.body, arm.span)?, arm.span));
                }
                if values.is_empty() {
                    return Err(LowerError::new(span, "a `match` used as a value needs arms"));
                }
                return self.branch_values(expr, values, "`match`");
            }
            ExprKind::InlinePtx {
                result, args, op, ..
            } => {
                self.ptx_arguments(args, op.as_deref())?;
                match result {
                    Some(ValueType::Tuple(elements)) => {
                        let scalars = elements
                            .iter()
                            .map(|element| self.library.scalar(self.spec, element, span))
                            .collect::<Result<Vec<_>, _>>()?;
                        let layout = crate::layout::tuple_layout(&scalars).ok_or_else(|| {
                            LowerError::new(span, "this `ptx!` has too many outputs for a tuple")
                        })?;
                        return Ok(InferTy::Struct(layout.name));
                    }
                    Some(ty) => {
                        let scalar = self.library.scalar(self.spec, ty, span)?;
                        self.known(scalar)
                    }
                    None => {
                        return Err(LowerError::new(
                            span,
                            "this `ptx!` has no result type, so it cannot be used as a value: write `ptx!(u32: \"..\")`",
                        ))
                    }
                }
            }
            ExprKind::EnumVariant { ty, variant } => {
                let literal = self.library.variant(ty, variant, span)?;
                self.known(literal.scalar())
            }
            ExprKind::Field { base, field } => {
                let InferTy::Struct(name) = self.expr(base)? else {
                    return Err(LowerError::new(
                        base.span,
                        format!("`.{field}`: only structs have fields"),
                    ));
                };
                let layout = self.library.struct_layout(name, span)?;
                let (_, member) = layout.field(field).ok_or_else(|| {
                    LowerError::new(span, format!("`{name}` has no field `{field}`"))
                })?;
                match self.field_type(&member.ty, span)? {
                    InferTy::Struct(nested) => {
                        self.structs.push((expr as *const Expr, nested));
                        return Ok(InferTy::Struct(nested));
                    }
                    InferTy::Scalar(var) => var,
                    other => return Ok(other),
                }
            }
            // The zero of a struct or an array: what `None` of an `Option<Hit>` carries.
            ExprKind::Constant {
                ty: Some(ValueType::Array { elem, .. }),
                one: false,
            } => return self.array_type(elem, span),
            ExprKind::Constant {
                ty: Some(ty @ ValueType::Struct(_)),
                one: false,
            } => match self.library.resolve_value(self.spec, ty, span)? {
                Resolved::Struct(name) => return Ok(InferTy::Struct(name)),
                Resolved::Scalar(scalar) => self.known(scalar),
            },
            ExprKind::Constant { ty: Some(ty), .. } => {
                let scalar = self.library.scalar(self.spec, ty, span)?;
                self.known(scalar)
            }
            ExprKind::Constant { ty: None, .. } => self.fresh(Constraint::AnyNumber),
            ExprKind::Math {
                function,
                receiver,
                args,
            } => {
                // A struct's own method of the same name as a scalar one (`v.abs()`).
                if let InferTy::Struct(_) = self.expr(receiver)? {
                    return self.method_value(expr, receiver, function.name(), args);
                }
                self.math(*function, receiver, args, span)?
            }
            ExprKind::MethodCall {
                receiver,
                method,
                args,
            } => return self.method_value(expr, receiver, method, args),
            ExprKind::Call {
                callee,
                generic_args,
                args,
            } => match self.call(expr, callee, generic_args, args)? {
                Some(InferTy::Scalar(var)) => var,
                Some(InferTy::Struct(name)) => {
                    self.structs.push((expr as *const Expr, name));
                    return Ok(InferTy::Struct(name));
                }
                Some(other) => return Ok(other),
                None => {
                    return Err(LowerError::new(
                        span,
                        format!(
                            "`{callee}` returns nothing, so its call cannot be used as a value"
                        ),
                    ))
                }
            },
        };
        self.exprs.push((expr as *const Expr, var, span));
        Ok(InferTy::Scalar(var))
    }
}
