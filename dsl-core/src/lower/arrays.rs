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
        // `[[T; M]; N]`: an array of rows.
        if let ValueType::Array {
            elem: inner,
            len: columns,
        } = elem
        {
            let columns = self.spec.array_len(columns, span)?;
            let base = self.array_type(inner, columns, span)?;
            return Ok(self.program.module.types.insert(Type {
                inner: TypeInner::Array { base, len },
            }));
        }
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
            // `m[i]` of an array of arrays (a local, a parameter or a field): its row.
            ExprKind::Index { base, .. } => Ok(self
                .rows_type(base)?
                .and_then(|array_ty| self.element_type(array_ty))),
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

    /// The element type of the array type `array_ty`.
    fn element_type(&self, array_ty: Handle<Type>) -> Option<Handle<Type>> {
        match self.program.module.types[array_ty].inner {
            TypeInner::Array { base, .. } => Some(base),
            _ => None,
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
        let (source, _) = self.array_source(value, block)?;
        let local = self.local(name, array_ty, span);
        let target = self.expr_node(Expression::LocalPointer(local), span);
        self.copy_array_of(source, target, array_ty, span, block);
        Ok(local)
    }

    /// The value of `place = value` of arrays, as a local array of its own (so `a = b` and
    /// `b = a` in either order mean what Rust means): a copy of an array value, or the
    /// array a call or `vload` wrote (`vload` without a turbofish takes the place's type).
    pub(super) fn assigned_array(
        &mut self,
        place: &Expr,
        value: &Expr,
        span: Span,
        block: &mut Block,
    ) -> Result<Handle<LocalVariable>, LowerError> {
        if let ExprKind::Intrinsic {
            intrinsic: Intrinsic::VectorLoadArray,
            ty: None,
            args,
        } = &value.kind
        {
            let array_ty = self
                .array_value_type(place)?
                .ok_or_else(|| LowerError::new(span, "internal: an array place without a type"))?;
            return self.vector_array_load(array_ty, args, span, block);
        }
        if self.returns_array(value) {
            if let (ArraySource::Local(local), _) = self.array_source(value, block)? {
                return Ok(local);
            }
        }
        self.copied_array("array.assigned", value, span, block)
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
        if self.types.is_array_branches(expr) {
            return self.branches_array(expr, block);
        }
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
            ExprKind::Intrinsic {
                intrinsic: Intrinsic::VectorLoadArray,
                ty,
                args,
            } => {
                let Some(ValueType::Array { elem, len }) = ty else {
                    return Err(LowerError::new(
                        span,
                        "give `vload` its array type here: `vload::<f32, 4>(x, i)`, or bind it first, `let a: [f32; 4] = vload(x, i);`",
                    ));
                };
                let len = self.spec.array_len(len, span)?;
                let array_ty = self.array_type(elem, len, span)?;
                let local = self.vector_array_load(array_ty, args, span, block)?;
                return Ok((ArraySource::Local(local), len));
            }
            // `m[i]` of an array of arrays (a local, a parameter or a field): its row.
            ExprKind::Index { base, index } => {
                if let Some(row_ty) = self.array_value_type(expr)? {
                    if let Some(rows) = self.rows_place(base, block)? {
                        let columns = self.array_len_of(row_ty).unwrap_or(0);
                        let index = self.expr(index, block)?;
                        let row = self.row_pointer(rows, index, span);
                        return Ok((ArraySource::Pointer(row), columns));
                    }
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

    /// An `if` or a block whose value is an array (`let a = if c { b } else { [0.0; 4] };`):
    /// a local array of its own, which each branch copies its array into.
    fn branches_array(
        &mut self,
        expr: &Expr,
        block: &mut Block,
    ) -> Result<(ArraySource, u32), LowerError> {
        let span = expr.span;
        let (condition, branches) = match &expr.kind {
            ExprKind::If {
                cond,
                then,
                otherwise,
            } => match self.constant_condition(cond) {
                // Of constants: only the branch taken exists.
                Some(taken) => (None, vec![if taken { then } else { otherwise }]),
                None => (Some(self.expr(cond, block)?), vec![then, otherwise]),
            },
            ExprKind::Block(inner) => (None, vec![inner]),
            _ => return Err(LowerError::new(span, "internal: an array of branches")),
        };
        let mut result: Option<(Handle<LocalVariable>, Handle<Type>, u32)> = None;
        let mut lowered = Vec::new();
        for branch in branches {
            let mut out = Block::new();
            self.scopes.push();
            let copied = self.branch_into(branch, &mut result, &mut out);
            self.scopes.pop();
            copied?;
            lowered.push(out);
        }
        let Some((local, _, len)) = result else {
            return Err(LowerError::new(
                span,
                "internal: an array `if` without branches",
            ));
        };
        match condition {
            Some(condition) => {
                let mut blocks = lowered.into_iter();
                let accept = blocks.next().unwrap_or_default();
                let reject = blocks.next().unwrap_or_default();
                block.push(
                    Statement::If {
                        condition,
                        accept,
                        reject,
                    },
                    span,
                );
            }
            None => {
                for out in lowered {
                    block.push(Statement::Block(out), span);
                }
            }
        }
        Ok((ArraySource::Local(local), len))
    }

    /// One branch of [`Self::branches_array`]: its statements, then its array copied into
    /// the result (made by the first branch, of its array's type).
    fn branch_into(
        &mut self,
        branch: &ast::Block,
        result: &mut Option<(Handle<LocalVariable>, Handle<Type>, u32)>,
        out: &mut Block,
    ) -> Result<(), LowerError> {
        for stmt in &branch.stmts {
            self.stmt(stmt, out)?;
        }
        let tail = branch
            .tail
            .as_deref()
            .ok_or_else(|| LowerError::new(branch.span, "this block must end in an array"))?;
        let array_ty = self.array_value_type(tail)?;
        let (source, len) = self.array_source(tail, out)?;
        let array_ty = match (array_ty, source) {
            (Some(ty), _) => ty,
            (None, ArraySource::Local(local)) => self.function.locals[local].ty,
            (None, ArraySource::Repeat(element)) => {
                let base = self.function.locals[element].ty;
                self.program.module.types.insert(Type {
                    inner: TypeInner::Array { base, len },
                })
            }
            (None, ArraySource::Pointer(pointer)) => self.pointer_base(pointer)?,
        };
        let (local, _, expected) = *result.get_or_insert_with(|| {
            let local = self.local("if.array", array_ty, tail.span);
            (local, array_ty, len)
        });
        if expected != len {
            return Err(LowerError::new(
                tail.span,
                format!("the branches give arrays of {expected} and {len} elements"),
            ));
        }
        let target = self.expr_node(Expression::LocalPointer(local), tail.span);
        self.copy_array_of(source, target, array_ty, tail.span, out);
        Ok(())
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
            self.store_element(target, u64::from(k), value, span, block);
        }
    }

    /// Stores `value` to element `k` of the array `target` points to.
    fn store_element(
        &mut self,
        target: Handle<Expression>,
        k: u64,
        value: Handle<Expression>,
        span: Span,
        block: &mut Block,
    ) {
        let index = self.int(k, Scalar::Usize, span);
        let array = target;
        let pointer = self.expr_node(Expression::MemberElement { array, index }, span);
        block.push(Statement::Store { pointer, value }, span);
    }

    /// Whether `expr` calls a device function returning an array (or `vload`), or is an
    /// `if` or a block whose value is an array: what makes an array local of its own.
    pub(super) fn returns_array(&self, expr: &Expr) -> bool {
        let types = self.types;
        let expr = types.desugared(expr).unwrap_or(expr);
        if types.is_array_branches(expr) {
            return true;
        }
        if let ExprKind::Intrinsic {
            intrinsic: Intrinsic::VectorLoadArray,
            ..
        } = expr.kind
        {
            return true;
        }
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
                self.copy_array_of(source, target, array_ty, span, block);
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
        // The hidden result parameter is always a pointer to the function's array type.
        let TypeInner::Pointer { base, .. } =
            self.program.module.types[self.function.arguments[argument as usize].ty].inner
        else {
            return Err(LowerError::new(
                value.span,
                "internal: an array result parameter that is not a pointer",
            ));
        };
        let target = self.expr_node(Expression::FunctionArgument(argument), value.span);
        self.copy_array_of(source, target, base, value.span, block);
        Ok(())
    }

    /// Copies the array `source` to the array of type `array_ty` that `target` points to:
    /// element by element, and an array of arrays row by row.
    pub(super) fn copy_array_of(
        &mut self,
        source: ArraySource,
        target: Handle<Expression>,
        array_ty: Handle<Type>,
        span: Span,
        block: &mut Block,
    ) {
        let len = self.array_len_of(array_ty).unwrap_or(0);
        let Some(columns) = self.columns_of(array_ty) else {
            return self.copy_array(source, target, len, span, block);
        };
        for r in 0..len {
            let Some(from) = self.source_element(source, r, span) else {
                continue;
            };
            let index = self.int(u64::from(r), Scalar::Usize, span);
            let to = self.expr_node(
                Expression::MemberElement {
                    array: target,
                    index,
                },
                span,
            );
            self.copy_array(ArraySource::Pointer(from), to, columns, span, block);
        }
    }
}

impl Lowerer<'_, '_> {
    /// `vload(x, i)` into a new local array of type `array_ty` (`[T; N]`): one vector load
    /// into `N` scalars, stored to the array (which SROA turns back into the registers of
    /// the load).
    pub(super) fn vector_array_load(
        &mut self,
        array_ty: Handle<Type>,
        args: &[Expr],
        span: Span,
        block: &mut Block,
    ) -> Result<Handle<LocalVariable>, LowerError> {
        let TypeInner::Array { base: elem_ty, len } = self.program.module.types[array_ty].inner
        else {
            return Err(LowerError::new(span, "internal: `vload`'s array type"));
        };
        if let Some(elem) = self.program.module.types[elem_ty].inner.scalar() {
            super::infer::vector_width(elem, len, span)?;
        }
        let width = vector_width(len, span)?;
        let pointer = self.vector_pointer(args, width, span, block)?;
        let values: Vec<_> = if len == 1 {
            vec![self.expr_node(Expression::Load { pointer }, span)]
        } else {
            let results: Vec<_> = (0..len)
                .map(|_| self.local("vload.element", elem_ty, span))
                .collect();
            block.push(
                Statement::VectorLoad {
                    pointer,
                    results: results.clone(),
                },
                span,
            );
            results
                .into_iter()
                .map(|r| self.load_local(r, span))
                .collect()
        };
        let local = self.local("vload.array", array_ty, span);
        let target = self.expr_node(Expression::LocalPointer(local), span);
        for (k, value) in (0u64..).zip(values) {
            self.store_element(target, k, value, span, block);
        }
        Ok(local)
    }

    /// `vstore(y, i, values)`: the array's elements read, then one vector store.
    pub(super) fn vector_array_store(
        &mut self,
        args: &[Expr],
        span: Span,
        block: &mut Block,
    ) -> Result<(), LowerError> {
        let [_, _, values] = args else {
            return Err(LowerError::new(
                span,
                "`vstore` takes (slice, index, array)",
            ));
        };
        let (source, len) = self.array_source(values, block)?;
        // A repeat `[v; N]` holds its one value in a local; other arrays have a type.
        let elem = match source {
            ArraySource::Repeat(local) => Some(self.function.locals[local].ty),
            ArraySource::Local(local) => self.element_type(self.function.locals[local].ty),
            ArraySource::Pointer(_) => self
                .array_value_type(values)?
                .and_then(|ty| self.element_type(ty)),
        };
        let Some(elem) = elem.and_then(|ty| self.program.module.types[ty].inner.scalar()) else {
            return Err(LowerError::new(
                values.span,
                "`vstore` stores an array of scalars",
            ));
        };
        super::infer::vector_width(elem, len, span)?;
        let width = vector_width(len, span)?;
        let pointer = self.vector_pointer(&args[..2], width, span, block)?;
        let mut handles = Vec::new();
        for k in 0..len {
            handles.push(match (self.source_element(source, k, span), source) {
                (Some(pointer), _) => self.expr_node(Expression::Load { pointer }, span),
                (None, ArraySource::Repeat(local)) => self.load_local(local, span),
                (None, _) => return Err(LowerError::new(span, "internal: `vstore`'s array")),
            });
        }
        match handles.as_slice() {
            [value] => block.push(
                Statement::Store {
                    pointer,
                    value: *value,
                },
                span,
            ),
            _ => block.push(
                Statement::VectorStore {
                    pointer,
                    values: handles,
                },
                span,
            ),
        }
        Ok(())
    }
}

/// The length of a vector access of `len` elements as the IR's width (inference checked
/// the bytes it moves; one element is an ordinary access).
fn vector_width(len: u32, span: Span) -> Result<u8, LowerError> {
    u8::try_from(len)
        .ok()
        .filter(|n| matches!(n, 1 | 2 | 4 | 8 | 16))
        .ok_or_else(|| {
            LowerError::new(
                span,
                format!(
                    "a vector access moves 8 or 16 bytes: 2, 4, 8 or 16 elements (or 1), not {len}"
                ),
            )
        })
}
