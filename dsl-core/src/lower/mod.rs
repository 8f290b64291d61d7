//! Lowering of captured syntax ([`crate::ast`]) to the typed IR ([`crate::ir`]).
//!
//! First [`infer`] recovers the type of every expression, then the body is translated
//! statement by statement. Rust constructs that have no IR node of their own are expressed
//! with the ones that exist: `while` and `for` become [`Statement::Loop`]s, `if` used as a
//! value writes a temporary local, `global_index()` is arithmetic on the thread indices.

mod error;
mod infer;
mod scope;

pub use error::LowerError;

use crate::ast::{
    self, BinaryOp, Builtin, Else, Expr, ExprKind, IfStmt, KernelSource, ParamType, RangeExpr, Stmt,
};
use crate::ir::{
    Block, BuiltinValue, EntryPoint, Expression, Function, FunctionArgument, Handle, Literal,
    LocalVariable, LoopId, Module, Statement, Type, TypeInner,
};
use crate::{Scalar, Span};
use infer::TypeTable;
use scope::Scopes;

/// Lowers a captured kernel to a module with one entry point named after the kernel.
pub fn lower_kernel(kernel: &KernelSource) -> Result<Module, LowerError> {
    let types = infer::infer(kernel)?;
    let mut module = Module::default();
    let mut lowerer = Lowerer {
        module: &mut module,
        types: &types,
        function: Function {
            name: kernel.name.clone(),
            span: kernel.span,
            ..Function::default()
        },
        scopes: Scopes::default(),
        loops: Vec::new(),
        next_loop: 0,
    };
    let mut body = Block::new();
    lowerer.scopes.push();
    for (index, param) in kernel.params.iter().enumerate() {
        lowerer.param(index, param, &mut body);
    }
    lowerer.block_into(&kernel.body, &mut body)?;
    let mut function = lowerer.function;
    function.body = body;
    let function = module.functions.append(function);
    module.entry_points.push(EntryPoint {
        symbol: kernel.name.clone(),
        function,
    });
    Ok(module)
}

/// What a name refers to in the IR being built.
#[derive(Clone, Copy, Debug)]
enum Binding {
    Argument(u32),
    Local(Handle<LocalVariable>),
}

struct Lowerer<'a> {
    module: &'a mut Module,
    types: &'a TypeTable,
    function: Function,
    scopes: Scopes<Binding>,
    /// Enclosing loops, innermost last, with their labels.
    loops: Vec<(Option<String>, LoopId)>,
    next_loop: u32,
}

impl Lowerer<'_> {
    fn scalar_type(&mut self, scalar: Scalar) -> Handle<Type> {
        self.module.types.insert(Type {
            inner: TypeInner::Scalar(scalar),
        })
    }

    fn param(&mut self, index: usize, param: &ast::Param, body: &mut Block) {
        let ty = match param.ty {
            ParamType::Scalar(s) => self.scalar_type(s),
            ParamType::Slice { elem, mutable } => {
                let base = self.scalar_type(elem);
                self.module.types.insert(Type {
                    inner: TypeInner::Slice { base, mutable },
                })
            }
        };
        self.function.arguments.push(FunctionArgument {
            name: param.name.clone(),
            ty,
            span: param.span,
        });
        let argument = index as u32;
        let binding = match (param.ty, param.mutable) {
            (ParamType::Scalar(_), true) => {
                // `mut n: u32`: the kernel writes its own copy of the argument.
                let local = self.local(&param.name, ty, param.span);
                let value = self.expr_node(Expression::FunctionArgument(argument), param.span);
                body.push(Statement::LocalStore { local, value }, param.span);
                Binding::Local(local)
            }
            _ => Binding::Argument(argument),
        };
        self.scopes.bind(&param.name, binding);
    }

    fn local(&mut self, name: &str, ty: Handle<Type>, span: Span) -> Handle<LocalVariable> {
        self.function.locals.append(LocalVariable {
            name: name.to_owned(),
            ty,
            span,
        })
    }

    fn expr_node(&mut self, expression: Expression, span: Span) -> Handle<Expression> {
        self.function.add_expression(expression, span)
    }

    fn type_of(&self, expr: &Expr) -> Result<Scalar, LowerError> {
        self.types
            .expr(expr)
            .ok_or_else(|| LowerError::new(expr.span, "internal: expression has no inferred type"))
    }

    fn literal(&mut self, literal: Literal, span: Span) -> Handle<Expression> {
        self.expr_node(Expression::Literal(literal), span)
    }

    fn int(&mut self, value: u64, ty: Scalar, span: Span) -> Handle<Expression> {
        self.literal(Literal::Int { bits: value, ty }, span)
    }

    fn binary(
        &mut self,
        op: BinaryOp,
        left: Handle<Expression>,
        right: Handle<Expression>,
        span: Span,
    ) -> Handle<Expression> {
        self.expr_node(Expression::Binary { op, left, right }, span)
    }

    fn cast(&mut self, value: Handle<Expression>, to: Scalar, span: Span) -> Handle<Expression> {
        self.expr_node(Expression::Cast { value, to }, span)
    }

    fn load_local(&mut self, local: Handle<LocalVariable>, span: Span) -> Handle<Expression> {
        self.expr_node(Expression::LocalLoad(local), span)
    }

    /// Evaluates `value` once into a fresh hidden local, for values used many times.
    fn temporary(
        &mut self,
        name: &str,
        value: Handle<Expression>,
        ty: Scalar,
        span: Span,
        block: &mut Block,
    ) -> Handle<LocalVariable> {
        let ty = self.scalar_type(ty);
        let local = self.local(name, ty, span);
        block.push(Statement::LocalStore { local, value }, span);
        local
    }

    fn builtin_u64(&mut self, value: BuiltinValue, span: Span) -> Handle<Expression> {
        let raw = self.expr_node(Expression::Builtin(value), span);
        self.cast(raw, Scalar::Usize, span)
    }

    fn expr(&mut self, expr: &Expr, block: &mut Block) -> Result<Handle<Expression>, LowerError> {
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
                Some(Binding::Argument(index)) => {
                    self.expr_node(Expression::FunctionArgument(index), span)
                }
                Some(Binding::Local(local)) => self.load_local(local, span),
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
            ExprKind::Index { base, index } => {
                let pointer = self.element_pointer(base, index, block)?;
                self.expr_node(Expression::Load { pointer }, span)
            }
            ExprKind::Len(slice) => {
                let slice = self.expr(slice, block)?;
                self.expr_node(Expression::SliceLength { slice }, span)
            }
            ExprKind::Builtin(builtin) => self.builtin(*builtin, span),
            ExprKind::If {
                cond,
                then,
                otherwise,
            } => {
                let ty = self.type_of(expr)?;
                let ty = self.scalar_type(ty);
                let result = self.local("if.value", ty, span);
                let condition = self.expr(cond, block)?;
                let accept = self.value_block(then, result)?;
                let reject = self.value_block(otherwise, result)?;
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
        })
    }

    /// Lowers a block whose tail value is stored into `result`.
    fn value_block(
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
    fn block_value_into(
        &mut self,
        block: &ast::Block,
        out: &mut Block,
    ) -> Result<Handle<Expression>, LowerError> {
        for stmt in &block.stmts {
            self.stmt(stmt, out)?;
        }
        match &block.tail {
            Some(tail) => self.expr(tail, out),
            None => Err(LowerError::new(
                block.span,
                "this block must end in a value",
            )),
        }
    }

    fn builtin(&mut self, builtin: Builtin, span: Span) -> Handle<Expression> {
        let value = match builtin {
            Builtin::ThreadIdx(axis) => BuiltinValue::ThreadIdx(axis),
            Builtin::BlockIdx(axis) => BuiltinValue::BlockIdx(axis),
            Builtin::BlockDim(axis) => BuiltinValue::BlockDim(axis),
            Builtin::GridDim(axis) => BuiltinValue::GridDim(axis),
            Builtin::GlobalIndex => {
                let block = self.builtin_u64(BuiltinValue::BlockIdx(ast::Axis::X), span);
                let dim = self.builtin_u64(BuiltinValue::BlockDim(ast::Axis::X), span);
                let thread = self.builtin_u64(BuiltinValue::ThreadIdx(ast::Axis::X), span);
                let base = self.binary(BinaryOp::Mul, block, dim, span);
                return self.binary(BinaryOp::Add, base, thread, span);
            }
            Builtin::GridStride => {
                let grid = self.builtin_u64(BuiltinValue::GridDim(ast::Axis::X), span);
                let dim = self.builtin_u64(BuiltinValue::BlockDim(ast::Axis::X), span);
                return self.binary(BinaryOp::Mul, grid, dim, span);
            }
        };
        self.expr_node(Expression::Builtin(value), span)
    }

    fn element_pointer(
        &mut self,
        base: &Expr,
        index: &Expr,
        block: &mut Block,
    ) -> Result<Handle<Expression>, LowerError> {
        let base = self.expr(base, block)?;
        let index = self.expr(index, block)?;
        Ok(self.expr_node(Expression::ElementPointer { base, index }, Span::default()))
    }

    fn block_into(&mut self, block: &ast::Block, out: &mut Block) -> Result<(), LowerError> {
        self.scopes.push();
        let result = block.stmts.iter().try_for_each(|stmt| self.stmt(stmt, out));
        self.scopes.pop();
        result
    }

    fn lowered_block(&mut self, block: &ast::Block) -> Result<Block, LowerError> {
        let mut out = Block::new();
        self.block_into(block, &mut out)?;
        Ok(out)
    }

    fn stmt(&mut self, stmt: &Stmt, out: &mut Block) -> Result<(), LowerError> {
        match stmt {
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
                out.push(Statement::Break { target }, *span);
            }
            Stmt::Continue { label, span } => {
                let target = self.loop_target(label, *span, "continue")?;
                out.push(Statement::Continue { target }, *span);
            }
            Stmt::Return { span } => out.push(Statement::Return { value: None }, *span),
            Stmt::Block(block) => {
                let inner = self.lowered_block(block)?;
                out.push(Statement::Block(inner), block.span);
            }
        }
        Ok(())
    }

    fn assign(
        &mut self,
        place: &Expr,
        op: Option<BinaryOp>,
        value: &Expr,
        span: Span,
        out: &mut Block,
    ) -> Result<(), LowerError> {
        let place_ty = self.type_of(place)?;
        let mut value_handle = self.expr(value, out)?;
        if op.is_some_and(BinaryOp::is_shift) && self.type_of(value)? != place_ty {
            value_handle = self.cast(value_handle, place_ty, value.span);
        }
        match &place.kind {
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

    fn if_stmt(&mut self, stmt: &IfStmt, out: &mut Block) -> Result<(), LowerError> {
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

    fn enter_loop(&mut self, label: &Option<String>) -> LoopId {
        let id = LoopId(self.next_loop);
        self.next_loop += 1;
        self.loops.push((label.clone(), id));
        id
    }

    fn loop_target(
        &self,
        label: &Option<String>,
        span: Span,
        what: &str,
    ) -> Result<LoopId, LowerError> {
        let found = match label {
            None => self.loops.last(),
            Some(label) => self
                .loops
                .iter()
                .rev()
                .find(|(l, _)| l.as_deref() == Some(label.as_str())),
        };
        found.map(|(_, id)| *id).ok_or_else(|| match label {
            Some(label) => {
                LowerError::new(span, format!("`{what}` to unknown loop label `'{label}`"))
            }
            None => LowerError::new(span, format!("`{what}` outside of a loop")),
        })
    }

    /// `for var in start..end` (or `..=`, or `.step_by(step)`), lowered so that the loop
    /// never steps past the end of the range and never overflows the counter:
    ///
    /// ```text
    /// if start < end && step != 0 {            // `<=` for inclusive ranges
    ///     counter = start
    ///     loop { var = counter; body
    ///            continuing: if end - counter <= step { break }   // `<` inclusive
    ///                        counter += step }
    /// }
    /// ```
    ///
    /// The distance `end - counter` is computed unsigned, so signed ranges of any extent
    /// work. A zero step runs no iteration (Rust would panic).
    #[allow(clippy::too_many_arguments)]
    fn for_loop(
        &mut self,
        stmt: &Stmt,
        label: &Option<String>,
        var: &str,
        range: &RangeExpr,
        body: &ast::Block,
        span: Span,
        out: &mut Block,
    ) -> Result<(), LowerError> {
        let ty = self
            .types
            .binding(stmt)
            .ok_or_else(|| LowerError::new(span, "internal: `for` variable without a type"))?;
        let rspan = range.span;
        let start = self.expr(&range.start, out)?;
        let counter = self.temporary(&format!("{var}.counter"), start, ty, rspan, out);
        let end = self.expr(&range.end, out)?;
        let end = self.temporary(&format!("{var}.end"), end, ty, rspan, out);
        let step = match &range.step {
            Some(step) => {
                let value = self.expr(step, out)?;
                Some(self.temporary(&format!("{var}.step"), value, Scalar::Usize, rspan, out))
            }
            None => None,
        };

        // Entry test.
        let first = self.load_local(counter, rspan);
        let last = self.load_local(end, rspan);
        let cmp = if range.inclusive {
            BinaryOp::Le
        } else {
            BinaryOp::Lt
        };
        let mut condition = self.binary(cmp, first, last, rspan);
        if let Some(step) = step {
            let step_value = self.load_local(step, rspan);
            let zero = self.int(0, Scalar::Usize, rspan);
            let nonzero = self.binary(BinaryOp::Ne, step_value, zero, rspan);
            condition = self.expr_node(
                Expression::Logical {
                    and: true,
                    left: condition,
                    right: nonzero,
                },
                rspan,
            );
        }

        // Body: bind the user's variable to the counter, so assigning to a `mut` loop
        // variable does not change the iteration (as in Rust).
        let id = self.enter_loop(label);
        let mut loop_body = Block::new();
        let user_ty = self.scalar_type(ty);
        let user_var = self.local(var, user_ty, span);
        let current = self.load_local(counter, span);
        loop_body.push(
            Statement::LocalStore {
                local: user_var,
                value: current,
            },
            span,
        );
        self.scopes.push();
        self.scopes.bind(var, Binding::Local(user_var));
        let lowered = self.block_into(body, &mut loop_body);
        self.scopes.pop();
        self.loops.pop();
        lowered?;

        // Continuing: exit before the counter would pass the end, then step.
        let mut continuing = Block::new();
        let unsigned = ty.to_unsigned();
        let end_value = self.load_local(end, rspan);
        let end_u = self.cast(end_value, unsigned, rspan);
        let counter_value = self.load_local(counter, rspan);
        let counter_u = self.cast(counter_value, unsigned, rspan);
        let distance = self.binary(BinaryOp::Sub, end_u, counter_u, rspan);
        let (distance, step_value) = match step {
            Some(step) => {
                let wide = self.cast(distance, Scalar::Usize, rspan);
                (wide, self.load_local(step, rspan))
            }
            None => (distance, self.int(1, unsigned, rspan)),
        };
        let exit_op = if range.inclusive {
            BinaryOp::Lt
        } else {
            BinaryOp::Le
        };
        let done = self.binary(exit_op, distance, step_value, rspan);
        let mut exit = Block::new();
        exit.push(Statement::Break { target: id }, rspan);
        continuing.push(
            Statement::If {
                condition: done,
                accept: exit,
                reject: Block::new(),
            },
            rspan,
        );
        let counter_value = self.load_local(counter, rspan);
        let increment = match step {
            Some(step) => {
                let step_value = self.load_local(step, rspan);
                self.cast(step_value, ty, rspan)
            }
            None => self.int(1, ty, rspan),
        };
        let next = self.binary(BinaryOp::Add, counter_value, increment, rspan);
        continuing.push(
            Statement::LocalStore {
                local: counter,
                value: next,
            },
            rspan,
        );

        let mut guarded = Block::new();
        guarded.push(
            Statement::Loop {
                id,
                body: loop_body,
                continuing,
            },
            span,
        );
        out.push(
            Statement::If {
                condition,
                accept: guarded,
                reject: Block::new(),
            },
            span,
        );
        Ok(())
    }
}
