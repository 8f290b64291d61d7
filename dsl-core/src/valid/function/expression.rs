//! The type of every expression, and the rules each kind of expression obeys (operand types,
//! casts, loads and stores through pointers of the right address space).

use super::Checker;
use crate::ast::{BinaryOp, UnaryOp};
use crate::ir::{AddressSpace, Expression, TypeInner};
use crate::valid::error::ValidationErrorKind as Kind;
use crate::valid::ExprType;
use crate::Scalar;

impl Checker<'_> {
    pub(super) fn resolve(&self, expression: &Expression) -> Result<ExprType, Kind> {
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
                            found: crate::valid::describe_type(self.module, struct_ty),
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
                                found: crate::valid::describe_type(self.module, base),
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
                            found: crate::valid::describe_type(
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
}
