//! Type resolution of expressions and the rules of statements and control flow.

use super::error::{ValidationError, ValidationErrorKind as Kind};
use super::{ExprType, FunctionInfo};
use crate::ast::{BinaryOp, UnaryOp};
use crate::intrinsics::{
    AddressSpace as IntrinsicSpace, AtomicAccess, AtomicOp, Intrinsic, VoteOp,
};

/// Whether the atomic `op` works on floats (`f32`, `f64`) as well as integers.
fn atomic_takes_floats(op: AtomicOp) -> bool {
    matches!(
        op,
        AtomicOp::Add | AtomicOp::Sub | AtomicOp::Exchange | AtomicOp::CompareExchange
    )
}
use crate::ir::{
    AddressSpace, Block, Expression, Function, Handle, LoopId, Module, Statement, TypeInner,
};
use crate::{Scalar, Span};

pub(super) fn validate_function(
    module: &Module,
    function: &Function,
) -> Result<FunctionInfo, ValidationError> {
    let mut checker = Checker {
        module,
        function,
        types: Vec::with_capacity(function.expressions.len()),
        loops: Vec::new(),
        seen_loops: Vec::new(),
    };
    for (handle, expression) in function.expressions.iter() {
        let ty = checker
            .resolve(expression)
            .map_err(|kind| checker.error(function.expression_span(handle), kind))?;
        checker.types.push(ty);
    }
    checker.block(&function.body, false)?;
    Ok(FunctionInfo {
        expression_types: checker.types,
    })
}

/// A tensor map lives in a kernel's parameter memory (grid-constant); a device function
/// takes its address (`u64`) instead.
pub(super) fn check_device_signature(
    module: &Module,
    function: &Function,
) -> Result<(), ValidationError> {
    match function
        .arguments
        .iter()
        .find(|a| module.types[a.ty].inner == TypeInner::TensorMap)
    {
        Some(argument) => Err(ValidationError {
            function: function.name.clone(),
            span: argument.span,
            kind: Kind::Unsupported(
                "a tensor map parameter of a device function: only kernels take tensor maps; pass `tensor_map_address(&map)` instead".into(),
            ),
        }),
        None => Ok(()),
    }
}

pub(super) fn check_kernel_signature(
    module: &Module,
    function: &Function,
) -> Result<(), ValidationError> {
    let error = |span, kind| ValidationError {
        function: function.name.clone(),
        span,
        kind,
    };
    if function.result.is_some() {
        return Err(error(function.span, Kind::KernelReturnsValue));
    }
    for argument in &function.arguments {
        let ok = match &module.types[argument.ty].inner {
            TypeInner::Scalar(_) | TypeInner::Pointer { .. } | TypeInner::Struct { .. } => true,
            TypeInner::Slice { base, .. } => {
                matches!(
                    module.types[*base].inner,
                    TypeInner::Scalar(_) | TypeInner::Struct { .. }
                )
            }
            TypeInner::TensorMap => true,
            TypeInner::Array { .. } => false,
        };
        if !ok {
            return Err(error(
                argument.span,
                Kind::BadKernelParameter {
                    name: argument.name.clone(),
                    ty: super::describe_type(module, argument.ty),
                },
            ));
        }
    }
    Ok(())
}

struct Checker<'a> {
    module: &'a Module,
    function: &'a Function,
    types: Vec<ExprType>,
    /// Enclosing loops; `true` while checking that loop's `continuing` block.
    loops: Vec<(LoopId, bool)>,
    seen_loops: Vec<LoopId>,
}

impl Checker<'_> {
    fn error(&self, span: Span, kind: Kind) -> ValidationError {
        ValidationError {
            function: self.function.name.clone(),
            span,
            kind,
        }
    }

    fn ty(&self, handle: Handle<Expression>) -> ExprType {
        self.types[handle.index()]
    }

    fn describe(&self, ty: ExprType) -> String {
        ty.describe(self.module)
    }

    fn scalar(&self, handle: Handle<Expression>) -> Result<Scalar, Kind> {
        self.ty(handle).scalar().ok_or_else(|| Kind::TypeMismatch {
            expected: "a scalar".into(),
            found: self.describe(self.ty(handle)),
        })
    }

    fn expect(&self, handle: Handle<Expression>, expected: Scalar) -> Result<(), Kind> {
        let found = self.ty(handle);
        if found == ExprType::Scalar(expected) {
            Ok(())
        } else {
            Err(Kind::TypeMismatch {
                expected: format!("`{expected}`"),
                found: self.describe(found),
            })
        }
    }

    fn resolve(&self, expression: &Expression) -> Result<ExprType, Kind> {
        Ok(match *expression {
            Expression::Literal(literal) => {
                let ty = literal.scalar();
                let consistent = match literal {
                    crate::ir::Literal::Bool(_) => true,
                    crate::ir::Literal::Int { .. } => ty.is_integer(),
                    crate::ir::Literal::Float { .. } => ty.is_float(),
                };
                if !consistent {
                    return Err(Kind::TypeMismatch {
                        expected: "a literal of matching kind".into(),
                        found: format!("`{ty}`"),
                    });
                }
                ExprType::Scalar(ty)
            }
            Expression::FunctionArgument(index) => {
                let ty = self.function.arguments[index as usize].ty;
                if self.module.types[ty].inner == TypeInner::TensorMap {
                    return Err(Kind::Unsupported(
                        "a tensor map as a value: kernels read it only through `tensor_map_address(&map)`".into(),
                    ));
                }
                ExprType::of(self.module, ty)
            }
            // The parameter stays where the launch put it, so it must be a kernel's own.
            Expression::TensorMapAddress { argument } => {
                let ty = self.function.arguments[argument as usize].ty;
                if self.module.types[ty].inner != TypeInner::TensorMap {
                    return Err(Kind::TypeMismatch {
                        expected: "a tensor-map parameter for `tensor_map_address`".into(),
                        found: self.describe(ExprType::of(self.module, ty)),
                    });
                }
                ExprType::Scalar(Scalar::U64)
            }
            Expression::LocalLoad(local) => {
                ExprType::of(self.module, self.function.locals[local].ty)
            }
            Expression::Load { pointer } => match self.ty(pointer) {
                ExprType::Pointer { base, .. } => ExprType::of(self.module, base),
                other => {
                    return Err(Kind::TypeMismatch {
                        expected: "a pointer".into(),
                        found: self.describe(other),
                    })
                }
            },
            Expression::ElementPointer { base, index } => {
                let index_ty = self.scalar(index)?;
                if !index_ty.is_integer() {
                    return Err(Kind::TypeMismatch {
                        expected: "an integer index".into(),
                        found: format!("`{index_ty}`"),
                    });
                }
                // An element of a shared array is in shared memory (what `shared_address`
                // requires); every other slice is device memory.
                let slice_space = match self.function.expressions[self.slice_root(base)] {
                    Expression::SharedSlice(_) => AddressSpace::Shared,
                    _ => AddressSpace::Global,
                };
                match self.ty(base) {
                    ExprType::Slice { base, mutable } => ExprType::Pointer {
                        base,
                        space: slice_space,
                        mutable,
                    },
                    ExprType::Pointer {
                        base,
                        space,
                        mutable,
                    } => ExprType::Pointer {
                        base,
                        space,
                        mutable,
                    },
                    other => {
                        return Err(Kind::TypeMismatch {
                            expected: "a slice or pointer".into(),
                            found: self.describe(other),
                        })
                    }
                }
            }
            Expression::SliceLength { slice } => match self.ty(slice) {
                ExprType::Slice { .. } => ExprType::Scalar(Scalar::Usize),
                other => {
                    return Err(Kind::TypeMismatch {
                        expected: "a slice".into(),
                        found: self.describe(other),
                    })
                }
            },
            Expression::Unary { op, operand } => {
                let ty = self.scalar(operand)?;
                let ok = match op {
                    UnaryOp::Neg => ty.is_signed() || ty.is_float(),
                    UnaryOp::Not => ty == Scalar::Bool || ty.is_integer(),
                };
                if !ok {
                    let symbol = if op == UnaryOp::Neg { "-" } else { "!" };
                    return Err(Kind::BadOperand {
                        op: symbol,
                        ty: format!("`{ty}`"),
                    });
                }
                ExprType::Scalar(ty)
            }
            Expression::Binary { op, left, right } => {
                let l = self.scalar(left)?;
                self.expect(right, l)?;
                let ok = match op {
                    BinaryOp::Add
                    | BinaryOp::Sub
                    | BinaryOp::Mul
                    | BinaryOp::Div
                    | BinaryOp::Rem => l.is_integer() || l.is_float(),
                    BinaryOp::BitAnd | BinaryOp::BitOr | BinaryOp::BitXor => {
                        l.is_integer() || l == Scalar::Bool
                    }
                    BinaryOp::Shl | BinaryOp::Shr => l.is_integer(),
                    BinaryOp::Eq
                    | BinaryOp::Ne
                    | BinaryOp::Lt
                    | BinaryOp::Le
                    | BinaryOp::Gt
                    | BinaryOp::Ge => true,
                    BinaryOp::And | BinaryOp::Or => false,
                };
                if !ok {
                    return Err(Kind::BadOperand {
                        op: op.symbol(),
                        ty: format!("`{l}`"),
                    });
                }
                ExprType::Scalar(if op.is_comparison() { Scalar::Bool } else { l })
            }
            Expression::Logical { left, right, .. } => {
                self.expect(left, Scalar::Bool)?;
                self.expect(right, Scalar::Bool)?;
                ExprType::Scalar(Scalar::Bool)
            }
            Expression::Cast { value, to } => {
                let from = self.scalar(value)?;
                // Rust's `as`: numeric to numeric, and bool to integer.
                let ok = match (from == Scalar::Bool, to == Scalar::Bool) {
                    (_, true) => from == Scalar::Bool,
                    (true, false) => to.is_integer(),
                    (false, false) => true,
                };
                if !ok {
                    return Err(Kind::BadCast {
                        from: format!("`{from}`"),
                        to: format!("`{to}`"),
                    });
                }
                ExprType::Scalar(to)
            }
            Expression::Builtin(_) => ExprType::Scalar(Scalar::U32),
            Expression::CompileFlag(_) => ExprType::Scalar(Scalar::Bool),
            Expression::LocalPointer(local) => ExprType::Pointer {
                base: self.function.locals[local].ty,
                space: AddressSpace::Local,
                mutable: true,
            },
            Expression::FieldPointer { base, field } => {
                let (struct_ty, space, mutable) = match self.ty(base) {
                    ExprType::Pointer {
                        base,
                        space,
                        mutable,
                    } => (base, space, mutable),
                    // A struct value (a parameter): its fields can be read, not written.
                    ExprType::Value(ty) => (ty, AddressSpace::Generic, false),
                    other => {
                        return Err(Kind::TypeMismatch {
                            expected: "a struct".into(),
                            found: self.describe(other),
                        })
                    }
                };
                match &self.module.types[struct_ty].inner {
                    TypeInner::Struct { members, .. } => match members.get(field as usize) {
                        Some(member) => ExprType::Pointer {
                            base: member.ty,
                            space,
                            mutable,
                        },
                        None => {
                            return Err(Kind::BadHandle {
                                what: "struct field",
                                handle: field as usize,
                            })
                        }
                    },
                    _ => {
                        return Err(Kind::TypeMismatch {
                            expected: "a struct".into(),
                            found: super::describe_type(self.module, struct_ty),
                        })
                    }
                }
            }
            Expression::MemberElement { array, index } => {
                let index_ty = self.scalar(index)?;
                if !index_ty.is_integer() {
                    return Err(Kind::TypeMismatch {
                        expected: "an integer index".into(),
                        found: format!("`{index_ty}`"),
                    });
                }
                match self.ty(array) {
                    ExprType::Pointer {
                        base,
                        space,
                        mutable,
                    } => match self.module.types[base].inner {
                        TypeInner::Array { base, .. } => ExprType::Pointer {
                            base,
                            space,
                            mutable,
                        },
                        _ => {
                            return Err(Kind::TypeMismatch {
                                expected: "a pointer to an array".into(),
                                found: super::describe_type(self.module, base),
                            })
                        }
                    },
                    other => {
                        return Err(Kind::TypeMismatch {
                            expected: "a pointer to an array".into(),
                            found: self.describe(other),
                        })
                    }
                }
            }
            Expression::ArrayElement { local, index } => {
                let index_ty = self.scalar(index)?;
                if !index_ty.is_integer() {
                    return Err(Kind::TypeMismatch {
                        expected: "an integer index".into(),
                        found: format!("`{index_ty}`"),
                    });
                }
                match self.module.types[self.function.locals[local].ty].inner {
                    TypeInner::Array { base, .. } => ExprType::Pointer {
                        base,
                        space: AddressSpace::Local,
                        mutable: true,
                    },
                    _ => {
                        return Err(Kind::TypeMismatch {
                            expected: "a local array".into(),
                            found: super::describe_type(
                                self.module,
                                self.function.locals[local].ty,
                            ),
                        })
                    }
                }
            }
            Expression::ValuePointer { value } => match self.ty(value) {
                ExprType::Value(base) => ExprType::Pointer {
                    base,
                    space: AddressSpace::Generic,
                    mutable: false,
                },
                other => {
                    return Err(Kind::TypeMismatch {
                        expected: "a struct value".into(),
                        found: self.describe(other),
                    })
                }
            },
            Expression::RawSlice {
                address,
                length,
                elem,
                mutable,
            } => {
                for part in [address, length] {
                    let ty = self.scalar(part)?;
                    if ty != Scalar::Usize {
                        return Err(Kind::TypeMismatch {
                            expected: "usize".into(),
                            found: ty.rust_name().into(),
                        });
                    }
                }
                ExprType::Slice {
                    base: elem,
                    mutable,
                }
            }
            Expression::SubSlice { base, start, end } => {
                for part in std::iter::once(start).chain(end) {
                    let ty = self.scalar(part)?;
                    if ty != Scalar::Usize {
                        return Err(Kind::TypeMismatch {
                            expected: "usize".into(),
                            found: ty.rust_name().into(),
                        });
                    }
                }
                match self.ty(base) {
                    slice @ ExprType::Slice { .. } => slice,
                    other => {
                        return Err(Kind::TypeMismatch {
                            expected: "a slice".into(),
                            found: self.describe(other),
                        })
                    }
                }
            }
            Expression::SharedSlice(shared) => ExprType::Slice {
                base: self.module.shared[shared].elem,
                mutable: true,
            },
            Expression::Math {
                function,
                argument,
                arg1,
                arg2,
            } => {
                let ty = self.scalar(argument)?;
                if !function.applies_to(ty) {
                    return Err(Kind::BadOperand {
                        op: function.name(),
                        ty: format!("`{ty}`"),
                    });
                }
                let extra: Vec<_> = [arg1, arg2].into_iter().flatten().collect();
                if extra.len() != function.extra_arguments() {
                    return Err(Kind::TypeMismatch {
                        expected: format!(
                            "{} argument(s) for `{}`",
                            function.extra_arguments(),
                            function.name()
                        ),
                        found: extra.len().to_string(),
                    });
                }
                for arg in extra {
                    self.expect(arg, function.argument(ty))?;
                }
                ExprType::Scalar(function.result(ty))
            }
        })
    }

    fn block(&mut self, block: &Block, in_continuing: bool) -> Result<(), ValidationError> {
        for (statement, span) in block.iter() {
            self.statement(statement, in_continuing)
                .map_err(|kind| self.error(span, kind))?;
        }
        Ok(())
    }

    fn statement(&mut self, statement: &Statement, in_continuing: bool) -> Result<(), Kind> {
        let nested = |e: ValidationError| e.kind;
        match statement {
            Statement::LocalStore { local, value } => {
                let expected = ExprType::of(self.module, self.function.locals[*local].ty);
                self.same(expected, self.ty(*value))?;
            }
            Statement::Store { pointer, value } => match self.ty(*pointer) {
                ExprType::Pointer { base, mutable, .. } => {
                    if !mutable {
                        return Err(Kind::StoreToImmutable);
                    }
                    self.same(ExprType::of(self.module, base), self.ty(*value))?;
                }
                other => {
                    return Err(Kind::TypeMismatch {
                        expected: "a pointer".into(),
                        found: self.describe(other),
                    })
                }
            },
            Statement::If {
                condition,
                accept,
                reject,
            } => {
                self.expect(*condition, Scalar::Bool)?;
                self.block(accept, in_continuing).map_err(nested)?;
                self.block(reject, in_continuing).map_err(nested)?;
            }
            Statement::Loop {
                id,
                body,
                continuing,
            } => {
                if self.seen_loops.contains(id) {
                    return Err(Kind::DuplicateLoop(id.0));
                }
                self.seen_loops.push(*id);
                self.loops.push((*id, false));
                let body_result = self.block(body, false);
                if let Some(top) = self.loops.last_mut() {
                    top.1 = true;
                }
                let continuing_result = body_result.and_then(|()| self.block(continuing, true));
                self.loops.pop();
                continuing_result.map_err(nested)?;
            }
            Statement::Break { target } => self.loop_target(*target, "break")?,
            Statement::Continue { target } => {
                self.loop_target(*target, "continue")?;
                if in_continuing && self.loops.last().map(|l| l.0) == Some(*target) {
                    return Err(Kind::Unsupported(
                        "`continue` inside the continuing block of the same loop".into(),
                    ));
                }
            }
            Statement::Return { value } => match (value, self.function.result) {
                (None, None) => {}
                (Some(value), Some(result)) => {
                    self.same(ExprType::of(self.module, result), self.ty(*value))?
                }
                (None, Some(_)) => {
                    return Err(Kind::TypeMismatch {
                        expected: "a return value".into(),
                        found: "none".into(),
                    })
                }
                (Some(_), None) => return Err(Kind::KernelReturnsValue),
            },
            Statement::Block(inner) => self.block(inner, in_continuing).map_err(nested)?,
            Statement::Call {
                function,
                arguments,
                result,
            } => self.call(*function, arguments, *result)?,
            Statement::CallExtern {
                function,
                arguments,
                result,
            } => self.call_extern(*function, arguments, *result)?,
            Statement::Intrinsic {
                intrinsic,
                arguments,
                result,
            } => self.intrinsic(*intrinsic, arguments, *result)?,
            Statement::VectorLoad { pointer, results } => {
                let elem = self.vector_element(*pointer, results.len())?;
                for local in results {
                    self.same(
                        ExprType::of(self.module, self.function.locals[*local].ty),
                        ExprType::Scalar(elem),
                    )?;
                }
            }
            Statement::Print { pieces, arguments } => {
                for argument in arguments {
                    self.scalar(*argument)?;
                }
                for piece in pieces {
                    if let crate::ast::FormatPiece::Arg { index, .. } = piece {
                        if *index >= arguments.len() {
                            return Err(Kind::TypeMismatch {
                                expected: format!("an argument {index} for the format"),
                                found: format!("{} arguments", arguments.len()),
                            });
                        }
                    }
                }
            }
            Statement::Trap { .. } => {}
            Statement::InlinePtx {
                arguments, result, ..
            } => {
                for argument in arguments {
                    match argument {
                        crate::ir::PtxOperand::Value(value) => {
                            self.scalar(*value)?;
                        }
                        crate::ir::PtxOperand::Array { local, .. } => {
                            let ty = &self.module.types[self.function.locals[*local].ty].inner;
                            let of_scalars = matches!(ty, TypeInner::Array { base, .. }
                                if self.module.types[*base].inner.scalar().is_some());
                            if !of_scalars {
                                return Err(Kind::Unsupported(
                                    "a `ptx!` register array that is not an array of scalars"
                                        .into(),
                                ));
                            }
                        }
                    }
                }
                if let Some(local) = result {
                    // A scalar, or a struct of scalars (one output operand per field).
                    let ty = &self.module.types[self.function.locals[*local].ty].inner;
                    let outputs_are_scalars = match ty {
                        TypeInner::Struct { members, .. } => members
                            .iter()
                            .all(|member| self.module.types[member.ty].inner.scalar().is_some()),
                        other => other.scalar().is_some(),
                    };
                    if !outputs_are_scalars {
                        return Err(Kind::Unsupported(
                            "a `ptx!` result that is not a scalar or a tuple of scalars".into(),
                        ));
                    }
                }
            }
            Statement::VectorStore { pointer, values } => {
                let elem = self.vector_element(*pointer, values.len())?;
                for value in values {
                    self.expect(*value, elem)?;
                }
            }
        }
        Ok(())
    }

    fn call(
        &self,
        callee: Handle<Function>,
        arguments: &[Handle<Expression>],
        result: Option<Handle<crate::ir::LocalVariable>>,
    ) -> Result<(), Kind> {
        let callee = &self.module.functions[callee];
        if arguments.len() != callee.arguments.len() {
            return Err(Kind::TypeMismatch {
                expected: format!("{} arguments for `{}`", callee.arguments.len(), callee.name),
                found: arguments.len().to_string(),
            });
        }
        for (argument, parameter) in arguments.iter().zip(&callee.arguments) {
            let expected = ExprType::of(self.module, parameter.ty);
            let found = self.ty(*argument);
            let compatible = match (expected, found) {
                // A `&mut [T]` may be passed where a `&[T]` is expected.
                (
                    ExprType::Slice { base, mutable },
                    ExprType::Slice {
                        base: given,
                        mutable: given_mut,
                    },
                ) => base == given && (given_mut || !mutable),
                // `&S`: a pointer to the same struct, anywhere.
                (ExprType::Pointer { base, .. }, ExprType::Pointer { base: given, .. }) => {
                    base == given
                }
                _ => expected == found,
            };
            if !compatible {
                return Err(Kind::TypeMismatch {
                    expected: self.describe(expected),
                    found: self.describe(found),
                });
            }
        }
        match (result, callee.result) {
            (None, _) => Ok(()),
            (Some(local), Some(ty)) => self.same(
                ExprType::of(self.module, self.function.locals[local].ty),
                ExprType::of(self.module, ty),
            ),
            (Some(_), None) => Err(Kind::TypeMismatch {
                expected: format!("a value from `{}`", callee.name),
                found: "nothing".into(),
            }),
        }
    }

    /// An `#[extern_device]` call: scalar arguments of the declared types, in number.
    fn call_extern(
        &self,
        callee: Handle<crate::ir::ExternFunction>,
        arguments: &[Handle<Expression>],
        result: Option<Handle<crate::ir::LocalVariable>>,
    ) -> Result<(), Kind> {
        let callee = &self.module.externs[callee];
        if arguments.len() != callee.arguments.len() {
            return Err(Kind::TypeMismatch {
                expected: format!("{} arguments for `{}`", callee.arguments.len(), callee.name),
                found: arguments.len().to_string(),
            });
        }
        for (argument, parameter) in arguments.iter().zip(&callee.arguments) {
            match (ExprType::of(self.module, *parameter), self.ty(*argument)) {
                (expected @ ExprType::Scalar(_), found) => self.same(expected, found)?,
                // A struct by value.
                (expected @ ExprType::Value(_), found) => self.same(expected, found)?,
                // `&S`/`&mut [T; N]`: a pointer to the same type, anywhere; writable when
                // the function writes through it.
                (
                    ExprType::Pointer {
                        base,
                        mutable: wants_mut,
                        ..
                    },
                    ExprType::Pointer {
                        base: given,
                        mutable,
                        ..
                    },
                ) if base == given => {
                    if wants_mut && !mutable {
                        return Err(Kind::StoreToImmutable);
                    }
                }
                (expected, found) => {
                    return Err(Kind::TypeMismatch {
                        expected: format!("{} for `{}`", self.describe(expected), callee.name),
                        found: self.describe(found),
                    })
                }
            }
        }
        match (result, callee.result) {
            (None, _) => Ok(()),
            (Some(local), Some(ty)) => self.same(
                ExprType::of(self.module, self.function.locals[local].ty),
                ExprType::of(self.module, ty),
            ),
            (Some(_), None) => Err(Kind::TypeMismatch {
                expected: format!("a value from `{}`", callee.name),
                found: "nothing".into(),
            }),
        }
    }

    /// The element type of a vector access of `count` elements through `pointer`: scalars
    /// making 8 or 16 bytes in all.
    fn vector_element(&self, pointer: Handle<Expression>, count: usize) -> Result<Scalar, Kind> {
        let ExprType::Pointer { base, .. } = self.ty(pointer) else {
            return Err(Kind::TypeMismatch {
                expected: "a pointer".into(),
                found: self.describe(self.ty(pointer)),
            });
        };
        let ExprType::Scalar(elem) = ExprType::of(self.module, base) else {
            return Err(Kind::Unsupported("vector access of non-scalars".into()));
        };
        let bytes = elem.size_bytes() as usize * count;
        if !(count == 2 || count == 4 || count == 8)
            || !(bytes == 8 || bytes == 16)
            || elem == Scalar::Bool
        {
            return Err(Kind::Unsupported(format!(
                "a vector access of {count} `{elem}` ({bytes} bytes); 8 or 16 bytes are supported"
            )));
        }
        Ok(elem)
    }

    /// The argument and result types of a device intrinsic.
    fn intrinsic(
        &self,
        intrinsic: Intrinsic,
        arguments: &[Handle<Expression>],
        result: Option<Handle<crate::ir::LocalVariable>>,
    ) -> Result<(), Kind> {
        let name = intrinsic.name();
        let arity = |n: usize| {
            if arguments.len() == n {
                Ok(())
            } else {
                Err(Kind::TypeMismatch {
                    expected: format!("{n} argument(s) for `{name}`"),
                    found: arguments.len().to_string(),
                })
            }
        };
        let produced = match intrinsic {
            Intrinsic::SyncThreads | Intrinsic::GridSync | Intrinsic::Fence(_) => {
                arity(0)?;
                None
            }
            Intrinsic::SharedArray | Intrinsic::DynamicShared | Intrinsic::SliceAt { .. } => {
                return Err(Kind::Unsupported(format!("`{name}` as a statement")))
            }
            Intrinsic::Atomic(op, _) => {
                arity(if op == AtomicOp::CompareExchange {
                    3
                } else {
                    2
                })?;
                let ty = self.atomic_element(name, arguments[0], true, atomic_takes_floats(op))?;
                for value in &arguments[1..] {
                    self.expect(*value, ty)?;
                }
                Some(ty)
            }
            Intrinsic::OrderedAtomic { access, ordering } => {
                let Some(ordering) = ordering else {
                    return Err(Kind::Unsupported(format!(
                        "`{name}` without its ordering (lowering moves it into the intrinsic)"
                    )));
                };
                if !access.allows(ordering.order) {
                    return Err(Kind::Unsupported(format!(
                        "`{name}` with `Ordering::{}`",
                        ordering.order.variant()
                    )));
                }
                let (count, writes, float_ok) = match access {
                    AtomicAccess::Load => (1, false, true),
                    AtomicAccess::Store => (2, true, true),
                    AtomicAccess::ReadModifyWrite(op) => (
                        if op == AtomicOp::CompareExchange {
                            3
                        } else {
                            2
                        },
                        true,
                        atomic_takes_floats(op),
                    ),
                };
                arity(count)?;
                let ty = self.atomic_element(name, arguments[0], writes, float_ok)?;
                for value in &arguments[1..] {
                    self.expect(*value, ty)?;
                }
                (access != AtomicAccess::Store).then_some(ty)
            }
            Intrinsic::Volatile { store } => {
                arity(if store { 2 } else { 1 })?;
                let ExprType::Pointer { base, mutable, .. } = self.ty(arguments[0]) else {
                    return Err(Kind::TypeMismatch {
                        expected: format!("a pointer for `{name}`"),
                        found: self.describe(self.ty(arguments[0])),
                    });
                };
                if store && !mutable {
                    return Err(Kind::StoreToImmutable);
                }
                let ExprType::Scalar(ty) = ExprType::of(self.module, base) else {
                    return Err(Kind::BadOperand {
                        op: name,
                        ty: "a non-scalar".into(),
                    });
                };
                if store {
                    self.expect(arguments[1], ty)?;
                }
                (!store).then_some(ty)
            }
            Intrinsic::Clock64 | Intrinsic::GlobalTimer => {
                arity(0)?;
                Some(Scalar::U64)
            }
            Intrinsic::NanoSleep => {
                arity(1)?;
                self.expect(arguments[0], Scalar::U32)?;
                None
            }
            Intrinsic::Address(wanted) => {
                arity(1)?;
                let ExprType::Pointer { space, .. } = self.ty(arguments[0]) else {
                    return Err(Kind::TypeMismatch {
                        expected: format!("a pointer for `{name}`"),
                        found: self.describe(self.ty(arguments[0])),
                    });
                };
                // An element of a shared array is in `.shared`. A slice parameter of a
                // `#[device]` function may hold a shared array too, so only what is known
                // here is refused (as CUDA's `__cvta_generic_to_shared`, a generic pointer
                // outside shared memory gives an undefined address).
                let shared = space == AddressSpace::Shared || self.is_shared_element(arguments[0]);
                let fits = match wanted {
                    IntrinsicSpace::Shared => space != AddressSpace::Local,
                    IntrinsicSpace::Global => !shared && space != AddressSpace::Local,
                };
                if !fits {
                    let what = if shared {
                        "a shared array"
                    } else {
                        "a local array"
                    };
                    return Err(Kind::Unsupported(format!(
                        "`{name}` of an element of {what}: `shared_address` takes elements of shared arrays (`shared_array`, `dynamic_shared`), `global_address` elements of slices in device memory"
                    )));
                }
                Some(match wanted {
                    IntrinsicSpace::Shared => Scalar::U32,
                    IntrinsicSpace::Global => Scalar::U64,
                })
            }
            Intrinsic::TensorMapAddress => {
                return Err(Kind::Unsupported(
                    "`tensor_map_address` as a statement: it is the expression `TensorMapAddress`"
                        .into(),
                ))
            }
            Intrinsic::Shuffle(_) => {
                arity(3)?;
                self.expect(arguments[0], Scalar::U32)?;
                self.expect(arguments[2], Scalar::U32)?;
                Some(self.scalar(arguments[1])?)
            }
            Intrinsic::Vote(op) => {
                arity(2)?;
                self.expect(arguments[0], Scalar::U32)?;
                self.expect(arguments[1], Scalar::Bool)?;
                Some(if op == VoteOp::Ballot {
                    Scalar::U32
                } else {
                    Scalar::Bool
                })
            }
            Intrinsic::ActiveMask | Intrinsic::LaneId => {
                arity(0)?;
                Some(Scalar::U32)
            }
            Intrinsic::VectorLoad(_) | Intrinsic::VectorStore(_) => {
                return Err(Kind::Unsupported(format!(
                    "`{name}` as an intrinsic statement (it has statements of its own)"
                )))
            }
        };
        match (result, produced) {
            (None, _) => Ok(()),
            (Some(local), Some(ty)) => self.same(
                ExprType::of(self.module, self.function.locals[local].ty),
                ExprType::Scalar(ty),
            ),
            (Some(_), None) => Err(Kind::TypeMismatch {
                expected: format!("a value from `{name}`"),
                found: "nothing".into(),
            }),
        }
    }

    /// The element type an atomic through `pointer` works on: a 32- or 64-bit integer, or
    /// (`float_ok`) an `f32`/`f64`; `writes` requires a mutable pointer.
    fn atomic_element(
        &self,
        name: &'static str,
        pointer: Handle<Expression>,
        writes: bool,
        float_ok: bool,
    ) -> Result<Scalar, Kind> {
        let ExprType::Pointer { base, mutable, .. } = self.ty(pointer) else {
            return Err(Kind::TypeMismatch {
                expected: format!("a pointer for `{name}`"),
                found: self.describe(self.ty(pointer)),
            });
        };
        if writes && !mutable {
            return Err(Kind::StoreToImmutable);
        }
        let ExprType::Scalar(ty) = ExprType::of(self.module, base) else {
            return Err(Kind::BadOperand {
                op: name,
                ty: "a non-scalar".into(),
            });
        };
        let integer = matches!(
            ty,
            Scalar::I32 | Scalar::U32 | Scalar::I64 | Scalar::U64 | Scalar::Isize | Scalar::Usize
        );
        let float = float_ok && ty.is_wide_float();
        if !(integer || float) {
            return Err(Kind::BadOperand { op: name, ty: format!("`{ty}` (atomics take 32- and 64-bit integers, and floats for loads, stores, add, sub, exchange and compare-exchange)") });
        }
        Ok(ty)
    }

    /// Whether `pointer` points at an element of a shared array (`&tile[i]`).
    fn is_shared_element(&self, pointer: Handle<Expression>) -> bool {
        match self.function.expressions.try_get(pointer) {
            Some(Expression::ElementPointer { base, .. }) => matches!(
                self.function.expressions.try_get(self.slice_root(*base)),
                Some(Expression::SharedSlice(_))
            ),
            _ => false,
        }
    }

    /// The slice a chain of sub-slices views (`&tile[a..][b..]` views `tile`): its memory
    /// is the root's.
    fn slice_root(&self, mut slice: Handle<Expression>) -> Handle<Expression> {
        while let Some(Expression::SubSlice { base, .. }) = self.function.expressions.try_get(slice)
        {
            slice = *base;
        }
        slice
    }

    fn same(&self, expected: ExprType, found: ExprType) -> Result<(), Kind> {
        if expected == found {
            Ok(())
        } else {
            Err(Kind::TypeMismatch {
                expected: self.describe(expected),
                found: self.describe(found),
            })
        }
    }

    fn loop_target(&self, target: LoopId, what: &'static str) -> Result<(), Kind> {
        if self.loops.iter().any(|(id, _)| *id == target) {
            Ok(())
        } else {
            Err(Kind::BadLoopTarget {
                what,
                target: target.0,
            })
        }
    }
}
