//! Calls of `#[device]` functions (instantiated per specialisation) and of
//! `#[extern_device]` functions (declared, with their C ABI arguments).

use super::*;

impl Lowerer<'_, '_> {
    /// A call of a device function: its arguments are evaluated, the call runs as a
    /// statement, and its value (if wanted) is read from a local.
    pub(super) fn call(
        &mut self,
        expr: &Expr,
        block: &mut Block,
        wants_value: bool,
    ) -> Result<Option<Handle<Expression>>, LowerError> {
        let types = self.types;
        let expr = types.desugared(expr).unwrap_or(expr);
        let ExprKind::Call { args, .. } = &expr.kind else {
            return Err(LowerError::new(expr.span, "this expression has no effect"));
        };
        let instance = self.types.call(expr).cloned().ok_or_else(|| {
            LowerError::new(expr.span, "internal: call without a resolved callee")
        })?;
        let library = self.program.library;
        if let Some(source) = library.get(&instance.name) {
            if source.external.is_some() {
                return self.call_extern(source, args, expr.span, block, wants_value);
            }
        }
        let function = self.program.instance(&instance, expr.span)?;
        let params = library.get(&instance.name).map(|f| f.params.as_slice());
        let mut arguments = Vec::new();
        for (index, arg) in args.iter().enumerate() {
            // The IR argument this one becomes (a closure becomes its captures, so the
            // count of arguments pushed so far, not `index`, is the position).
            let param_ty = self.program.module.functions[function]
                .arguments
                .get(arguments.len())
                .map(|a| a.ty);
            let argument = match (params.and_then(|p| p.get(index)), param_ty) {
                // A closure passes what it captures, in its own parameter's place: there
                // `closures::instantiate` puts the instance's hidden parameters.
                (
                    Some(ast::Param {
                        ty: ParamType::Closure { .. },
                        ..
                    }),
                    _,
                ) => {
                    if let ExprKind::Closure { captures, .. } = &arg.kind {
                        for capture in captures {
                            let value = self.expr(capture, block)?;
                            arguments.push(value);
                        }
                    }
                    continue;
                }
                // Arrays: a pointer to a copy (by value) or to the array (by reference).
                (
                    Some(ast::Param {
                        ty: ParamType::Value(ValueType::Array { .. }),
                        ..
                    }),
                    Some(ty),
                ) => self.array_argument(arg, ty, true, block)?,
                (
                    Some(ast::Param {
                        ty: ParamType::Reference { len: Some(_), .. },
                        ..
                    }),
                    Some(ty),
                ) => self.array_argument(arg, ty, false, block)?,
                (
                    Some(
                        param @ ast::Param {
                            ty: ParamType::Reference { .. },
                            ..
                        },
                    ),
                    _,
                ) => self.extern_argument(arg, param, block)?,
                _ => {
                    self.reject_copy(arg)?;
                    let value = self.expr(arg, block)?;
                    // Evaluated before the later arguments' statements, as Rust orders them.
                    match self.type_of(arg) {
                        Ok(ty) => {
                            let later: Vec<&Expr> = args[index + 1..].iter().collect();
                            self.ordered(value, ty, &later, arg.span, block)
                        }
                        Err(_) => value,
                    }
                }
            };
            arguments.push(argument);
        }
        // A function returning an array writes it through a hidden last argument: an
        // array of the caller's, which the call's value then is.
        let returns_array = library
            .get(&instance.name)
            .is_some_and(|f| matches!(f.result, Some(ValueType::Array { .. })));
        if returns_array {
            let hidden = self.program.module.functions[function]
                .arguments
                .last()
                .map(|a| a.ty);
            let array_ty = match hidden.map(|ty| &self.program.module.types[ty].inner) {
                Some(TypeInner::Pointer { base, .. }) => *base,
                _ => return Err(LowerError::new(expr.span, "internal: no result array")),
            };
            let len = match self.program.module.types[array_ty].inner {
                TypeInner::Array { len, .. } => len,
                _ => 0,
            };
            let local = self.local(&format!("{}.result", instance.name), array_ty, expr.span);
            arguments.push(self.expr_node(Expression::LocalPointer(local), expr.span));
            block.push(
                Statement::Call {
                    function,
                    arguments,
                    result: None,
                },
                expr.span,
            );
            self.array_result = Some((local, len));
            return Ok(None);
        }
        let result_ty = self.program.module.functions[function].result;
        // A droppable result nobody keeps ends right after the call, as a C++ temporary.
        let discarded_hook = match (result_ty, wants_value) {
            (Some(ty), false) => match &self.program.module.types[ty].inner {
                TypeInner::Struct { name, .. } => {
                    let name = name.clone();
                    self.drop_hook(&name, expr.span)?
                }
                _ => None,
            },
            _ => None,
        };
        let result = match (result_ty, wants_value || discarded_hook.is_some()) {
            (Some(ty), true) => {
                Some(self.local(&format!("{}.result", instance.name), ty, expr.span))
            }
            _ => None,
        };
        block.push(
            Statement::Call {
                function,
                arguments,
                result,
            },
            expr.span,
        );
        if let (Some(hook), Some(local)) = (discarded_hook, result) {
            self.call_hook(hook, local, block, expr.span)?;
            return Ok(None);
        }
        Ok(result.map(|local| self.load_local(local, expr.span)))
    }

    /// A call of an `#[extern_device]` function: declared in the module, defined by its
    /// device library at link time.
    pub(super) fn call_extern(
        &mut self,
        source: &FunctionSource,
        args: &[Expr],
        span: Span,
        block: &mut Block,
        wants_value: bool,
    ) -> Result<Option<Handle<Expression>>, LowerError> {
        let function = self.extern_function(source)?;
        let mut arguments = Vec::new();
        for (arg, param) in args.iter().zip(&source.params) {
            arguments.push(self.extern_argument(arg, param, block)?);
        }
        let result_ty = self.program.module.externs[function].result;
        let result = match (result_ty, wants_value) {
            (Some(ty), true) => Some(self.local(&format!("{}.result", source.name), ty, span)),
            _ => None,
        };
        block.push(
            Statement::CallExtern {
                function,
                arguments,
                result,
            },
            span,
        );
        Ok(result.map(|local| self.load_local(local, span)))
    }

    /// One argument of an `#[extern_device]` call, in the form its parameter passes: a
    /// scalar; `&value`/`&mut array` as a pointer; a handle struct as its one field.
    pub(super) fn extern_argument(
        &mut self,
        arg: &Expr,
        param: &ast::Param,
        block: &mut Block,
    ) -> Result<Handle<Expression>, LowerError> {
        let span = arg.span;
        // A `&S` parameter of this function passed on as it is (`comm`): the pointer.
        let passed_on = match (&param.ty, &arg.kind) {
            (ParamType::Reference { .. }, ExprKind::Var(name)) => match self.scopes.lookup(name) {
                Some(Binding::Argument(index)) if self.is_reference_argument(index) => Some(index),
                _ => None,
            },
            _ => None,
        };
        if let Some(index) = passed_on {
            return Ok(self.expr_node(Expression::FunctionArgument(index), span));
        }
        match (&param.ty, &arg.kind) {
            (ParamType::Reference { .. }, ExprKind::Reference { place, .. }) => {
                let ExprKind::Var(name) = &place.kind else {
                    return self.struct_reference(place, block);
                };
                match self.scopes.lookup(name) {
                    Some(Binding::Argument(index)) if self.is_reference_argument(index) => {
                        Ok(self.expr_node(Expression::FunctionArgument(index), span))
                    }
                    Some(Binding::Argument(index)) => {
                        let value = self.expr_node(Expression::FunctionArgument(index), span);
                        Ok(self.expr_node(Expression::ValuePointer { value }, span))
                    }
                    Some(Binding::Local(local)) => {
                        Ok(self.expr_node(Expression::LocalPointer(local), span))
                    }
                    Some(Binding::Array(local, _)) => {
                        let index = self.literal(
                            Literal::Int {
                                bits: 0,
                                ty: Scalar::Usize,
                            },
                            span,
                        );
                        Ok(self.expr_node(Expression::ArrayElement { local, index }, span))
                    }
                    _ => Err(LowerError::new(
                        place.span,
                        format!(
                            "`{name}` is not a struct or array that can be passed by reference"
                        ),
                    )),
                }
            }
            (ParamType::Reference { .. }, _) => Err(LowerError::new(
                span,
                format!(
                    "`{}` is a reference parameter: pass `&name` (or `&mut name`)",
                    param.name
                ),
            )),
            (ParamType::Value(ValueType::Struct(ty)), _)
                if is_handle(self.program.library.struct_layout(ty, span)?) =>
            {
                // A handle: the struct's one field is what crosses the C ABI.
                let pointer = self.struct_place(arg, block)?;
                let field = self.expr_node(
                    Expression::FieldPointer {
                        base: pointer,
                        field: 0,
                    },
                    span,
                );
                Ok(self.expr_node(Expression::Load { pointer: field }, span))
            }
            _ => self.expr(arg, block),
        }
    }

    /// `&place` / `&mut place` of a struct that is not a name: a slice element (the
    /// element's address, so `&mut self` methods write it in place) or a value (a call's
    /// result, an operator's), kept in a temporary as Rust keeps a temporary.
    fn struct_reference(
        &mut self,
        place: &Expr,
        block: &mut Block,
    ) -> Result<Handle<Expression>, LowerError> {
        let types = self.types;
        let place = types.desugared(place).unwrap_or(place);
        match &place.kind {
            ExprKind::Index { base, index } => self.element_pointer(base, index, block),
            ExprKind::Field { base, field } => self.field_pointer(base, field, place.span, block),
            // `&mut (x + 1)`: a temporary of the value, as Rust makes one for the call.
            _ if self.types.expr(place).is_some() => {
                let scalar = self.type_of(place)?;
                let ty = self.scalar_type(scalar);
                let value = self.expr(place, block)?;
                let local = self.local("scalar.temporary", ty, place.span);
                block.push(Statement::LocalStore { local, value }, place.span);
                Ok(self.expr_node(Expression::LocalPointer(local), place.span))
            }
            _ => {
                let ty = self.struct_of(place)?;
                let value = self.expr(place, block)?;
                let local = self.local("struct.temporary", ty, place.span);
                block.push(Statement::LocalStore { local, value }, place.span);
                Ok(self.expr_node(Expression::LocalPointer(local), place.span))
            }
        }
    }

    /// The module's declaration of an `#[extern_device]` function, added on first use.
    pub(super) fn extern_function(
        &mut self,
        source: &FunctionSource,
    ) -> Result<Handle<ExternFunction>, LowerError> {
        let existing = self
            .program
            .module
            .externs
            .iter()
            .find(|(_, f)| f.name == source.name)
            .map(|(handle, _)| handle);
        if let Some(handle) = existing {
            return Ok(handle);
        }
        let library = self.program.library;
        let no_generics = Specialization::default();
        let mut arguments = Vec::new();
        for param in &source.params {
            let ty = match &param.ty {
                ParamType::Value(ValueType::Struct(name))
                    if library.struct_layout(name, param.span)?.enum_repr.is_none() =>
                {
                    let layout = library.struct_layout(name, param.span)?;
                    match layout.fields {
                        // A handle (one scalar field, such as a window): that scalar.
                        [crate::layout::FieldLayout {
                            ty: crate::layout::FieldType::Scalar(only),
                            ..
                        }] if is_handle(layout) => self.scalar_type(*only),
                        // Any other struct: by value, as C passes it.
                        _ => self.struct_type(name, param.span)?,
                    }
                }
                ParamType::Value(ty) => {
                    let scalar = library.scalar(&no_generics, ty, param.span)?;
                    self.scalar_type(scalar)
                }
                ParamType::Reference {
                    target,
                    len,
                    mutable,
                } => {
                    let base = match (target, len) {
                        (ValueType::Struct(name), None) => self.struct_type(name, param.span)?,
                        (target, _) => {
                            let scalar = library.scalar(&no_generics, target, param.span)?;
                            self.scalar_type(scalar)
                        }
                    };
                    self.program.module.types.insert(Type {
                        inner: TypeInner::Pointer {
                            base,
                            space: AddressSpace::Generic,
                            mutable: *mutable,
                        },
                    })
                }
                ParamType::Slice { .. } | ParamType::TensorMap | ParamType::Closure { .. } => {
                    return Err(LowerError::new(
                        param.span,
                        "extern device functions take scalars, handles and references, not slices, tensor maps or closures",
                    ))
                }
            };
            arguments.push(ty);
        }
        let result = match &source.result {
            Some(ty) => Some(
                match library.resolve_value(&no_generics, ty, source.span)? {
                    Resolved::Scalar(scalar) => self.scalar_type(scalar),
                    Resolved::Struct(name) => self.struct_type(name, source.span)?,
                },
            ),
            None => None,
        };
        Ok(self.program.module.externs.append(ExternFunction {
            name: source.name.clone(),
            symbol: source
                .external
                .clone()
                .unwrap_or_else(|| source.name.clone()),
            arguments,
            result,
        }))
    }

    /// Whether argument `index` of the function being lowered is a `&S` (a pointer).
    pub(super) fn is_reference_argument(&self, index: u32) -> bool {
        self.function
            .arguments
            .get(index as usize)
            .is_some_and(|argument| {
                matches!(
                    self.program.module.types[argument.ty].inner,
                    TypeInner::Pointer { .. }
                )
            })
    }
}

/// Whether a struct passed by value to an external function crosses the C ABI as its one
/// scalar field (a handle such as NCCL's window), rather than as the struct.
fn is_handle(layout: &crate::layout::StructLayout) -> bool {
    layout.enum_repr.is_none()
        && matches!(layout.fields, [only] if only.offset == 0 && only.ty.scalar().is_some() && only.ty.size() == layout.size)
}
