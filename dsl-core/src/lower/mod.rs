//! Lowering of captured syntax ([`crate::ast`]) to the typed IR ([`crate::ir`]).
//!
//! First [`infer`] recovers the type of every expression, then the body is translated
//! statement by statement. Rust constructs that have no IR node of their own are expressed
//! with the ones that exist: `while` and `for` become [`Statement::Loop`]s, `if` used as a
//! value writes a temporary local, `global_index()` is arithmetic on the thread indices.

mod drops;
mod error;
mod infer;
mod scope;
mod spec;

pub use error::LowerError;
pub use spec::{Library, Resolved, Specialization};

use crate::ast::{
    self, BinaryOp, Builtin, Else, Expr, ExprKind, FunctionSource, IfStmt, ParamType, RangeExpr,
    Stmt, ValueType,
};
use crate::intrinsics::Intrinsic;
use crate::ir::{
    AddressSpace, Block, BuiltinValue, CompileFlag, EntryPoint, Expression, ExternFunction,
    Function, FunctionArgument, Handle, Literal, LocalVariable, LoopId, Module, SharedVariable,
    Statement, StructMember, Type, TypeInner,
};
use crate::{Scalar, Span};
use infer::{Instance, TypeTable};
use scope::Scopes;

/// The symbol of a kernel's specialisation: the kernel's name, then the specialisation's
/// values (`scale_f32_4`), so every specialisation of a kernel can live in one module.
pub fn entry_symbol(name: &str, spec: &Specialization) -> String {
    let suffix = spec.suffix();
    if suffix.is_empty() {
        name.to_owned()
    } else {
        format!("{name}_{suffix}")
    }
}

/// Lowers a kernel under `spec` to a module with one entry point (named by
/// [`entry_symbol`]) and the instances of the device functions it reaches in `library`.
pub fn lower_kernel(
    kernel: &FunctionSource,
    library: &Library,
    spec: &Specialization,
) -> Result<Module, LowerError> {
    spec.check_complete(kernel)?;
    let mut program = Program {
        module: Module::default(),
        library,
        instances: Vec::new(),
        active: Vec::new(),
    };
    let function = program.lower_function(kernel, spec, true)?;
    program.module.entry_points.push(EntryPoint {
        symbol: entry_symbol(&kernel.name, spec),
        function,
    });
    Ok(program.module)
}

/// The module being built and the device function instances already in it.
struct Program<'a> {
    module: Module,
    library: &'a Library,
    instances: Vec<(Instance, Handle<Function>)>,
    /// Functions being lowered, outermost first, to report recursion.
    active: Vec<String>,
}

impl Program<'_> {
    /// The IR function of a device function instance, lowering it on first use.
    fn instance(
        &mut self,
        instance: &Instance,
        span: Span,
    ) -> Result<Handle<Function>, LowerError> {
        if let Some((_, handle)) = self.instances.iter().find(|(i, _)| i == instance) {
            return Ok(*handle);
        }
        if self.active.contains(&instance.name) {
            let cycle = self.active.join(" → ");
            return Err(LowerError::new(
                span,
                format!(
                    "recursion is not supported in kernels and device functions: {cycle} → {}",
                    instance.name
                ),
            ));
        }
        let library = self.library;
        let source = library.get(&instance.name).ok_or_else(|| {
            LowerError::new(
                span,
                format!("`{}` is not a known `#[device]` function", instance.name),
            )
        })?;
        instance.spec.check_complete(source)?;
        let handle = self.lower_function(source, &instance.spec, false)?;
        self.instances.push((instance.clone(), handle));
        Ok(handle)
    }

    fn lower_function(
        &mut self,
        source: &FunctionSource,
        spec: &Specialization,
        is_kernel: bool,
    ) -> Result<Handle<Function>, LowerError> {
        self.active.push(source.name.clone());
        let result = self.lower_function_body(source, spec, is_kernel);
        self.active.pop();
        let function = result?;
        Ok(self.module.functions.append(function))
    }

    fn lower_function_body(
        &mut self,
        source: &FunctionSource,
        spec: &Specialization,
        is_kernel: bool,
    ) -> Result<Function, LowerError> {
        let library = self.library;
        let types = infer::infer(source, spec, library)?;
        let name = if is_kernel {
            source.name.clone()
        } else {
            entry_symbol(&source.name, spec)
        };
        let mut lowerer = Lowerer {
            program: self,
            types: &types,
            spec,
            function: Function {
                name,
                span: source.span,
                ..Function::default()
            },
            scopes: Scopes::default(),
            struct_names: Default::default(),
            loops: Vec::new(),
            next_loop: 0,
            drops: Vec::new(),
        };
        let mut body = Block::new();
        lowerer.scopes.push();
        for generic in &source.generics {
            if let Some(value) = spec.constant(&generic.name) {
                lowerer.scopes.bind(&generic.name, Binding::Constant(value));
            }
        }
        for param in &source.params {
            lowerer.param(param, &mut body)?;
        }
        if let Some(result) = &source.result {
            let ty = match library.resolve_value(spec, result, source.span)? {
                Resolved::Scalar(scalar) => lowerer.scalar_type(scalar),
                Resolved::Struct(name) => lowerer.struct_type(name, source.span)?,
            };
            lowerer.function.result = Some(ty);
        }
        match (&source.body.tail, &source.result) {
            (Some(tail), Some(_)) => lowerer.function_tail(&source.body, tail, &mut body)?,
            _ => lowerer.block_into(&source.body, &mut body)?,
        }
        let mut function = lowerer.function;
        function.body = body;
        Ok(function)
    }
}

/// What a name refers to in the IR being built.
#[derive(Clone, Copy, Debug)]
enum Binding {
    Argument(u32),
    Local(Handle<LocalVariable>),
    /// A const generic or `#[comptime]` parameter: a constant of the specialisation.
    Constant(Literal),
    /// A shared array bound by `let`.
    Shared(Handle<SharedVariable>),
    /// A local array bound by `let`, of `len` elements.
    Array(Handle<LocalVariable>, u32),
    /// A slice at a device address bound by `let` (`slice_at`): the address and length
    /// live in hidden locals, so every use sees the values of the `let`.
    RawSlice {
        address: Handle<LocalVariable>,
        length: Handle<LocalVariable>,
        elem: Handle<Type>,
        mutable: bool,
    },
}

struct Lowerer<'a, 'p> {
    program: &'a mut Program<'p>,
    types: &'a TypeTable,
    spec: &'a Specialization,
    function: Function,
    scopes: Scopes<Binding>,
    /// The struct type of each struct-valued name (parameters, slices of structs, locals).
    struct_names: std::collections::HashMap<String, String>,
    /// Enclosing loops, innermost last, with their labels.
    loops: Vec<(Option<String>, LoopId)>,
    next_loop: u32,
    /// The droppable locals of the open scopes, innermost last (see `drops`).
    drops: Vec<drops::DropFrame>,
}

impl Lowerer<'_, '_> {
    fn scalar_type(&mut self, scalar: Scalar) -> Handle<Type> {
        self.program.module.types.insert(Type {
            inner: TypeInner::Scalar(scalar),
        })
    }

    /// Declares a parameter. `#[comptime]` parameters are constants of the
    /// specialisation, not arguments.
    /// The IR type of the `#[derive(DeviceCopy)]` struct `name`.
    fn struct_type(&mut self, name: &str, span: Span) -> Result<Handle<Type>, LowerError> {
        let library = self.program.library;
        let layout = library.struct_layout(name, span)?;
        let members = layout
            .fields
            .iter()
            .map(|f| StructMember {
                name: f.name.to_owned(),
                ty: self.scalar_type(f.ty),
                offset: f.offset as u32,
            })
            .collect();
        Ok(self.program.module.types.insert(Type {
            inner: TypeInner::Struct {
                name: layout.name.to_owned(),
                members,
                size: layout.size as u32,
                align: layout.align as u32,
            },
        }))
    }

    /// A pointer to (or the value of) the struct `expr` names: a slice element, a struct
    /// local or a struct parameter.
    fn struct_place(
        &mut self,
        expr: &Expr,
        block: &mut Block,
    ) -> Result<Handle<Expression>, LowerError> {
        match &expr.kind {
            ExprKind::Index { base, index } => self.element_pointer(base, index, block),
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
            _ => Err(LowerError::new(
                expr.span,
                "fields are read from struct parameters, locals, slice elements and calls",
            )),
        }
    }

    /// Whether argument `index` of the function being lowered is a `&S` (a pointer).
    fn is_reference_argument(&self, index: u32) -> bool {
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

    /// A pointer to `base.field`.
    fn field_pointer(
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

    /// The struct type of a struct-valued expression.
    fn struct_of(&mut self, expr: &Expr) -> Result<Handle<Type>, LowerError> {
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
    fn param_value_type(
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

    fn param(&mut self, param: &ast::Param, body: &mut Block) -> Result<(), LowerError> {
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
            // `&S` of a device function: a pointer to the caller's struct.
            ParamType::Reference {
                target: target @ ValueType::Struct(_),
                len: None,
                mutable: false,
            } => {
                let base = self.param_value_type(&param.name, target, param.span)?;
                self.program.module.types.insert(Type {
                    inner: TypeInner::Pointer {
                        base,
                        space: AddressSpace::Generic,
                        mutable: false,
                    },
                })
            }
            ParamType::Reference { .. } => {
                return Err(LowerError::new(
                    param.span,
                    "reference parameters of kernels and device functions are `&S` of a `DeviceCopy` struct",
                ))
            }
            ParamType::Value(value) => self.param_value_type(&param.name, value, param.span)?,
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
        let binding = match (&param.ty, param.mutable) {
            (ParamType::Value(_), true) => {
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
                Some(Binding::Argument(index)) if self.is_reference_argument(index) => {
                    // `&S`: its value is the struct it points to.
                    let pointer = self.expr_node(Expression::FunctionArgument(index), span);
                    self.expr_node(Expression::Load { pointer }, span)
                }
                Some(Binding::Argument(index)) => {
                    self.expr_node(Expression::FunctionArgument(index), span)
                }
                Some(Binding::Local(local)) => self.load_local(local, span),
                Some(Binding::Array(..)) => {
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
            ExprKind::Len(slice) => match self.array_binding(slice) {
                Some((_, len)) => self.int(u64::from(len), Scalar::Usize, span),
                None => {
                    let slice = self.expr(slice, block)?;
                    self.expr_node(Expression::SliceLength { slice }, span)
                }
            },
            ExprKind::Match { scrutinee, arms } => {
                let ty = self.type_of(expr)?;
                let ty = self.scalar_type(ty);
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
            ExprKind::Constant { one, .. } => {
                let ty = self.type_of(expr)?;
                let value = u64::from(*one);
                let literal = if ty.is_float() {
                    Literal::Float {
                        value: value as f64,
                        ty,
                    }
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
                let mut rest = Vec::new();
                for arg in args {
                    rest.push(self.expr(arg, block)?);
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
            ExprKind::Reference { .. } => {
                return Err(LowerError::new(
                    span,
                    "references are only supported as the target of an atomic",
                ))
            }
            ExprKind::Call { .. } => match self.call(expr, block, true)? {
                Some(value) => value,
                None => return Err(LowerError::new(span, "this call returns nothing")),
            },
        })
    }

    /// An intrinsic with an effect runs as a statement; its value (if wanted) is read from
    /// a local.
    fn intrinsic(
        &mut self,
        expr: &Expr,
        intrinsic: Intrinsic,
        args: &[Expr],
        block: &mut Block,
        wants_value: bool,
    ) -> Result<Option<Handle<Expression>>, LowerError> {
        let mut arguments = Vec::new();
        for arg in args {
            let handle = match &arg.kind {
                ExprKind::Reference { place, .. } => match &place.kind {
                    ExprKind::Index { base, index } => self.element_pointer(base, index, block)?,
                    _ => return Err(LowerError::new(arg.span, "atomics apply to slice elements")),
                },
                _ => self.expr(arg, block)?,
            };
            arguments.push(handle);
        }
        let result = match (
            wants_value && !intrinsic.is_statement(),
            self.types.expr(expr),
        ) {
            (true, Some(ty)) => {
                let ty = self.scalar_type(ty);
                Some(self.local(intrinsic.name(), ty, expr.span))
            }
            _ => None,
        };
        block.push(
            Statement::Intrinsic {
                intrinsic,
                arguments,
                result,
            },
            expr.span,
        );
        Ok(result.map(|local| self.load_local(local, expr.span)))
    }

    /// Inline PTX runs as a statement; its result (if any) goes to a local.
    fn inline_ptx(
        &mut self,
        expr: &Expr,
        template: &str,
        args: &[Expr],
        block: &mut Block,
        wants_value: bool,
    ) -> Result<Option<Handle<Expression>>, LowerError> {
        let mut arguments = Vec::new();
        for arg in args {
            arguments.push(self.expr(arg, block)?);
        }
        let result = match (wants_value, self.types.expr(expr)) {
            (true, Some(ty)) => {
                let ty = self.scalar_type(ty);
                Some(self.local("ptx.result", ty, expr.span))
            }
            _ => None,
        };
        block.push(
            Statement::InlinePtx {
                template: template.to_owned(),
                arguments,
                result,
            },
            expr.span,
        );
        Ok(result.map(|local| self.load_local(local, expr.span)))
    }

    /// `let name = shared_array::<T>(len);` or `dynamic_shared::<T>()`: a shared variable
    /// of the module, bound to `name`. The length must be a constant of the specialisation.
    fn shared_let(
        &mut self,
        name: &str,
        intrinsic: Intrinsic,
        elem: &ast::ValueType,
        args: &[Expr],
        span: Span,
    ) -> Result<(), LowerError> {
        let elem = self.program.library.scalar(self.spec, elem, span)?;
        let elem = self.scalar_type(elem);
        let len = match (intrinsic, args.first()) {
            (Intrinsic::SharedArray, Some(len)) => {
                let value = self.constant_value(len)?;
                let len = u32::try_from(value)
                    .ok()
                    .filter(|&l| l > 0)
                    .ok_or_else(|| {
                        LowerError::new(
                            len.span,
                            format!("a shared array holds 1 to 2^32-1 elements, not {value}"),
                        )
                    })?;
                Some(len)
            }
            _ => None,
        };
        let shared = self.program.module.shared.append(SharedVariable {
            name: name.to_owned(),
            elem,
            len,
        });
        self.scopes.bind(name, Binding::Shared(shared));
        Ok(())
    }

    /// `let name = unsafe { slice_at::<T>(address, len) };` (or `slice_at_mut`): the slice
    /// of `len` elements at `address`, both evaluated once, here.
    fn slice_at_let(
        &mut self,
        name: &str,
        intrinsic: Intrinsic,
        elem: &ast::ValueType,
        args: &[Expr],
        span: Span,
        block: &mut Block,
    ) -> Result<(), LowerError> {
        let Intrinsic::SliceAt { mutable } = intrinsic else {
            return Err(LowerError::new(span, "not a `slice_at`"));
        };
        let [address, length] = args else {
            return Err(LowerError::new(
                span,
                "`slice_at` takes the address and the number of elements",
            ));
        };
        let elem = self.program.library.scalar(self.spec, elem, span)?;
        let elem = self.scalar_type(elem);
        let address = self.expr(address, block)?;
        let address = self.temporary(
            &format!("{name}.address"),
            address,
            Scalar::Usize,
            span,
            block,
        );
        let length = self.expr(length, block)?;
        let length = self.temporary(&format!("{name}.len"), length, Scalar::Usize, span, block);
        self.scopes.bind(
            name,
            Binding::RawSlice {
                address,
                length,
                elem,
                mutable,
            },
        );
        Ok(())
    }

    /// `match`: the scrutinee is evaluated once, then the arms are tested in order as an
    /// `if`/`else if` chain; the chosen arm's value (if any) goes to `result`.
    fn lower_match(
        &mut self,
        scrutinee: &Expr,
        arms: &[ast::MatchArm],
        result: Option<Handle<LocalVariable>>,
        span: Span,
        out: &mut Block,
    ) -> Result<(), LowerError> {
        let ty = self.type_of(scrutinee)?;
        let value = self.expr(scrutinee, out)?;
        let subject = self.temporary("match.subject", value, ty, span, out);
        let mut chain = Block::new();
        for arm in arms.iter().rev() {
            let mut body = Block::new();
            self.scopes.push();
            let lowered = match result {
                Some(result) => self.block_value_into(&arm.body, &mut body).map(|value| {
                    body.push(
                        Statement::LocalStore {
                            local: result,
                            value,
                        },
                        arm.span,
                    );
                }),
                None => self.block_into(&arm.body, &mut body),
            };
            self.scopes.pop();
            lowered?;
            let mut test_block = Block::new();
            let mut condition = self.arm_test(subject, ty, &arm.patterns, arm.span)?;
            if let Some(guard) = &arm.guard {
                condition = if contains_call(guard) {
                    self.guarded_logical(true, condition, guard, arm.span, &mut test_block)?
                } else {
                    let g = self.expr(guard, &mut test_block)?;
                    self.expr_node(
                        Expression::Logical {
                            and: true,
                            left: condition,
                            right: g,
                        },
                        arm.span,
                    )
                };
            }
            test_block.push(
                Statement::If {
                    condition,
                    accept: body,
                    reject: chain,
                },
                arm.span,
            );
            chain = test_block;
        }
        out.push(Statement::Block(chain), span);
        Ok(())
    }

    /// Whether `subject` matches any of `patterns`.
    fn arm_test(
        &mut self,
        subject: Handle<LocalVariable>,
        ty: Scalar,
        patterns: &[ast::Pattern],
        span: Span,
    ) -> Result<Handle<Expression>, LowerError> {
        let literal =
            |this: &mut Self, l: &ast::Literal| -> Result<Handle<Expression>, LowerError> {
                let value = match *l {
                    ast::Literal::Bool(b) => Literal::Bool(b),
                    ast::Literal::Int { value, .. } => Literal::Int { bits: value, ty },
                    ast::Literal::Float { .. } => {
                        return Err(LowerError::new(span, "float patterns are not supported"))
                    }
                };
                Ok(this.literal(value, span))
            };
        let mut test: Option<Handle<Expression>> = None;
        for pattern in patterns {
            let this_test = match pattern {
                ast::Pattern::Wildcard => self.literal(Literal::Bool(true), span),
                ast::Pattern::Variant {
                    ty: enum_ty,
                    variant,
                } => {
                    let library = self.program.library;
                    let value = library.variant(enum_ty, variant, span)?;
                    let v = self.load_local(subject, span);
                    let c = self.literal(value, span);
                    self.binary(BinaryOp::Eq, v, c, span)
                }
                ast::Pattern::Literal(l) => {
                    let v = self.load_local(subject, span);
                    let c = literal(self, l)?;
                    self.binary(BinaryOp::Eq, v, c, span)
                }
                ast::Pattern::Range {
                    start,
                    end,
                    inclusive,
                } => {
                    let v = self.load_local(subject, span);
                    let lo = literal(self, start)?;
                    let above = self.binary(BinaryOp::Ge, v, lo, span);
                    let v = self.load_local(subject, span);
                    let hi = literal(self, end)?;
                    let op = if *inclusive {
                        BinaryOp::Le
                    } else {
                        BinaryOp::Lt
                    };
                    let below = self.binary(op, v, hi, span);
                    self.expr_node(
                        Expression::Logical {
                            and: true,
                            left: above,
                            right: below,
                        },
                        span,
                    )
                }
            };
            test = Some(match test {
                None => this_test,
                Some(previous) => self.expr_node(
                    Expression::Logical {
                        and: false,
                        left: previous,
                        right: this_test,
                    },
                    span,
                ),
            });
        }
        test.ok_or_else(|| LowerError::new(span, "a `match` arm needs a pattern"))
    }

    /// `assert!(cond, ..)`: if `cond` is false (and, for `debug_assert!`, debug assertions
    /// are on), print the user's message and trap.
    #[allow(clippy::too_many_arguments)]
    fn assertion(
        &mut self,
        cond: &Expr,
        text: &str,
        message: &Option<(Vec<ast::FormatPiece>, Vec<Expr>)>,
        debug_only: bool,
        span: Span,
        out: &mut Block,
    ) -> Result<(), LowerError> {
        let holds = self.expr(cond, out)?;
        let mut failed = self.expr_node(
            Expression::Unary {
                op: ast::UnaryOp::Not,
                operand: holds,
            },
            span,
        );
        if debug_only {
            let enabled =
                self.expr_node(Expression::CompileFlag(CompileFlag::DebugAssertions), span);
            failed = self.expr_node(
                Expression::Logical {
                    and: true,
                    left: enabled,
                    right: failed,
                },
                span,
            );
        }
        let mut report = Block::new();
        if let Some((pieces, args)) = message {
            let mut arguments = Vec::new();
            for arg in args {
                arguments.push(self.expr(arg, &mut report)?);
            }
            let mut pieces = pieces.clone();
            pieces.push(ast::FormatPiece::Text("\n".into()));
            report.push(Statement::Print { pieces, arguments }, span);
        }
        report.push(
            Statement::Trap {
                message: format!("assertion failed: {text}"),
            },
            span,
        );
        out.push(
            Statement::If {
                condition: failed,
                accept: report,
                reject: Block::new(),
            },
            span,
        );
        Ok(())
    }

    /// The pointer to the first element of vector `index` of `n` elements of a slice.
    fn vector_pointer(
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

    /// `let mut acc = [value; len];`: a local array, every element set to `value`.
    fn array_let(
        &mut self,
        stmt: &Stmt,
        name: &str,
        value: &Expr,
        len: &Expr,
        span: Span,
        out: &mut Block,
    ) -> Result<(), LowerError> {
        const MAX_LEN: u64 = 4096;
        let elem = self
            .types
            .binding(stmt)
            .ok_or_else(|| LowerError::new(span, "internal: array without an element type"))?;
        let count = self.constant_value(len)?;
        if count == 0 || count > MAX_LEN {
            return Err(LowerError::new(
                len.span,
                format!("a local array holds 1 to {MAX_LEN} elements (registers or local memory), not {count}"),
            ));
        }
        let count = count as u32;
        let elem_ty = self.scalar_type(elem);
        let array_ty = self.program.module.types.insert(Type {
            inner: TypeInner::Array {
                base: elem_ty,
                len: count,
            },
        });
        let value = self.expr(value, out)?;
        let initial = self.temporary(&format!("{name}.init"), value, elem, span, out);
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

    /// The value of an expression made of literals and constants of the specialisation.
    fn constant_value(&self, expr: &Expr) -> Result<u64, LowerError> {
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

    /// A call of a device function: its arguments are evaluated, the call runs as a
    /// statement, and its value (if wanted) is read from a local.
    fn call(
        &mut self,
        expr: &Expr,
        block: &mut Block,
        wants_value: bool,
    ) -> Result<Option<Handle<Expression>>, LowerError> {
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
            let argument = match params.and_then(|p| p.get(index)) {
                Some(
                    param @ ast::Param {
                        ty: ParamType::Reference { .. },
                        ..
                    },
                ) => self.extern_argument(arg, param, block)?,
                _ => {
                    self.reject_copy(arg)?;
                    self.expr(arg, block)?
                }
            };
            arguments.push(argument);
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
    fn call_extern(
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
    fn extern_argument(
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
                    return Err(LowerError::new(
                        place.span,
                        "pass a named struct or array: `&comm`, `&mut session`",
                    ));
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

    /// The module's declaration of an `#[extern_device]` function, added on first use.
    fn extern_function(
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
                        [only] if is_handle(layout) => self.scalar_type(only.ty),
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
                ParamType::Slice { .. } => {
                    return Err(LowerError::new(
                        param.span,
                        "extern device functions take scalars, handles and references, not slices",
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

    /// `left && right` / `left || right` whose right side calls a function: the call must
    /// only run when `left` does not decide the result, so the right side is lowered in a
    /// branch that writes a temporary.
    fn guarded_logical(
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
    fn compose(
        &mut self,
        ty: Handle<Type>,
        fields: &[(u32, &Expr)],
        span: Span,
        block: &mut Block,
    ) -> Result<Handle<Expression>, LowerError> {
        let local = self.local("struct.value", ty, span);
        for &(field, value) in fields {
            let value = self.expr(value, block)?;
            let base = self.expr_node(Expression::LocalPointer(local), span);
            let pointer = self.expr_node(Expression::FieldPointer { base, field }, span);
            block.push(Statement::Store { pointer, value }, span);
        }
        Ok(self.load_local(local, span))
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

    /// The local array a name refers to, if it does.
    fn array_binding(&self, expr: &Expr) -> Option<(Handle<LocalVariable>, u32)> {
        match &expr.kind {
            ExprKind::Var(name) => match self.scopes.lookup(name) {
                Some(Binding::Array(local, len)) => Some((local, len)),
                _ => None,
            },
            _ => None,
        }
    }

    fn element_pointer(
        &mut self,
        base: &Expr,
        index: &Expr,
        block: &mut Block,
    ) -> Result<Handle<Expression>, LowerError> {
        if let Some((local, _)) = self.array_binding(base) {
            let index = self.expr(index, block)?;
            return Ok(self.expr_node(Expression::ArrayElement { local, index }, base.span));
        }
        let base = self.expr(base, block)?;
        let index = self.expr(index, block)?;
        Ok(self.expr_node(Expression::ElementPointer { base, index }, Span::default()))
    }

    fn block_into(&mut self, block: &ast::Block, out: &mut Block) -> Result<(), LowerError> {
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
    fn function_tail(
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
    fn return_value(
        &mut self,
        value: Option<&Expr>,
        span: Span,
        out: &mut Block,
    ) -> Result<(), LowerError> {
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

    fn lowered_block(&mut self, block: &ast::Block) -> Result<Block, LowerError> {
        let mut out = Block::new();
        self.block_into(block, &mut out)?;
        Ok(out)
    }

    fn stmt(&mut self, stmt: &Stmt, out: &mut Block) -> Result<(), LowerError> {
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
            Stmt::LetTuple { names, init, span } if matches!(init.kind, ExprKind::Call { .. }) => {
                // A device function's tuple: each element into its own local.
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
                    let value = self.expr_node(Expression::Load { pointer }, *span);
                    let local = self.local(name, member.ty, *span);
                    out.push(Statement::LocalStore { local, value }, *span);
                    bound.push((name, local));
                }
                // Bound after every element is read: `let (a, b) = f(a, b)` shadows.
                for (name, local) in bound {
                    self.scopes.bind(name, Binding::Local(local));
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

    fn assign(
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

    /// Before a `break`/`continue` to `target`: the end of the droppable locals declared
    /// inside that loop.
    fn drops_for_loop(
        &mut self,
        target: LoopId,
        out: &mut Block,
        span: Span,
    ) -> Result<(), LowerError> {
        match self.loops.iter().position(|(_, id)| *id == target) {
            Some(index) => self.drops_for_jump(index, out, span),
            None => Ok(()),
        }
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

/// Whether evaluating `expr` calls a device function.
fn contains_call(expr: &Expr) -> bool {
    match &expr.kind {
        ExprKind::Call { .. } => true,
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
        ExprKind::Unary { operand, .. } => contains_call(operand),
        ExprKind::Binary { left, right, .. } => contains_call(left) || contains_call(right),
        ExprKind::Cast { value, .. } | ExprKind::Len(value) => contains_call(value),
        ExprKind::Field { base, .. } => contains_call(base),
        ExprKind::Index { base, index } => contains_call(base) || contains_call(index),
        ExprKind::Math { receiver, args, .. } => {
            contains_call(receiver) || args.iter().any(contains_call)
        }
        // Blocks and `if` values are lowered as statements in their own blocks.
        ExprKind::If { .. } | ExprKind::Block(_) | ExprKind::Match { .. } => true,
    }
}

/// Whether a struct passed by value to an external function crosses the C ABI as its one
/// scalar field (a handle such as NCCL's window), rather than as the struct.
fn is_handle(layout: &crate::layout::StructLayout) -> bool {
    layout.enum_repr.is_none()
        && matches!(layout.fields, [only] if only.offset == 0 && only.ty.size_bytes() as usize == layout.size)
}
