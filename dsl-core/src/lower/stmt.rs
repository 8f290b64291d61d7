//! Statements and blocks: `let`, assignment, `if`, `return`, and a function's tail value.

use super::*;

impl Lowerer<'_, '_> {
    pub(super) fn block_into(
        &mut self,
        block: &ast::Block,
        out: &mut Block,
    ) -> Result<(), LowerError> {
        self.scopes.push();
        self.open_drop_scope(true);
        let result = block.stmts.iter().try_for_each(|stmt| self.stmt(stmt, out));
        let result = match result {
            Ok(()) => self.close_drop_scope(out, block.span),
            Err(error) => {
                self.discard_drop_scope();
                Err(error)
            }
        };
        self.scopes.pop();
        result
    }

    /// A device function's body ending in its value: the statements, the value, the end
    /// of the body's droppable locals (all but a returned one), then the return.
    pub(super) fn function_tail(
        &mut self,
        body: &ast::Block,
        tail: &Expr,
        out: &mut Block,
    ) -> Result<(), LowerError> {
        self.open_drop_scope(true);
        let result = body
            .stmts
            .iter()
            .try_for_each(|stmt| self.stmt(stmt, out))
            .and_then(|()| self.return_value(Some(tail), body.span, out));
        self.discard_drop_scope();
        result
    }

    /// `return value`: the value, evaluated before the live droppable locals end (into a
    /// temporary when there are any), then the return.
    pub(super) fn return_value(
        &mut self,
        value: Option<&Expr>,
        span: Span,
        out: &mut Block,
    ) -> Result<(), LowerError> {
        if let (Some(v), Some(result)) = (value, self.result_array) {
            // An array result: copied to the caller's array, then a plain return.
            self.return_array(v, result, out)?;
            self.drops_for_return(None, out, span)?;
            out.push(Statement::Return { value: None }, span);
            return Ok(());
        }
        let moved = value.and_then(|v| self.droppable_local(v));
        let mut value = value.map(|v| self.expr(v, out)).transpose()?;
        if self.has_live_drops() {
            if let (Some(v), Some(ty)) = (value, self.function.result) {
                let temporary = self.local("return.value", ty, span);
                out.push(
                    Statement::LocalStore {
                        local: temporary,
                        value: v,
                    },
                    span,
                );
                value = Some(self.load_local(temporary, span));
            }
            self.drops_for_return(moved, out, span)?;
        }
        out.push(Statement::Return { value }, span);
        Ok(())
    }

    pub(super) fn lowered_block(&mut self, block: &ast::Block) -> Result<Block, LowerError> {
        let mut out = Block::new();
        self.block_into(block, &mut out)?;
        Ok(out)
    }

    pub(super) fn stmt(&mut self, stmt: &Stmt, out: &mut Block) -> Result<(), LowerError> {
        let types = self.types;
        if let Some(replacement) = types.replaced_stmt(stmt) {
            // `v[i] = x` through `IndexMut`: the assignment of the place it inlines to.
            return self.stmt(replacement, out);
        }
        match stmt {
            Stmt::Let {
                name,
                init:
                    Some(Expr {
                        kind:
                            ExprKind::Intrinsic {
                                intrinsic,
                                ty: Some(elem),
                                args,
                            },
                        ..
                    }),
                span,
                ..
            } if intrinsic.is_slice() => match intrinsic {
                Intrinsic::SliceAt { .. } => {
                    self.slice_at_let(name, *intrinsic, elem, args, *span, out)?
                }
                _ => self.shared_let(name, *intrinsic, elem, args, *span)?,
            },
            Stmt::Let {
                name,
                init:
                    Some(Expr {
                        kind: ExprKind::Repeat { value, len },
                        ..
                    }),
                span,
                ..
            } => self.array_let(stmt, name, value, len, *span, out)?,
            Stmt::Let {
                name,
                init:
                    Some(
                        init @ Expr {
                            kind: ExprKind::SubSlice { .. },
                            ..
                        },
                    ),
                ..
            } => self.view_let(name, init, out)?,
            Stmt::LetTuple { names, init, .. } if matches!(init.kind, ExprKind::SplitAt { .. }) => {
                self.split_at_let(names, init, out)?
            }
            // `let b = a;` of an array: a local array of its own, every element copied
            // (arrays are `Copy` values in Rust).
            Stmt::Let {
                name,
                init: Some(init),
                span,
                ..
            } if self.array_value_type(init)?.is_some() => {
                let local = self.copied_array(name, init, *span, out)?;
                let len = self
                    .array_len_of(self.function.locals[local].ty)
                    .unwrap_or(0);
                self.scopes.bind(name, Binding::Array(local, len));
            }
            // `let r = tile(acc);`: the array the call wrote is the local.
            Stmt::Let {
                name,
                init: Some(init),
                span,
                ..
            } if self.returns_array(init) => {
                let (source, len) = self.array_source(init, out)?;
                let arrays::ArraySource::Local(local) = source else {
                    return Err(LowerError::new(
                        *span,
                        "internal: a call's array is a local",
                    ));
                };
                self.scopes.bind(name, Binding::Array(local, len));
            }
            Stmt::LetTuple { names, init, span }
                if matches!(
                    init.kind,
                    ExprKind::Call { .. } | ExprKind::InlinePtx { .. }
                ) =>
            {
                // A device function's or `ptx!`'s tuple: each element into its own local.
                let tuple = self
                    .types
                    .struct_binding(stmt)
                    .ok_or_else(|| LowerError::new(*span, "internal: tuple call without a type"))?;
                let ty = self.struct_type(tuple, *span)?;
                let value = self.expr(init, out)?;
                let temporary = self.local("tuple.value", ty, *span);
                out.push(
                    Statement::LocalStore {
                        local: temporary,
                        value,
                    },
                    *span,
                );
                let TypeInner::Struct { members, .. } = self.program.module.types[ty].inner.clone()
                else {
                    return Err(LowerError::new(*span, "internal: a tuple is a struct"));
                };
                let mut bound = Vec::new();
                for ((name, _), (index, member)) in names.iter().zip((0u32..).zip(&members)) {
                    let base = self.expr_node(Expression::LocalPointer(temporary), *span);
                    let pointer =
                        self.expr_node(Expression::FieldPointer { base, field: index }, *span);
                    let local = self.local(name, member.ty, *span);
                    match self.program.module.types[member.ty].inner {
                        // An array element (`(bool, [f32; 2])`): copied element by element.
                        TypeInner::Array { base, len } => {
                            for k in 0..len {
                                let at = self.int(u64::from(k), Scalar::Usize, *span);
                                let to = self.expr_node(
                                    Expression::ArrayElement { local, index: at },
                                    *span,
                                );
                                let at = self.int(u64::from(k), Scalar::Usize, *span);
                                let from = self.expr_node(
                                    Expression::MemberElement {
                                        array: pointer,
                                        index: at,
                                    },
                                    *span,
                                );
                                self.copy_value(to, from, base, *span, out);
                            }
                        }
                        _ => {
                            let value = self.expr_node(Expression::Load { pointer }, *span);
                            out.push(Statement::LocalStore { local, value }, *span);
                        }
                    }
                    bound.push((name, local));
                }
                // Bound after every element is read: `let (a, b) = f(a, b)` shadows. An
                // element may be a struct or an array (`(bool, Hit)` of an `Option<Hit>`).
                for ((name, local), member) in bound.into_iter().zip(&members) {
                    match &self.program.module.types[member.ty].inner {
                        TypeInner::Struct {
                            name: struct_name, ..
                        } => {
                            let struct_name = struct_name.clone();
                            self.struct_names.insert(name.clone(), struct_name);
                            self.scopes.bind(name, Binding::Local(local));
                        }
                        TypeInner::Array { len, .. } => {
                            let len = *len;
                            self.scopes.bind(name, Binding::Array(local, len));
                        }
                        _ => self.scopes.bind(name, Binding::Local(local)),
                    }
                }
            }
            Stmt::LetTuple { names, init, span } => {
                let ExprKind::Intrinsic {
                    args,
                    intrinsic: Intrinsic::VectorLoad(n),
                    ..
                } = &init.kind
                else {
                    return Err(LowerError::new(*span, "tuples come from `vload4`/`vload2`"));
                };
                let elem = self.types.binding(stmt).ok_or_else(|| {
                    LowerError::new(*span, "internal: vector load without a type")
                })?;
                let pointer = self.vector_pointer(args, *n, *span, out)?;
                let ty = self.scalar_type(elem);
                let results: Vec<_> = names
                    .iter()
                    .map(|(name, _)| self.local(name, ty, *span))
                    .collect();
                out.push(
                    Statement::VectorLoad {
                        pointer,
                        results: results.clone(),
                    },
                    *span,
                );
                for ((name, _), local) in names.iter().zip(results) {
                    self.scopes.bind(name, Binding::Local(local));
                }
            }
            Stmt::Let {
                name,
                init: Some(init),
                span,
                ..
            } if self.types.struct_binding(stmt).is_some() => {
                let struct_name = self.types.struct_binding(stmt).unwrap_or_default();
                let ty = self.struct_type(struct_name, *span)?;
                self.reject_copy(init)?;
                let value = self.expr(init, out)?;
                let local = self.local(name, ty, *span);
                out.push(Statement::LocalStore { local, value }, *span);
                self.register_drop(local, struct_name, *span)?;
                self.scopes.bind(name, Binding::Local(local));
                self.struct_names
                    .insert(name.clone(), struct_name.to_owned());
            }
            Stmt::Let {
                name, init, span, ..
            } => {
                let scalar = self.types.binding(stmt).ok_or_else(|| {
                    LowerError::new(*span, "internal: `let` without an inferred type")
                })?;
                let ty = self.scalar_type(scalar);
                // The initialiser is evaluated before the new name is visible (shadowing).
                let value = init.as_ref().map(|init| self.expr(init, out)).transpose()?;
                let local = self.local(name, ty, *span);
                if let Some(value) = value {
                    out.push(Statement::LocalStore { local, value }, *span);
                }
                self.scopes.bind(name, Binding::Local(local));
            }
            Stmt::Assign { .. } if self.types.desugared_stmt(stmt).is_some() => {
                // `a += b` of structs: the call of its `#[device]` `add_assign`.
                let types = self.types;
                if let Some(call) = types.desugared_stmt(stmt) {
                    self.call(call, out, false)?;
                }
            }
            // `c = b;` of arrays: every element copied (after all are read, so `a = b`
            // and `b = a` in either order mean what Rust means).
            Stmt::Assign {
                place,
                op: None,
                value,
                span,
            } if self.array_value_type(place)?.is_some() => {
                let copy = self.assigned_array(place, value, *span, out)?;
                let (target, _) = self.array_source(place, out)?;
                let target = match target {
                    arrays::ArraySource::Local(local) => {
                        self.expr_node(Expression::LocalPointer(local), *span)
                    }
                    arrays::ArraySource::Pointer(pointer) => pointer,
                    arrays::ArraySource::Repeat(_) => {
                        return Err(LowerError::new(
                            place.span,
                            "an array literal cannot be assigned to",
                        ))
                    }
                };
                let copy_ty = self.function.locals[copy].ty;
                self.copy_array_of(
                    arrays::ArraySource::Local(copy),
                    target,
                    copy_ty,
                    *span,
                    out,
                );
            }
            Stmt::Assign {
                place,
                op,
                value,
                span,
            } => self.assign(place, *op, value, *span, out)?,
            Stmt::If(if_stmt) => self.if_stmt(if_stmt, out)?,
            Stmt::While {
                label,
                cond,
                body,
                span,
            } => {
                let id = self.enter_loop(label);
                let mut loop_body = Block::new();
                let condition = self.expr(cond, &mut loop_body);
                let inner = condition.and_then(|condition| {
                    let mut exit = Block::new();
                    exit.push(Statement::Break { target: id }, *span);
                    loop_body.push(
                        Statement::If {
                            condition,
                            accept: Block::new(),
                            reject: exit,
                        },
                        cond.span,
                    );
                    self.block_into(body, &mut loop_body)
                });
                self.loops.pop();
                inner?;
                out.push(
                    Statement::Loop {
                        id,
                        body: loop_body,
                        continuing: Block::new(),
                    },
                    *span,
                );
            }
            Stmt::Loop { label, body, span } => {
                let id = self.enter_loop(label);
                let body = self.lowered_block(body);
                self.loops.pop();
                out.push(
                    Statement::Loop {
                        id,
                        body: body?,
                        continuing: Block::new(),
                    },
                    *span,
                );
            }
            Stmt::For {
                label,
                var,
                range,
                body,
                span,
            } => self.for_loop(stmt, label, var, range, body, *span, out)?,
            Stmt::Break { label, span } => {
                let target = self.loop_target(label, *span, "break")?;
                self.drops_for_loop(target, out, *span)?;
                out.push(Statement::Break { target }, *span);
            }
            Stmt::Continue { label, span } => {
                let target = self.loop_target(label, *span, "continue")?;
                self.drops_for_loop(target, out, *span)?;
                out.push(Statement::Continue { target }, *span);
            }
            Stmt::Match {
                scrutinee,
                arms,
                span,
            } => self.lower_match(scrutinee, arms, None, *span, out)?,
            Stmt::Print { pieces, args, span } => {
                let mut arguments = Vec::new();
                for arg in args {
                    arguments.push(self.expr(arg, out)?);
                }
                out.push(
                    Statement::Print {
                        pieces: pieces.clone(),
                        arguments,
                    },
                    *span,
                );
            }
            Stmt::Assert {
                cond,
                text,
                message,
                debug_only,
                span,
            } => self.assertion(cond, text, message, *debug_only, *span, out)?,
            Stmt::Return { value, span } => self.return_value(value.as_ref(), *span, out)?,
            Stmt::Expr(expr) => match &expr.kind {
                ExprKind::MethodCall { .. } => {
                    self.call(expr, out, false)?;
                }
                ExprKind::Intrinsic {
                    intrinsic: Intrinsic::VectorStore(n),
                    args,
                    ..
                } if args.len() == 3 => {
                    let pointer = self.vector_pointer(&args[..2], *n, expr.span, out)?;
                    let ExprKind::Tuple(values) = &args[2].kind else {
                        return Err(LowerError::new(
                            expr.span,
                            "`vstore` takes a tuple of values",
                        ));
                    };
                    let mut handles = Vec::new();
                    for value in values {
                        handles.push(self.expr(value, out)?);
                    }
                    out.push(
                        Statement::VectorStore {
                            pointer,
                            values: handles,
                        },
                        expr.span,
                    );
                }
                ExprKind::Intrinsic {
                    intrinsic: Intrinsic::VectorStoreArray,
                    args,
                    ..
                } => self.vector_array_store(args, expr.span, out)?,
                ExprKind::Intrinsic {
                    intrinsic, args, ..
                } => {
                    self.intrinsic(expr, *intrinsic, args, out, false)?;
                }
                ExprKind::InlinePtx { template, args, .. } => {
                    self.inline_ptx(expr, template, args, out, false)?;
                }
                _ => {
                    self.call(expr, out, false)?;
                }
            },
            Stmt::Block(block) => {
                let inner = self.lowered_block(block)?;
                out.push(Statement::Block(inner), block.span);
            }
        }
        Ok(())
    }

    pub(super) fn assign(
        &mut self,
        place: &Expr,
        op: Option<BinaryOp>,
        value: &Expr,
        span: Span,
        out: &mut Block,
    ) -> Result<(), LowerError> {
        // Whole structs have no scalar type; they are copied as they are.
        self.reject_copy(value)?;
        let place_ty = self.types.expr(place);
        let mut value_handle = self.expr(value, out)?;
        if let (Some(place_ty), true) = (place_ty, op.is_some_and(BinaryOp::is_shift)) {
            if self.type_of(value)? != place_ty {
                value_handle = self.cast(value_handle, place_ty, value.span);
            }
        }
        match &place.kind {
            ExprKind::Field { base, field } => {
                let pointer = self.field_pointer(base, field, place.span, out)?;
                if let Some(op) = op {
                    let current = self.expr_node(Expression::Load { pointer }, place.span);
                    value_handle = self.binary(op, current, value_handle, span);
                }
                out.push(
                    Statement::Store {
                        pointer,
                        value: value_handle,
                    },
                    span,
                );
            }
            // `*out = value` of a `&mut S` parameter: a store through the reference.
            ExprKind::Var(name) if matches!(self.scopes.lookup(name), Some(Binding::Argument(index)) if self.is_reference_argument(index)) =>
            {
                let Some(Binding::Argument(index)) = self.scopes.lookup(name) else {
                    return Err(LowerError::new(place.span, "internal: not a reference"));
                };
                let pointer = self.expr_node(Expression::FunctionArgument(index), place.span);
                // `*acc += v` of a `&mut f32`.
                if let Some(op) = op {
                    let current = self.expr_node(Expression::Load { pointer }, place.span);
                    value_handle = self.binary(op, current, value_handle, span);
                }
                out.push(
                    Statement::Store {
                        pointer,
                        value: value_handle,
                    },
                    span,
                );
            }
            ExprKind::Var(name) => {
                let Some(Binding::Local(local)) = self.scopes.lookup(name) else {
                    return Err(LowerError::new(
                        place.span,
                        format!("cannot assign to `{name}`: declare it with `let mut` (or `mut` in the parameter list)"),
                    ));
                };
                if let Some(op) = op {
                    let current = self.load_local(local, place.span);
                    value_handle = self.binary(op, current, value_handle, span);
                }
                out.push(
                    Statement::LocalStore {
                        local,
                        value: value_handle,
                    },
                    span,
                );
            }
            ExprKind::Index { base, index } => {
                let pointer = self.element_pointer(base, index, out)?;
                if let Some(op) = op {
                    let current = self.expr_node(Expression::Load { pointer }, place.span);
                    value_handle = self.binary(op, current, value_handle, span);
                }
                out.push(
                    Statement::Store {
                        pointer,
                        value: value_handle,
                    },
                    span,
                );
            }
            _ => {
                return Err(LowerError::new(
                    place.span,
                    "only local variables and slice elements can be assigned",
                ))
            }
        }
        Ok(())
    }

    pub(super) fn if_stmt(&mut self, stmt: &IfStmt, out: &mut Block) -> Result<(), LowerError> {
        // `if CONST { .. }` on a constant of the specialisation (C++'s `if constexpr`): only
        // the branch taken is lowered, so the other may use what this specialisation cannot
        // compile or simulate (an sm_90a instruction, a cluster register).
        if let Some(taken) = self.constant_condition(&stmt.cond) {
            let condition = self.literal(Literal::Bool(true), stmt.span);
            let accept = match (taken, stmt.otherwise.as_deref()) {
                (true, _) => self.lowered_block(&stmt.then)?,
                (false, None) => Block::new(),
                (false, Some(Else::Block(block))) => self.lowered_block(block)?,
                (false, Some(Else::If(nested))) => {
                    let mut accept = Block::new();
                    self.if_stmt(nested, &mut accept)?;
                    accept
                }
            };
            out.push(
                Statement::If {
                    condition,
                    accept,
                    reject: Block::new(),
                },
                stmt.span,
            );
            return Ok(());
        }
        let condition = self.expr(&stmt.cond, out)?;
        let accept = self.lowered_block(&stmt.then)?;
        let reject = match stmt.otherwise.as_deref() {
            None => Block::new(),
            Some(Else::Block(block)) => self.lowered_block(block)?,
            Some(Else::If(nested)) => {
                let mut reject = Block::new();
                self.if_stmt(nested, &mut reject)?;
                reject
            }
        };
        out.push(
            Statement::If {
                condition,
                accept,
                reject,
            },
            stmt.span,
        );
        Ok(())
    }

    /// `let mut acc = [value; len];`: a local array, every element set to `value`.
    pub(super) fn array_let(
        &mut self,
        stmt: &Stmt,
        name: &str,
        value: &Expr,
        len: &Expr,
        span: Span,
        out: &mut Block,
    ) -> Result<(), LowerError> {
        const MAX_LEN: u64 = 4096;
        if let ExprKind::Repeat {
            value: element,
            len: columns,
        } = &value.kind
        {
            return self.rows_let(stmt, name, element, (columns, len), span, out);
        }
        let count = self.constant_value(len)?;
        if count == 0 || count > MAX_LEN {
            return Err(LowerError::new(
                len.span,
                format!("a local array holds 1 to {MAX_LEN} elements (registers or local memory), not {count}"),
            ));
        }
        let count = count as u32;
        // The element: a struct (`[Body::zero(); 4]`) or a scalar.
        let elem_ty = match self.types.struct_binding(stmt) {
            Some(struct_name) => self.struct_type(struct_name, span)?,
            None => {
                let elem = self.types.binding(stmt).ok_or_else(|| {
                    LowerError::new(span, "internal: array without an element type")
                })?;
                self.scalar_type(elem)
            }
        };
        let array_ty = self.program.module.types.insert(Type {
            inner: TypeInner::Array {
                base: elem_ty,
                len: count,
            },
        });
        let value = self.expr(value, out)?;
        let initial = self.local(&format!("{name}.init"), elem_ty, span);
        out.push(
            Statement::LocalStore {
                local: initial,
                value,
            },
            span,
        );
        let local = self.local(name, array_ty, span);
        for k in 0..count {
            let index = self.int(u64::from(k), Scalar::Usize, span);
            let pointer = self.expr_node(Expression::ArrayElement { local, index }, span);
            let value = self.load_local(initial, span);
            out.push(Statement::Store { pointer, value }, span);
        }
        self.scopes.bind(name, Binding::Array(local, count));
        Ok(())
    }
}
