//! Compiling expressions: each evaluated where its statement runs, into operations in
//! evaluation order writing a register of its own.

use cudajit_core::ast::BinaryOp;
use cudajit_core::ir::{CompileFlag, Expression, Handle, Literal, TypeInner};
use cudajit_core::math::MathFunction;
use cudajit_core::valid::ExprType;
use cudajit_core::Scalar;

use crate::int_methods::{int_method, IntMethod};
use crate::math::{float_math, FloatMath};
use crate::memory::{pointer, SHARED_REGION};
use crate::value::{self, IntMath};

use super::{Builtin, CompileResult, FunctionCompiler, LocalSlot, Op, Reg};

impl FunctionCompiler<'_> {
    /// `dst` = the scalar `s` at the address in `pointer` (a `bool`'s byte masked to 0 or 1).
    fn load_scalar(&mut self, dst: Reg, pointer: Reg, s: Scalar) {
        self.emit(Op::Load {
            dst,
            pointer,
            size: s.size_bytes(),
            mask: if s == Scalar::Bool { 1 } else { u64::MAX },
        });
    }

    /// Emits the evaluation of `handle` and returns the register holding its value (the
    /// first of two for a slice).
    pub(super) fn expr(&mut self, handle: Handle<Expression>) -> CompileResult<Reg> {
        self.expr_into(handle, None)
    }

    /// [`Self::expr`], writing the result to `dst` when the value comes from a single
    /// operation (so `x = a + b` needs no copy). Returns where the value is.
    pub(super) fn expr_into(
        &mut self,
        handle: Handle<Expression>,
        dst: Option<Reg>,
    ) -> CompileResult<Reg> {
        let span = self.function.expression_span(handle);
        let here = if span.is_known() { span } else { self.span };
        let saved = std::mem::replace(&mut self.span, here);
        let result = self.expr_inner(handle, dst);
        self.span = saved;
        result
    }

    pub(super) fn expr_inner(
        &mut self,
        handle: Handle<Expression>,
        dst: Option<Reg>,
    ) -> CompileResult<Reg> {
        let ty = self.info.type_of(handle);
        let target = |this: &mut Self| match dst {
            Some(dst) => dst,
            None => this.temp(handle, 1),
        };
        Ok(match self.function.expressions[handle] {
            Expression::Literal(literal) => self.constant(match literal {
                Literal::Bool(b) => u64::from(b),
                Literal::Int { bits, ty } => value::canonical(bits, ty),
                Literal::Float { value, ty } => value::float_literal(value, ty),
            }),
            Expression::FunctionArgument(index) => self.arguments[index as usize],
            Expression::LocalLoad(local) => {
                match ExprType::of(self.module, self.function.locals[local].ty) {
                    // A scalar whose address is taken: read from the frame.
                    ExprType::Scalar(s)
                        if matches!(self.locals[local.index()], LocalSlot::Struct { .. }) =>
                    {
                        let pointer = self.register(1);
                        self.struct_local(local, pointer)?;
                        let dst = target(self);
                        self.load_scalar(dst, pointer, s);
                        dst
                    }
                    ExprType::Scalar(_) | ExprType::Slice { .. } | ExprType::Pointer { .. } => {
                        self.local_register(local)?
                    }
                    // A struct value is a pointer to its bytes.
                    ExprType::Value(_) => {
                        let dst = target(self);
                        self.struct_local(local, dst)?;
                        dst
                    }
                }
            }
            // A struct value is a pointer to its bytes: the pointer itself.
            Expression::Load { pointer } if matches!(ty, ExprType::Value(_)) => {
                self.expr(pointer)?
            }
            Expression::Load { pointer } => {
                let ExprType::Scalar(s) = ty else {
                    return self.unsupported("loading this type");
                };
                let pointer = self.expr(pointer)?;
                let dst = target(self);
                self.load_scalar(dst, pointer, s);
                dst
            }
            Expression::ElementPointer { base, index } => {
                self.element_pointer(handle, base, index, 1, dst)?
            }
            Expression::SliceLength { slice } => self.expr(slice)? + 1,
            Expression::Unary { op, operand } => {
                let s = self.scalar_of(operand)?;
                let Some(f) = value::unary_fn(op, s) else {
                    return self.unsupported(format!("operator {op:?} on `{s}`"));
                };
                let a = self.expr(operand)?;
                let dst = target(self);
                self.emit(Op::Unary { f, dst, a });
                dst
            }
            Expression::Binary { op, left, right } => {
                let s = self.scalar_of(left)?;
                let Some(f) = value::binary_fn(op, s) else {
                    return self.unsupported(format!("operator `{}` on `{s}`", op.symbol()));
                };
                let a = self.expr(left)?;
                let b = self.expr(right)?;
                if matches!(op, BinaryOp::Div | BinaryOp::Rem) && s.is_integer() {
                    self.check_divisor(right, b, op == BinaryOp::Rem);
                }
                let dst = target(self);
                self.emit(Op::Binary { f, dst, a, b });
                dst
            }
            Expression::Logical { and, left, right } => {
                let a = self.expr(left)?;
                let dst = self.temp(handle, 1);
                let end = self.label();
                self.emit(Op::Copy { dst, src: a });
                self.jump_if(a, !and, end);
                let b = self.expr(right)?;
                self.emit(Op::Copy { dst, src: b });
                self.bind(end);
                dst
            }
            Expression::Cast { value: operand, to } => {
                let from = self.scalar_of(operand)?;
                let a = self.expr(operand)?;
                if from == to || (from.bits() == to.bits() && from.is_integer() && to.is_integer())
                {
                    // Same bits: integers of one width share their register encoding.
                    return Ok(a);
                }
                let Some(f) = value::cast_fn(from, to) else {
                    return self.unsupported(format!("a cast from `{from}` to `{to}`"));
                };
                let dst = target(self);
                self.emit(Op::Unary { f, dst, a });
                dst
            }
            Expression::Builtin(builtin) => self.builtin(Builtin::Value(builtin)),
            Expression::CompileFlag(CompileFlag::DebugAssertions) => {
                self.constant(u64::from(self.options.debug_assertions))
            }
            Expression::SharedSlice(shared) => {
                let variable = &self.module.shared[shared];
                let TypeInner::Scalar(elem) = self.module.types[variable.elem].inner else {
                    return self.unsupported("a shared array of non-scalars");
                };
                let layout = self
                    .program
                    .shared
                    .iter()
                    .find(|s| s.name == variable.name && s.len == variable.len && s.elem == elem)
                    .map(|s| s.offset);
                let offset = match (variable.len, layout) {
                    (_, Some(offset)) => offset,
                    (_, None) => return self.unsupported("a shared variable without a layout"),
                };
                let slice = self.temp(handle, 2);
                match variable.len {
                    Some(len) => {
                        self.init[slice as usize] = pointer(SHARED_REGION, u64::from(offset));
                        self.init[slice as usize + 1] = u64::from(len);
                    }
                    None => self.emit(Op::DynamicShared {
                        dst: slice,
                        offset,
                        size: elem.size_bytes(),
                    }),
                }
                slice
            }
            Expression::MemberElement { array, index } => {
                let ExprType::Pointer { base: array_ty, .. } = self.info.type_of(array) else {
                    return self.unsupported("an element of a non-array");
                };
                let TypeInner::Array { len, .. } = self.module.types[array_ty].inner else {
                    return self.unsupported("an element of a non-array");
                };
                let size = self.pointee_size(handle)?;
                let base = self.expr(array)?;
                let index = self.index(index)?;
                let dst = target(self);
                self.emit(Op::MemberElement {
                    dst,
                    base,
                    index,
                    size,
                    len,
                });
                dst
            }
            Expression::ArrayElement { local, index } => {
                let LocalSlot::Array { offset, len, size } = self.locals[local.index()] else {
                    return self.unsupported("indexing a local that is not an array");
                };
                let index = self.index(index)?;
                let dst = target(self);
                self.emit(Op::ArrayElement {
                    dst,
                    offset,
                    len,
                    index,
                    size,
                });
                dst
            }
            Expression::Math {
                function,
                argument,
                arg1,
                arg2,
            } => self.math(handle, function, argument, arg1, arg2, dst)?,
            // A struct value is only ever a parameter, held as a pointer to its bytes.
            Expression::ValuePointer { value } => self.expr(value)?,
            Expression::FieldPointer { base, field } => {
                let struct_ty = match self.info.type_of(base) {
                    ExprType::Pointer { base, .. } | ExprType::Value(base) => base,
                    _ => return self.unsupported("a field of a non-struct"),
                };
                let TypeInner::Struct { members, .. } = &self.module.types[struct_ty].inner else {
                    return self.unsupported("a field of a non-struct");
                };
                let Some(member) = members.get(field as usize) else {
                    return self.unsupported("a field the struct does not have");
                };
                let offset = self.constant(u64::from(member.offset));
                let base = self.expr(base)?;
                let dst = target(self);
                self.emit(Op::PointerElement {
                    dst,
                    base,
                    index: offset,
                    size: 1,
                });
                dst
            }
            Expression::LocalPointer(local) => {
                let dst = target(self);
                match self.locals[local.index()] {
                    // An array local's address (passed to an array parameter).
                    LocalSlot::Array { offset, len, size } => {
                        let index = self.constant(0);
                        self.emit(Op::ArrayElement {
                            dst,
                            offset,
                            len,
                            index,
                            size,
                        });
                    }
                    _ => {
                        self.struct_local(local, dst)?;
                    }
                }
                dst
            }
            // The address of the map's bytes in the launch's read-only memory.
            Expression::TensorMapAddress { argument } => self.arguments[argument as usize],
            // A simulated device address is a pointer (region and offset): the slice is
            // the address and the length, checked at each access like any slice.
            Expression::SubSlice { base, start, end } => {
                let ExprType::Slice { base: elem, .. } = self.info.type_of(handle) else {
                    return self.unsupported("a sub-slice of a non-slice");
                };
                let TypeInner::Scalar(elem) = self.module.types[elem].inner else {
                    return self.unsupported("a sub-slice of structs");
                };
                let size = elem.size_bytes();
                let base = self.expr(base)?;
                let start = self.expr(start)?;
                let end = end.map(|end| self.expr(end)).transpose()?;
                let dst = self.temp(handle, 2);
                self.emit(Op::SubSlice {
                    dst,
                    base,
                    start,
                    end,
                    size,
                });
                dst
            }
            Expression::RawSlice {
                address,
                length,
                elem,
                ..
            } => {
                if !matches!(self.module.types[elem].inner, TypeInner::Scalar(_)) {
                    return self.unsupported("`slice_at` over structs");
                }
                let address = self.expr(address)?;
                let length = self.expr(length)?;
                let slice = self.temp(handle, 2);
                self.emit(Op::Copy {
                    dst: slice,
                    src: address,
                });
                self.emit(Op::Copy {
                    dst: slice + 1,
                    src: length,
                });
                slice
            }
        })
    }

    /// An index widened to 64 bits as the writer widens it (sign-extended if signed).
    pub(super) fn index(&mut self, index: Handle<Expression>) -> CompileResult<Reg> {
        let s = self.scalar_of(index)?;
        let reg = self.expr(index)?;
        if s.is_signed() && s.bits() < 64 {
            let Some(f) = value::cast_fn(s, Scalar::I64) else {
                return self.unsupported("this index type");
            };
            let dst = self.register(1);
            self.emit(Op::Unary { f, dst, a: reg });
            return Ok(dst);
        }
        Ok(reg)
    }

    pub(super) fn element_pointer(
        &mut self,
        handle: Handle<Expression>,
        base: Handle<Expression>,
        index: Handle<Expression>,
        extent: u32,
        dst: Option<Reg>,
    ) -> CompileResult<Reg> {
        let size = self.pointee_size(handle)?;
        let base_ty = self.info.type_of(base);
        let base = self.expr(base)?;
        let index = self.index(index)?;
        let dst = match dst {
            Some(dst) => dst,
            None => self.temp(handle, 1),
        };
        match base_ty {
            ExprType::Slice { .. } => self.emit(Op::SliceElement {
                dst,
                base,
                index,
                size,
                extent,
            }),
            _ => self.emit(Op::PointerElement {
                dst,
                base,
                index,
                size,
            }),
        }
        Ok(dst)
    }

    pub(super) fn math(
        &mut self,
        handle: Handle<Expression>,
        function: MathFunction,
        argument: Handle<Expression>,
        arg1: Option<Handle<Expression>>,
        arg2: Option<Handle<Expression>>,
        dst: Option<Reg>,
    ) -> CompileResult<Reg> {
        let s = self.scalar_of(argument)?;
        let resolved = if matches!(function, MathFunction::ToBits | MathFunction::FromBits(_)) {
            // A float's register holds its bits, and an unsigned integer's its bits
            // zero-extended: a bit cast moves the register unchanged.
            Some(FloatMath::Unary(|bits| bits))
        } else if s.is_float() {
            float_math(function, s)
        } else if let Some(method) = int_method(function, s) {
            Some(match method {
                IntMethod::Unary(f) => FloatMath::Unary(f),
                IntMethod::Binary(f) => FloatMath::Binary(f),
                IntMethod::Ternary(f) => FloatMath::Ternary(f),
            })
        } else {
            value::int_math(function, s).map(|m| match m {
                IntMath::Unary(f) => FloatMath::Unary(f),
                IntMath::Binary(f) => FloatMath::Binary(f),
            })
        };
        let Some(resolved) = resolved else {
            return self.unsupported(format!("`{}` on `{s}`", function.name()));
        };
        let a = self.expr(argument)?;
        let b = arg1.map(|h| self.expr(h)).transpose()?;
        let c = arg2.map(|h| self.expr(h)).transpose()?;
        let divides = matches!(
            function,
            MathFunction::DivEuclid | MathFunction::RemEuclid | MathFunction::DivCeil
        );
        if let (true, true, Some(divisor), Some(b)) = (divides, s.is_integer(), arg1, b) {
            self.check_divisor(divisor, b, function == MathFunction::RemEuclid);
        }
        let dst = match dst {
            Some(dst) => dst,
            None => self.temp(handle, 1),
        };
        match (resolved, b, c) {
            (FloatMath::Unary(f), None, None) => self.emit(Op::Unary { f, dst, a }),
            (FloatMath::Binary(f), Some(b), None) => self.emit(Op::Binary { f, dst, a, b }),
            (FloatMath::Ternary(f), Some(b), Some(c)) => self.emit(Op::Ternary { f, dst, a, b, c }),
            _ => return self.unsupported(format!("`{}` with these arguments", function.name())),
        }
        Ok(dst)
    }
}
