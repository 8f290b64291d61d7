//! Expressions: each `ast::Expr` becomes an IR expression tree; what has no expression
//! of its own (blocks and `if`s used as values, short-circuit logic) writes a temporary.

use super::views::SPLIT_AT_LET;
use super::*;

impl Lowerer<'_, '_> {
    pub(super) fn expr(
        &mut self,
        expr: &Expr,
        block: &mut Block,
    ) -> Result<Handle<Expression>, LowerError> {
        let types = self.types;
        if let Some(call) = types.desugared(expr) {
            // A method call or struct operator: the call of the struct's device function.
            return self.expr(call, block);
        }
        let span = expr.span;
        Ok(match &expr.kind {
            ExprKind::Lit(lit) => {
                let ty = self.type_of(expr)?;
                let literal = match *lit {
                    ast::Literal::Bool(b) => Literal::Bool(b),
                    ast::Literal::Int { value, .. } if ty.is_float() => Literal::Float {
                        value: value as f64,
                        ty,
                    },
                    ast::Literal::Int { value, .. } => Literal::Int { bits: value, ty },
                    ast::Literal::Float { value, .. } => Literal::Float { value, ty },
                };
                self.literal(literal, span)
            }
            ExprKind::Var(name) => match self.scopes.lookup(name) {
                Some(Binding::Argument(index)) if self.is_reference_argument(index) => {
                    // `&S`: its value is the struct it points to.
                    let pointer = self.expr_node(Expression::FunctionArgument(index), span);
                    self.expr_node(Expression::Load { pointer }, span)
                }
                Some(Binding::Argument(index)) => {
                    self.expr_node(Expression::FunctionArgument(index), span)
                }
                Some(Binding::Local(local)) => self.load_local(local, span),
                Some(Binding::Array(..) | Binding::ArrayArgument(..)) => {
                    return Err(LowerError::new(
                        span,
                        format!("the array `{name}` can only be indexed or asked for its `.len()`"),
                    ))
                }
                Some(Binding::Shared(shared)) => {
                    self.expr_node(Expression::SharedSlice(shared), span)
                }
                Some(Binding::RawSlice {
                    address,
                    length,
                    elem,
                    mutable,
                }) => {
                    let address = self.load_local(address, span);
                    let length = self.load_local(length, span);
                    self.expr_node(
                        Expression::RawSlice {
                            address,
                            length,
                            elem,
                            mutable,
                        },
                        span,
                    )
                }
                Some(Binding::View(view)) => self.view_expr(view, span),
                Some(Binding::Constant(value)) => {
                    // The inferred type wins: a `usize` const used where rustc saw it.
                    let literal = match (value, self.type_of(expr)?) {
                        (Literal::Int { bits, .. }, ty) if ty.is_integer() => {
                            Literal::Int { bits, ty }
                        }
                        (other, _) => other,
                    };
                    self.literal(literal, span)
                }
                None => {
                    return Err(LowerError::new(
                        span,
                        format!("cannot find `{name}` in the kernel"),
                    ))
                }
            },
            ExprKind::Unary { op, operand } => {
                let operand = self.expr(operand, block)?;
                self.expr_node(Expression::Unary { op: *op, operand }, span)
            }
            ExprKind::Binary { op, left, right } => {
                let left_ty = self.type_of(left)?;
                let l = self.expr(left, block)?;
                if op.is_logical() && contains_call(right) {
                    return self.guarded_logical(*op == BinaryOp::And, l, right, span, block);
                }
                let l = self.ordered(l, left_ty, &[right], span, block);
                let mut r = self.expr(right, block)?;
                match op {
                    BinaryOp::And | BinaryOp::Or => self.expr_node(
                        Expression::Logical {
                            and: *op == BinaryOp::And,
                            left: l,
                            right: r,
                        },
                        span,
                    ),
                    _ => {
                        if op.is_shift() && self.type_of(right)? != left_ty {
                            // Rust shifts by any integer type; the IR shifts by the same type.
                            r = self.cast(r, left_ty, right.span);
                        }
                        self.binary(*op, l, r, span)
                    }
                }
            }
            ExprKind::Cast { value, ty } => {
                let value = self.expr(value, block)?;
                self.cast(value, *ty, span)
            }
            ExprKind::ConvertTo { value, ty } => {
                let to = self.spec.resolve(ty, span)?;
                let value = self.expr(value, block)?;
                self.cast(value, to, span)
            }
            ExprKind::Index { base, index } => {
                let pointer = self.element_pointer(base, index, block)?;
                self.expr_node(Expression::Load { pointer }, span)
            }
            ExprKind::Len(slice) => {
                // A local array's or an array field's length is a constant.
                let argument_len = match &slice.kind {
                    ExprKind::Var(name) => match self.scopes.lookup(name) {
                        Some(Binding::ArrayArgument(_, len)) => Some(len),
                        _ => None,
                    },
                    _ => None,
                };
                let len = match self.array_binding(slice) {
                    Some((_, len)) => Some(len),
                    None => argument_len
                        .or(self.row_len(slice))
                        .or(self.array_field_len(slice)?),
                };
                match len {
                    Some(len) => self.int(u64::from(len), Scalar::Usize, span),
                    None => {
                        let slice = self.expr(slice, block)?;
                        self.expr_node(Expression::SliceLength { slice }, span)
                    }
                }
            }
            ExprKind::Match { scrutinee, arms } => {
                let ty = self.value_type_of(expr)?;
                let result = self.local("match.value", ty, span);
                self.lower_match(scrutinee, arms, Some(result), span, block)?;
                self.load_local(result, span)
            }
            ExprKind::EnumVariant { ty, variant } => {
                let library = self.program.library;
                let literal = library.variant(ty, variant, span)?;
                self.literal(literal, span)
            }
            ExprKind::Field { base, field } => {
                let pointer = self.field_pointer(base, field, span, block)?;
                self.expr_node(Expression::Load { pointer }, span)
            }
            ExprKind::InlinePtx { template, args, .. } => {
                match self.inline_ptx(expr, template, args, block, true)? {
                    Some(value) => value,
                    None => return Err(LowerError::new(span, "this `ptx!` has no result")),
                }
            }
            ExprKind::Tuple(values) => {
                // What a function returning a tuple returns (inference allows no other).
                let ty = self.function.result.ok_or_else(|| {
                    LowerError::new(span, "tuples are only supported in `let` and `vstore`")
                })?;
                let fields: Vec<(u32, &Expr)> = (0..).zip(values).collect();
                self.compose(ty, &fields, span, block)?
            }
            ExprKind::StructLiteral { ty, fields } => {
                // A generic struct's literal without arguments: the instance inferred.
                let ty = self.types.struct_expr(expr).unwrap_or(ty);
                let struct_ty = self.struct_type(ty, span)?;
                let TypeInner::Struct { members, .. } = &self.program.module.types[struct_ty].inner
                else {
                    return Err(LowerError::new(span, format!("`{ty}` is not a struct")));
                };
                let mut values = Vec::new();
                for (name, value) in fields {
                    let index = members
                        .iter()
                        .position(|m| &m.name == name)
                        .ok_or_else(|| {
                            LowerError::new(value.span, format!("`{ty}` has no field `{name}`"))
                        })?;
                    values.push((index as u32, value));
                }
                self.compose(struct_ty, &values, span, block)?
            }
            ExprKind::Repeat { .. } => {
                return Err(LowerError::new(span, "arrays are only supported in `let`"))
            }
            ExprKind::Builtin(builtin) => self.builtin(*builtin, span),
            ExprKind::If {
                cond,
                then,
                otherwise,
            } => {
                let ty = self.value_type_of(expr)?;
                let result = self.local("if.value", ty, span);
                // On a constant of the specialisation only the branch taken is lowered.
                let (condition, accept, reject) = match self.constant_condition(cond) {
                    Some(taken) => {
                        let chosen = if taken { then } else { otherwise };
                        let condition = self.literal(Literal::Bool(true), span);
                        (condition, self.value_block(chosen, result)?, Block::new())
                    }
                    None => {
                        let condition = self.expr(cond, block)?;
                        let accept = self.value_block(then, result)?;
                        let reject = self.value_block(otherwise, result)?;
                        (condition, accept, reject)
                    }
                };
                block.push(
                    Statement::If {
                        condition,
                        accept,
                        reject,
                    },
                    span,
                );
                self.load_local(result, span)
            }
            ExprKind::Block(inner) => {
                self.scopes.push();
                let result = self.block_value_into(inner, block);
                self.scopes.pop();
                result?
            }
            // The zero of a struct: what `None` of an `Option<Hit>` carries.
            ExprKind::Constant {
                one: false,
                ty: Some(written @ ValueType::Struct(_)),
            } if self.types.expr(expr).is_none() => {
                let library = self.program.library;
                let Resolved::Struct(name) = library.resolve_value(self.spec, written, span)?
                else {
                    return Err(LowerError::new(span, "internal: a zero struct of an enum"));
                };
                let ty = self.struct_type(name, span)?;
                let local = self.local("struct.zero", ty, span);
                let pointer = self.expr_node(Expression::LocalPointer(local), span);
                self.store_zero(pointer, ty, span, block);
                self.load_local(local, span)
            }
            ExprKind::Constant { one, ty: written } => {
                let ty = self.type_of(expr)?;
                let value = u64::from(*one);
                let literal = if ty.is_float() {
                    // A `sum()`'s start is -0.0, as Rust's `Sum` of floats starts (so that
                    // the sum of `[-0.0]` is -0.0).
                    let start = if written.is_none() && !one {
                        -0.0
                    } else {
                        value as f64
                    };
                    Literal::Float { value: start, ty }
                } else {
                    Literal::Int { bits: value, ty }
                };
                self.literal(literal, span)
            }
            ExprKind::Math {
                function,
                receiver,
                args,
            } => {
                let receiver_ty = self.type_of(receiver)?;
                if !function.applies_to(receiver_ty) {
                    return Err(LowerError::new(
                        span,
                        format!("`{}` does not apply to `{receiver_ty}`", function.name()),
                    ));
                }
                let argument = self.expr(receiver, block)?;
                let later: Vec<&Expr> = args.iter().collect();
                let argument = self.ordered(argument, receiver_ty, &later, span, block);
                let mut rest = Vec::new();
                for (k, arg) in args.iter().enumerate() {
                    let value = self.expr(arg, block)?;
                    let later: Vec<&Expr> = args[k + 1..].iter().collect();
                    let ty = self.type_of(arg)?;
                    rest.push(self.ordered(value, ty, &later, span, block));
                }
                self.expr_node(
                    Expression::Math {
                        function: *function,
                        argument,
                        arg1: rest.first().copied(),
                        arg2: rest.get(1).copied(),
                    },
                    span,
                )
            }
            ExprKind::Intrinsic {
                intrinsic, args, ..
            } => match self.intrinsic(expr, *intrinsic, args, block, true)? {
                Some(value) => value,
                None => return Err(LowerError::new(span, "this intrinsic produces no value")),
            },
            ExprKind::SplitAt { .. } => return Err(LowerError::new(span, SPLIT_AT_LET)),
            ExprKind::Closure { .. } | ExprKind::ClosureCall { .. } => {
                return Err(LowerError::new(span, super::closures::CLOSURE_PLACES))
            }
            ExprKind::SubSlice {
                base, start, end, ..
            } => {
                let base = self.expr(base, block)?;
                let start = match start {
                    Some(start) => self.expr(start, block)?,
                    None => self.int(0, Scalar::Usize, span),
                };
                let end = end.as_ref().map(|end| self.expr(end, block)).transpose()?;
                self.expr_node(Expression::SubSlice { base, start, end }, span)
            }
            ExprKind::Reference { .. } => {
                return Err(LowerError::new(
                    span,
                    "references are only supported as the target of an atomic",
                ))
            }
            ExprKind::MethodCall { .. } => {
                return Err(LowerError::new(
                    span,
                    "internal: a method call inference did not resolve",
                ))
            }
            ExprKind::Call { .. } => match self.call(expr, block, true)? {
                Some(value) => value,
                None => return Err(LowerError::new(span, "this call returns nothing")),
            },
        })
    }

    /// The value of a condition of the specialisation's constants (`if BF16`, `if WIDTH ==
    /// 8 && !F16`), if it is one: see [`super::constant_condition`].
    pub(super) fn constant_condition(&self, expr: &Expr) -> Option<bool> {
        super::constant_condition::constant_condition(
            expr,
            &|name| match self.scopes.lookup(name) {
                Some(Binding::Constant(value)) => Some(value),
                _ => None,
            },
        )
    }

    pub(super) fn constant_value(&self, expr: &Expr) -> Result<u64, LowerError> {
        let error = || {
            LowerError::new(
                expr.span,
                "the length of a shared array must be a constant: literals, const generics and #[comptime] parameters",
            )
        };
        Ok(match &expr.kind {
            ExprKind::Lit(ast::Literal::Int { value, .. }) => *value,
            ExprKind::Var(name) => match self.scopes.lookup(name) {
                Some(Binding::Constant(Literal::Int { bits, .. })) => bits,
                _ => return Err(error()),
            },
            ExprKind::Cast { value, .. } => self.constant_value(value)?,
            ExprKind::Binary { op, left, right } => {
                let (l, r) = (self.constant_value(left)?, self.constant_value(right)?);
                match op {
                    BinaryOp::Add => l.checked_add(r),
                    BinaryOp::Sub => l.checked_sub(r),
                    BinaryOp::Mul => l.checked_mul(r),
                    BinaryOp::Div => l.checked_div(r),
                    BinaryOp::Shl => u32::try_from(r).ok().and_then(|r| l.checked_shl(r)),
                    _ => None,
                }
                .ok_or_else(error)?
            }
            _ => return Err(error()),
        })
    }

    /// `left && right` / `left || right` whose right side calls a function: the call must
    /// only run when `left` does not decide the result, so the right side is lowered in a
    /// branch that writes a temporary.
    pub(super) fn guarded_logical(
        &mut self,
        and: bool,
        left: Handle<Expression>,
        right: &Expr,
        span: Span,
        block: &mut Block,
    ) -> Result<Handle<Expression>, LowerError> {
        let bool_ty = self.scalar_type(Scalar::Bool);
        let result = self.local("logic.value", bool_ty, span);
        block.push(
            Statement::LocalStore {
                local: result,
                value: left,
            },
            span,
        );
        let mut evaluate = Block::new();
        let value = self.expr(right, &mut evaluate)?;
        evaluate.push(
            Statement::LocalStore {
                local: result,
                value,
            },
            span,
        );
        let condition = self.load_local(result, span);
        let (accept, reject) = if and {
            (evaluate, Block::new())
        } else {
            (Block::new(), evaluate)
        };
        block.push(
            Statement::If {
                condition,
                accept,
                reject,
            },
            span,
        );
        Ok(self.load_local(result, span))
    }

    /// Lowers a block whose tail value is stored into `result`.
    pub(super) fn value_block(
        &mut self,
        block: &ast::Block,
        result: Handle<LocalVariable>,
    ) -> Result<Block, LowerError> {
        let mut out = Block::new();
        self.scopes.push();
        let value = self.block_value_into(block, &mut out);
        self.scopes.pop();
        out.push(
            Statement::LocalStore {
                local: result,
                value: value?,
            },
            block.span,
        );
        Ok(out)
    }

    /// Lowers the statements of `block` into `out` and returns its tail value.
    pub(super) fn block_value_into(
        &mut self,
        block: &ast::Block,
        out: &mut Block,
    ) -> Result<Handle<Expression>, LowerError> {
        // Its value is read after the block: no droppable local may end in it.
        self.open_drop_scope(false);
        let result = block
            .stmts
            .iter()
            .try_for_each(|stmt| self.stmt(stmt, out))
            .and_then(|()| match &block.tail {
                Some(tail) => self.expr(tail, out),
                None => Err(LowerError::new(
                    block.span,
                    "this block must end in a value",
                )),
            });
        self.discard_drop_scope();
        result
    }

    /// A struct value of type `ty` built from `fields` (member index, value), evaluated in
    /// order into a temporary: a struct literal, or the tuple a function returns.
    pub(super) fn compose(
        &mut self,
        ty: Handle<Type>,
        fields: &[(u32, &Expr)],
        span: Span,
        block: &mut Block,
    ) -> Result<Handle<Expression>, LowerError> {
        let local = self.local("struct.value", ty, span);
        for &(field, value) in fields {
            let base = self.expr_node(Expression::LocalPointer(local), span);
            let pointer = self.expr_node(Expression::FieldPointer { base, field }, span);
            let member_ty = match &self.program.module.types[ty].inner {
                TypeInner::Struct { members, .. } => members.get(field as usize).map(|m| m.ty),
                _ => None,
            };
            let array_len = match member_ty.map(|t| &self.program.module.types[t].inner) {
                Some(TypeInner::Array { len, .. }) => Some(*len),
                _ => None,
            };
            match array_len {
                Some(len) => self.fill_array(pointer, len, value, block)?,
                None => {
                    let value = self.expr(value, block)?;
                    block.push(Statement::Store { pointer, value }, span);
                }
            }
        }
        Ok(self.load_local(local, span))
    }

    /// The IR type of a scalar or struct value (an `if`'s, a `match`'s).
    fn value_type_of(&mut self, expr: &Expr) -> Result<Handle<Type>, LowerError> {
        match self.types.struct_expr(expr) {
            Some(name) => self.struct_type(name, expr.span),
            None => {
                let ty = self.type_of(expr)?;
                Ok(self.scalar_type(ty))
            }
        }
    }

    /// Copies the value of type `ty` at `from` to `to`, an array element by element.
    pub(super) fn copy_value(
        &mut self,
        to: Handle<Expression>,
        from: Handle<Expression>,
        ty: Handle<Type>,
        span: Span,
        block: &mut Block,
    ) {
        if let TypeInner::Array { base, len } = self.program.module.types[ty].inner {
            for k in 0..len {
                let at = self.int(u64::from(k), Scalar::Usize, span);
                let into = self.expr_node(
                    Expression::MemberElement {
                        array: to,
                        index: at,
                    },
                    span,
                );
                let at = self.int(u64::from(k), Scalar::Usize, span);
                let out_of = self.expr_node(
                    Expression::MemberElement {
                        array: from,
                        index: at,
                    },
                    span,
                );
                self.copy_value(into, out_of, base, span, block);
            }
            return;
        }
        let value = self.expr_node(Expression::Load { pointer: from }, span);
        block.push(Statement::Store { pointer: to, value }, span);
    }

    /// Stores the zero of `ty` (every scalar it holds 0, `false`) at `pointer`.
    pub(super) fn store_zero(
        &mut self,
        pointer: Handle<Expression>,
        ty: Handle<Type>,
        span: Span,
        block: &mut Block,
    ) {
        match self.program.module.types[ty].inner.clone() {
            TypeInner::Scalar(scalar) => {
                let zero = match scalar {
                    Scalar::Bool => Literal::Bool(false),
                    s if s.is_float() => Literal::Float { value: 0.0, ty: s },
                    s => Literal::Int { bits: 0, ty: s },
                };
                let value = self.literal(zero, span);
                block.push(Statement::Store { pointer, value }, span);
            }
            TypeInner::Struct { members, .. } => {
                for (field, member) in (0u32..).zip(&members) {
                    let at = self.expr_node(
                        Expression::FieldPointer {
                            base: pointer,
                            field,
                        },
                        span,
                    );
                    self.store_zero(at, member.ty, span, block);
                }
            }
            TypeInner::Array { base, len } => {
                for k in 0..len {
                    let index = self.int(u64::from(k), Scalar::Usize, span);
                    let at = self.expr_node(
                        Expression::MemberElement {
                            array: pointer,
                            index,
                        },
                        span,
                    );
                    self.store_zero(at, base, span, block);
                }
            }
            // Pointers, slices and tensor maps are not fields of a value kernels build.
            _ => {}
        }
    }

    /// Writes the array field at `pointer` (of `len` elements) from `value`: `[v; N]`
    /// (one evaluation of `v`, stored to every element) or a local array (copied element
    /// by element), as C++ copies a `float v[4]` member.
    fn fill_array(
        &mut self,
        pointer: Handle<Expression>,
        len: u32,
        value: &Expr,
        block: &mut Block,
    ) -> Result<(), LowerError> {
        let span = value.span;
        let source = match &value.kind {
            // The zero of an array: what `None` of an `Option<[f32; 2]>` carries.
            ExprKind::Constant {
                ty: Some(ValueType::Array { .. }),
                one: false,
            } => {
                let ty = self.pointer_base(pointer)?;
                self.store_zero(pointer, ty, span, block);
                return Ok(());
            }
            ExprKind::Repeat { value: element, .. } => {
                let element = self.expr(element, block)?;
                let ty = match self.program.module.types[self.pointer_base(pointer)?].inner {
                    TypeInner::Array { base, .. } => base,
                    _ => return Err(LowerError::new(span, "internal: not an array field")),
                };
                let local = self.local("array.element", ty, span);
                block.push(Statement::LocalStore { local, value: element }, span);
                Err(local)
            }
            _ => match self.array_binding(value) {
                Some((local, given)) if given == len => Ok(local),
                _ => {
                    return Err(LowerError::new(
                        span,
                        format!("an array field of {len} elements takes `[value; {len}]` or a local array of {len} elements"),
                    ))
                }
            },
        };
        for k in 0..len {
            let index = self.int(u64::from(k), Scalar::Usize, span);
            let element = self.expr_node(
                Expression::MemberElement {
                    array: pointer,
                    index,
                },
                span,
            );
            let value = match source {
                Ok(array) => {
                    let index = self.int(u64::from(k), Scalar::Usize, span);
                    let from = self.expr_node(
                        Expression::ArrayElement {
                            local: array,
                            index,
                        },
                        span,
                    );
                    self.expr_node(Expression::Load { pointer: from }, span)
                }
                Err(element) => self.load_local(element, span),
            };
            block.push(
                Statement::Store {
                    pointer: element,
                    value,
                },
                span,
            );
        }
        Ok(())
    }

    /// The type a pointer expression (a field pointer of a local being built) points to.
    pub(super) fn pointer_base(
        &self,
        pointer: Handle<Expression>,
    ) -> Result<Handle<Type>, LowerError> {
        let Expression::FieldPointer { base, field } = self.function.expressions[pointer] else {
            return Err(LowerError::new(
                Span::default(),
                "internal: not a field pointer",
            ));
        };
        let Expression::LocalPointer(local) = self.function.expressions[base] else {
            return Err(LowerError::new(
                Span::default(),
                "internal: not a local's field",
            ));
        };
        match &self.program.module.types[self.function.locals[local].ty].inner {
            TypeInner::Struct { members, .. } => members
                .get(field as usize)
                .map(|m| m.ty)
                .ok_or_else(|| LowerError::new(Span::default(), "internal: no such field")),
            _ => Err(LowerError::new(
                Span::default(),
                "internal: not a struct local",
            )),
        }
    }
}

impl Lowerer<'_, '_> {
    /// An operand's `value`, kept from what the `later` operands run first. Rust evaluates
    /// operands left to right, but a later operand's statements (a block that assigns a
    /// local, a call, a loop's value) are lowered before the expression that combines them,
    /// so a value an earlier operand read is held in a hidden local first (a register once
    /// LLVM is done): `-v + { v = 1; v }` negates the old `v`.
    pub(super) fn ordered(
        &mut self,
        value: Handle<Expression>,
        ty: Scalar,
        later: &[&Expr],
        span: Span,
        block: &mut Block,
    ) -> Handle<Expression> {
        if !later.iter().any(|e| contains_call(e)) {
            return value;
        }
        let local = self.temporary("operand", value, ty, span, block);
        self.load_local(local, span)
    }
}

/// Whether evaluating `expr` calls a device function.
pub(super) fn contains_call(expr: &Expr) -> bool {
    match &expr.kind {
        ExprKind::Call { .. } | ExprKind::MethodCall { .. } => true,
        ExprKind::Lit(_)
        | ExprKind::Var(_)
        | ExprKind::Builtin(_)
        | ExprKind::Constant { .. }
        | ExprKind::EnumVariant { .. } => false,
        // Intrinsics run as statements, like calls.
        ExprKind::Intrinsic { .. } | ExprKind::InlinePtx { .. } => true,
        ExprKind::Repeat { value, len } => contains_call(value) || contains_call(len),
        ExprKind::Tuple(values) => values.iter().any(contains_call),
        ExprKind::StructLiteral { fields, .. } => fields.iter().any(|(_, v)| contains_call(v)),
        ExprKind::Reference { place, .. } => contains_call(place),
        ExprKind::SubSlice {
            base, start, end, ..
        } => contains_call(base) || start.iter().chain(end).any(|b| contains_call(b)),
        ExprKind::SplitAt { base, mid, .. } => contains_call(base) || contains_call(mid),
        // Its body runs in the instance it is passed to; its captures are names.
        ExprKind::Closure { .. } => false,
        ExprKind::ClosureCall { .. } => true,
        ExprKind::Unary { operand, .. } => contains_call(operand),
        ExprKind::Binary { left, right, .. } => contains_call(left) || contains_call(right),
        ExprKind::Cast { value, .. } | ExprKind::ConvertTo { value, .. } | ExprKind::Len(value) => {
            contains_call(value)
        }
        ExprKind::Field { base, .. } => contains_call(base),
        ExprKind::Index { base, index } => contains_call(base) || contains_call(index),
        ExprKind::Math { receiver, args, .. } => {
            contains_call(receiver) || args.iter().any(contains_call)
        }
        // Blocks and `if` values are lowered as statements in their own blocks.
        ExprKind::If { .. } | ExprKind::Block(_) | ExprKind::Match { .. } => true,
    }
}
