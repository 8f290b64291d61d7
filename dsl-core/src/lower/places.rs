//! Places: struct fields, array and slice elements, vector accesses, and the values of
//! kernel and device-function parameters.

use super::*;

impl Lowerer<'_, '_> {
    /// A pointer to (or the value of) the struct `expr` names: a slice element, a struct
    /// local or a struct parameter.
    pub(super) fn struct_place(
        &mut self,
        expr: &Expr,
        block: &mut Block,
    ) -> Result<Handle<Expression>, LowerError> {
        let types = self.types;
        let expr = types.desugared(expr).unwrap_or(expr);
        match &expr.kind {
            ExprKind::Index { base, index } => self.element_pointer(base, index, block),
            // A struct inside a struct (`b.pos` of `b.pos.x`): the field's place.
            ExprKind::Field { base, field } => self.field_pointer(base, field, expr.span, block),
            ExprKind::Var(name) => match self.scopes.lookup(name) {
                Some(Binding::Local(local)) => {
                    Ok(self.expr_node(Expression::LocalPointer(local), expr.span))
                }
                Some(Binding::Argument(index)) => {
                    Ok(self.expr_node(Expression::FunctionArgument(index), expr.span))
                }
                _ => Err(LowerError::new(
                    expr.span,
                    format!("`{name}` is not a struct"),
                )),
            },
            // A struct value (what a call returned, a literal), kept in memory.
            ExprKind::Call { .. } | ExprKind::StructLiteral { .. } => self.expr(expr, block),
            // A struct an `if`, `match` or block gives.
            ExprKind::If { .. } | ExprKind::Match { .. } | ExprKind::Block(_)
                if self.types.struct_expr(expr).is_some() =>
            {
                self.expr(expr, block)
            }
            _ => Err(LowerError::new(
                expr.span,
                "fields are read from struct parameters, locals, slice elements and calls",
            )),
        }
    }

    /// A pointer to `base.field`.
    pub(super) fn field_pointer(
        &mut self,
        base: &Expr,
        field: &str,
        span: Span,
        block: &mut Block,
    ) -> Result<Handle<Expression>, LowerError> {
        let pointer = self.struct_place(base, block)?;
        let struct_ty = self.struct_of(base)?;
        let index = match &self.program.module.types[struct_ty].inner {
            TypeInner::Struct { members, .. } => members.iter().position(|m| m.name == field),
            _ => None,
        }
        .ok_or_else(|| LowerError::new(span, format!("no field `{field}`")))?;
        Ok(self.expr_node(
            Expression::FieldPointer {
                base: pointer,
                field: index as u32,
            },
            span,
        ))
    }

    /// The length of the array field `expr` is (`m.v` of `struct M { v: [f32; 4] }`), if it
    /// is one.
    pub(super) fn array_field_len(&mut self, expr: &Expr) -> Result<Option<u32>, LowerError> {
        let ExprKind::Field { base, field } = &expr.kind else {
            return Ok(None);
        };
        let struct_ty = self.struct_of(base)?;
        let member = match &self.program.module.types[struct_ty].inner {
            TypeInner::Struct { members, .. } => {
                members.iter().find(|m| &m.name == field).map(|m| m.ty)
            }
            _ => None,
        };
        Ok(
            match member.map(|ty| &self.program.module.types[ty].inner) {
                Some(TypeInner::Array { len, .. }) => Some(*len),
                _ => None,
            },
        )
    }

    /// The struct type of a struct-valued expression.
    pub(super) fn struct_of(&mut self, expr: &Expr) -> Result<Handle<Type>, LowerError> {
        let types = self.types;
        let expr = types.desugared(expr).unwrap_or(expr);
        if let Some(name) = self.types.struct_expr(expr) {
            return self.struct_type(name, expr.span);
        }
        let name = match &expr.kind {
            ExprKind::Var(name) => self.struct_names.get(name).cloned(),
            ExprKind::Index { base, .. } => match &base.kind {
                ExprKind::Var(slice) => self.struct_names.get(slice).cloned(),
                _ => None,
            },
            _ => None,
        }
        .ok_or_else(|| LowerError::new(expr.span, "a struct is expected here"))?;
        self.struct_type(&name, expr.span)
    }

    /// The IR type of a parameter's value (or slice element): a scalar, an enum as its
    /// integer representation, or a struct (remembered by parameter name for field access).
    pub(super) fn param_value_type(
        &mut self,
        param: &str,
        ty: &ValueType,
        span: Span,
    ) -> Result<Handle<Type>, LowerError> {
        let library = self.program.library;
        match library.resolve_value(self.spec, ty, span)? {
            Resolved::Scalar(scalar) => Ok(self.scalar_type(scalar)),
            Resolved::Struct(name) => {
                self.struct_names.insert(param.to_owned(), name.to_owned());
                self.struct_type(name, span)
            }
        }
    }

    pub(super) fn param(&mut self, param: &ast::Param, body: &mut Block) -> Result<(), LowerError> {
        if param.comptime {
            let value = self.spec.constant(&param.name).ok_or_else(|| {
                LowerError::new(
                    param.span,
                    format!("the `#[comptime]` parameter `{}` has no value", param.name),
                )
            })?;
            self.scopes.bind(&param.name, Binding::Constant(value));
            return Ok(());
        }
        let ty = match &param.ty {
            // `&S` (`&mut S`) of a device function: a pointer to the caller's struct, read
            // (and written) in place; `&self` and `&mut self` of methods. `&f32`/`&mut f32`
            // (`&mut T` of a scalar type parameter): a pointer to the caller's scalar (a
            // local, an element, a field), which inlining turns back into its register.
            ParamType::Reference {
                target:
                    target @ (ValueType::Struct(_) | ValueType::Scalar(_) | ValueType::Generic(_)),
                len: None,
                mutable,
            } if !matches!(target, ValueType::Generic(name) if self.spec.ty(name).is_none()) => {
                let base = self.param_value_type(&param.name, target, param.span)?;
                self.program.module.types.insert(Type {
                    inner: TypeInner::Pointer {
                        base,
                        space: AddressSpace::Generic,
                        mutable: *mutable,
                    },
                })
            }
            // `&[T; N]` / `&mut [T; N]`: a pointer to the caller's array.
            ParamType::Reference {
                target,
                len: Some(len),
                mutable,
            } => {
                let len = self.spec.array_len(len, param.span)?;
                let array = self.array_type(target, len, param.span)?;
                self.array_pointer_type(array, *mutable)
            }
            // `[T; N]` by value: a pointer to the copy the caller made for the call.
            ParamType::Value(ValueType::Array { elem, len }) => {
                let len = self.spec.array_len(len, param.span)?;
                let array = self.array_type(elem, len, param.span)?;
                self.array_pointer_type(array, true)
            }
            ParamType::Reference { .. } => {
                return Err(LowerError::new(
                    param.span,
                    "reference parameters of kernels and device functions are `&S` of a `DeviceCopy` struct or `&[T; N]` of an array",
                ))
            }
            ParamType::Value(value) => self.param_value_type(&param.name, value, param.span)?,
            ParamType::TensorMap => self.program.module.types.insert(Type {
                inner: TypeInner::TensorMap,
            }),
            ParamType::Closure { .. } => {
                return Err(LowerError::new(
                    param.span,
                    format!("internal: the closure parameter `{}` reached lowering", param.name),
                ))
            }
            ParamType::Slice { elem, mutable } => {
                let base = self.param_value_type(&param.name, elem, param.span)?;
                self.program.module.types.insert(Type {
                    inner: TypeInner::Slice {
                        base,
                        mutable: *mutable,
                    },
                })
            }
        };
        let argument = self.function.arguments.len() as u32;
        self.function.arguments.push(FunctionArgument {
            name: param.name.clone(),
            ty,
            span: param.span,
        });
        let array_len = match &self.program.module.types[ty].inner {
            TypeInner::Pointer { base, .. } => match self.program.module.types[*base].inner {
                TypeInner::Array { len, .. } => Some(len),
                _ => None,
            },
            _ => None,
        };
        let binding = match (array_len, &param.ty, param.mutable) {
            // An array parameter points to its array (a `mut` one to the caller's copy,
            // which the function may change).
            (Some(len), _, _) => Binding::ArrayArgument(argument, len),
            (None, ParamType::Value(_), true) => {
                // `mut n: u32`: the function writes its own copy of the argument.
                let local = self.local(&param.name, ty, param.span);
                let value = self.expr_node(Expression::FunctionArgument(argument), param.span);
                body.push(Statement::LocalStore { local, value }, param.span);
                Binding::Local(local)
            }
            _ => Binding::Argument(argument),
        };
        self.scopes.bind(&param.name, binding);
        Ok(())
    }

    /// The local array a name refers to, if it does.
    pub(super) fn array_binding(&self, expr: &Expr) -> Option<(Handle<LocalVariable>, u32)> {
        match &expr.kind {
            ExprKind::Var(name) => match self.scopes.lookup(name) {
                Some(Binding::Array(local, len)) => Some((local, len)),
                _ => None,
            },
            _ => None,
        }
    }

    pub(super) fn element_pointer(
        &mut self,
        base: &Expr,
        index: &Expr,
        block: &mut Block,
    ) -> Result<Handle<Expression>, LowerError> {
        if let Some(element) = self.rows_element_pointer(base, index, block)? {
            return Ok(element);
        }
        if let Some((local, _)) = self.array_binding(base) {
            let index = self.expr(index, block)?;
            return Ok(self.expr_node(Expression::ArrayElement { local, index }, base.span));
        }
        if let ExprKind::Var(name) = &base.kind {
            if let Some(Binding::ArrayArgument(argument, _)) = self.scopes.lookup(name) {
                // `a[k]` of an array parameter: an element of the array it points to.
                let array = self.expr_node(Expression::FunctionArgument(argument), base.span);
                let index = self.expr(index, block)?;
                return Ok(self.expr_node(Expression::MemberElement { array, index }, base.span));
            }
        }
        if let ExprKind::Field { base: owner, field } = &base.kind {
            if self.array_field_len(base)?.is_some() {
                // `m.v[k]`: an element of the struct's array, in place.
                let array = self.field_pointer(owner, field, base.span, block)?;
                let index = self.expr(index, block)?;
                return Ok(self.expr_node(Expression::MemberElement { array, index }, base.span));
            }
        }
        if self.returns_array(base) {
            // `f(x)[k]`: an element of the array the call returned.
            if let (arrays::ArraySource::Local(local), _) = self.array_source(base, block)? {
                let index = self.expr(index, block)?;
                return Ok(self.expr_node(Expression::ArrayElement { local, index }, base.span));
            }
        }
        // `x[i]` is where Rust's panic points (the start of `x`): the span both back ends
        // report an index out of bounds at.
        let span = base.span;
        let base = self.expr(base, block)?;
        let index = self.expr(index, block)?;
        Ok(self.expr_node(Expression::ElementPointer { base, index }, span))
    }

    /// The pointer to the first element of vector `index` of `n` elements of a slice.
    pub(super) fn vector_pointer(
        &mut self,
        args: &[Expr],
        n: u8,
        span: Span,
        block: &mut Block,
    ) -> Result<Handle<Expression>, LowerError> {
        let [slice, index] = args else {
            return Err(LowerError::new(
                span,
                "a vector access takes (slice, index)",
            ));
        };
        let base = self.expr(slice, block)?;
        let index = self.expr(index, block)?;
        let width = self.int(u64::from(n), Scalar::Usize, span);
        let first = self.binary(BinaryOp::Mul, index, width, span);
        Ok(self.expr_node(Expression::ElementPointer { base, index: first }, span))
    }
}
