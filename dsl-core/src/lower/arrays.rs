//! Arrays crossing `#[device]` function boundaries, as CUDA C++ passes `float acc[16]`
//! through a pointer.
//!
//! A parameter `a: [f32; 4]` is a pointer to an array the caller copied for the call (so
//! the callee may change it, and the caller's array is not); `acc: &mut [f32; 16]` a
//! pointer to the caller's array itself. A result `-> [f32; 16]` is written through a
//! hidden last parameter pointing at the caller's result array. Every access is an
//! element of that array (`MemberElement`); once the call inlines, the arrays are the
//! caller's locals, in registers when their indices are constants.

use super::*;

/// Where the elements of an array value are.
#[derive(Clone, Copy)]
pub(super) enum ArraySource {
    /// A local array.
    Local(Handle<LocalVariable>),
    /// The array a pointer points to (an array parameter, an array field).
    Pointer(Handle<Expression>),
    /// `[value; N]`: the value, held in a local.
    Repeat(Handle<LocalVariable>),
}

impl Lowerer<'_, '_> {
    /// The IR type of an array of `len` elements `elem` (a scalar or struct type as
    /// written), resolved in this function's specialisation.
    pub(super) fn array_type(
        &mut self,
        elem: &ValueType,
        len: u32,
        span: Span,
    ) -> Result<Handle<Type>, LowerError> {
        let library = self.program.library;
        let base = match library.resolve_value(self.spec, elem, span)? {
            Resolved::Scalar(scalar) => self.scalar_type(scalar),
            Resolved::Struct(name) => self.struct_type(name, span)?,
        };
        Ok(self.program.module.types.insert(Type {
            inner: TypeInner::Array { base, len },
        }))
    }

    /// A pointer to an array type.
    pub(super) fn array_pointer_type(
        &mut self,
        array: Handle<Type>,
        mutable: bool,
    ) -> Handle<Type> {
        self.program.module.types.insert(Type {
            inner: TypeInner::Pointer {
                base: array,
                space: AddressSpace::Generic,
                mutable,
            },
        })
    }

    /// The array type of `expr` when it names an array value: a local array, an array
    /// parameter or an array field (not a call, which makes its own array).
    pub(super) fn array_value_type(
        &mut self,
        expr: &Expr,
    ) -> Result<Option<Handle<Type>>, LowerError> {
        let types = self.types;
        let expr = types.desugared(expr).unwrap_or(expr);
        match &expr.kind {
            ExprKind::Var(name) => Ok(match self.scopes.lookup(name) {
                Some(Binding::Array(local, _)) => Some(self.function.locals[local].ty),
                Some(Binding::ArrayArgument(index, _)) => {
                    let ty = self.function.arguments[index as usize].ty;
                    match self.program.module.types[ty].inner {
                        TypeInner::Pointer { base, .. } => Some(base),
                        _ => None,
                    }
                }
                _ => None,
            }),
            ExprKind::Field { base, field } => {
                if self.array_field_len(expr)?.is_none() {
                    return Ok(None);
                }
                let struct_ty = self.struct_of(base)?;
                Ok(match &self.program.module.types[struct_ty].inner {
                    TypeInner::Struct { members, .. } => {
                        members.iter().find(|m| &m.name == field).map(|m| m.ty)
                    }
                    _ => None,
                })
            }
            _ => Ok(None),
        }
    }

    /// A new local array named `name` holding a copy of the array value `value`.
    pub(super) fn copied_array(
        &mut self,
        name: &str,
        value: &Expr,
        span: Span,
        block: &mut Block,
    ) -> Result<Handle<LocalVariable>, LowerError> {
        let array_ty = self.array_value_type(value)?.ok_or_else(|| {
            LowerError::new(
                value.span,
                "an array is expected here: a local array, an array parameter or an array field",
            )
        })?;
        let (source, len) = self.array_source(value, block)?;
        let local = self.local(name, array_ty, span);
        let target = self.expr_node(Expression::LocalPointer(local), span);
        self.copy_array(source, target, len, span, block);
        Ok(local)
    }

    /// The length of the array type `ty`.
    pub(super) fn array_len_of(&self, ty: Handle<Type>) -> Option<u32> {
        match self.program.module.types[ty].inner {
            TypeInner::Array { len, .. } => Some(len),
            _ => None,
        }
    }

    /// Where the elements of the array `expr` gives are, and how many: a local array, an
    /// array parameter, an array field, a call returning an array, or `[value; N]`.
    pub(super) fn array_source(
        &mut self,
        expr: &Expr,
        block: &mut Block,
    ) -> Result<(ArraySource, u32), LowerError> {
        let span = expr.span;
        match &expr.kind {
            ExprKind::Var(name) => match self.scopes.lookup(name) {
                Some(Binding::Array(local, len)) => return Ok((ArraySource::Local(local), len)),
                Some(Binding::ArrayArgument(index, len)) => {
                    let pointer = self.expr_node(Expression::FunctionArgument(index), span);
                    return Ok((ArraySource::Pointer(pointer), len));
                }
                _ => {}
            },
            ExprKind::Field { base, field } => {
                if let Some(len) = self.array_field_len(expr)? {
                    let pointer = self.field_pointer(base, field, span, block)?;
                    return Ok((ArraySource::Pointer(pointer), len));
                }
            }
            ExprKind::Call { .. } => {
                self.call(expr, block, false)?;
                if let Some((local, len)) = self.array_result.take() {
                    return Ok((ArraySource::Local(local), len));
                }
            }
            ExprKind::Repeat { value, len } => {
                let count = self.constant_value(len)? as u32;
                let ty = match self.types.struct_expr(value) {
                    Some(name) => self.struct_type(name, span)?,
                    None => {
                        let scalar = self.type_of(value)?;
                        self.scalar_type(scalar)
                    }
                };
                let value = self.expr(value, block)?;
                let local = self.local("array.value", ty, span);
                block.push(Statement::LocalStore { local, value }, span);
                return Ok((ArraySource::Repeat(local), count));
            }
            _ => {}
        }
        Err(LowerError::new(
            span,
            "an array is expected here: a local array, an array parameter, an array field or a call returning an array",
        ))
    }

    /// A pointer to element `k` of `source` (for `Repeat`, `None`: every element is the
    /// value).
    fn source_element(
        &mut self,
        source: ArraySource,
        k: u32,
        span: Span,
    ) -> Option<Handle<Expression>> {
        let index = self.int(u64::from(k), Scalar::Usize, span);
        match source {
            ArraySource::Local(local) => {
                Some(self.expr_node(Expression::ArrayElement { local, index }, span))
            }
            ArraySource::Pointer(array) => {
                Some(self.expr_node(Expression::MemberElement { array, index }, span))
            }
            ArraySource::Repeat(_) => None,
        }
    }

    /// Copies the `len` elements of `source` to the array `target` points to.
    pub(super) fn copy_array(
        &mut self,
        source: ArraySource,
        target: Handle<Expression>,
        len: u32,
        span: Span,
        block: &mut Block,
    ) {
        for k in 0..len {
            let value = match (self.source_element(source, k, span), source) {
                (Some(pointer), _) => self.expr_node(Expression::Load { pointer }, span),
                (None, ArraySource::Repeat(local)) => self.load_local(local, span),
                (None, _) => continue,
            };
            let index = self.int(u64::from(k), Scalar::Usize, span);
            let pointer = self.expr_node(
                Expression::MemberElement {
                    array: target,
                    index,
                },
                span,
            );
            block.push(Statement::Store { pointer, value }, span);
        }
    }

    /// Whether `expr` calls a device function returning an array.
    pub(super) fn returns_array(&self, expr: &Expr) -> bool {
        let types = self.types;
        let expr = types.desugared(expr).unwrap_or(expr);
        let library = self.program.library;
        matches!(expr.kind, ExprKind::Call { .. })
            && types
                .call(expr)
                .and_then(|instance| library.get(&instance.name))
                .is_some_and(|f| matches!(f.result, Some(ValueType::Array { .. })))
    }

    /// The argument for an array parameter: for `[T; N]` by value a pointer to a copy made
    /// here; for `&[T; N]`/`&mut [T; N]` a pointer to the array itself.
    pub(super) fn array_argument(
        &mut self,
        arg: &Expr,
        param_ty: Handle<Type>,
        by_value: bool,
        block: &mut Block,
    ) -> Result<Handle<Expression>, LowerError> {
        let span = arg.span;
        let place = match (&arg.kind, by_value) {
            (ExprKind::Reference { place, .. }, false) => place.as_ref(),
            _ => arg,
        };
        let (source, len) = self.array_source(place, block)?;
        let TypeInner::Pointer { base: array_ty, .. } = self.program.module.types[param_ty].inner
        else {
            return Err(LowerError::new(
                span,
                "internal: an array parameter that is no pointer",
            ));
        };
        if self.array_len_of(array_ty) != Some(len) {
            return Err(LowerError::new(
                span,
                format!(
                    "an array of {} elements is expected here, not {len}",
                    self.array_len_of(array_ty).unwrap_or(0)
                ),
            ));
        }
        match (source, by_value) {
            (ArraySource::Local(local), false) => {
                Ok(self.expr_node(Expression::LocalPointer(local), span))
            }
            (ArraySource::Pointer(pointer), false) => Ok(pointer),
            _ => {
                // The callee's own copy, as C++ copies an array member passed by value.
                let copy = self.local("array.argument", array_ty, span);
                let target = self.expr_node(Expression::LocalPointer(copy), span);
                self.copy_array(source, target, len, span, block);
                Ok(self.expr_node(Expression::LocalPointer(copy), span))
            }
        }
    }

    /// `value` as the array the function returns: copied through its hidden result
    /// parameter.
    pub(super) fn return_array(
        &mut self,
        value: &Expr,
        (argument, len): (u32, u32),
        block: &mut Block,
    ) -> Result<(), LowerError> {
        let (source, given) = self.array_source(value, block)?;
        if given != len {
            return Err(LowerError::new(
                value.span,
                format!("this function returns an array of {len} elements, not {given}"),
            ));
        }
        let target = self.expr_node(Expression::FunctionArgument(argument), value.span);
        self.copy_array(source, target, len, value.span, block);
        Ok(())
    }
}
