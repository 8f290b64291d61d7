//! Writing expressions: operands, arithmetic, comparisons, casts and vector accesses.

use cudajit_core::ast::{Axis, BinaryOp, UnaryOp};
use cudajit_core::ir::{BuiltinValue, CompileFlag, Expression, Handle, Literal, TypeInner};
use cudajit_core::valid::ExprType;
use cudajit_core::Scalar;

use super::function::{
    shared_global_name, struct_type_name, Value, WriteError, Writer, DYNAMIC_SHARED,
};
use super::types;

impl Writer<'_> {
    pub(super) fn expr(&mut self, handle: Handle<Expression>) -> Result<Value, WriteError> {
        let span = self.function.expression_span(handle);
        let scalar = |v: String| Ok(Value::Scalar(v));
        match self.function.expressions[handle] {
            Expression::Literal(literal) => scalar(match literal {
                Literal::Bool(b) => b.to_string(),
                Literal::Int { bits, ty } => types::int_constant(bits, ty.bits()),
                Literal::Float { value, ty } => types::float_constant(value, ty),
            }),
            Expression::FunctionArgument(index) => {
                let value = self.arguments[index as usize].clone();
                if self.info.type_of(handle) == ExprType::Scalar(Scalar::Bool) {
                    let byte = value.scalar();
                    return scalar(self.value(format!("trunc i8 {byte} to i1")));
                }
                Ok(value)
            }
            // The `byval` pointer of a `grid_constant` parameter: its generic address, which
            // NVVM computes with `cvta.param` (CUDA C++'s `&map`).
            Expression::TensorMapAddress { argument } => {
                let pointer = self.arguments[argument as usize].clone().scalar();
                let ty = super::function::TENSOR_MAP_TYPE;
                scalar(self.value(format!("ptrtoint {ty}* {pointer} to i64")))
            }
            Expression::LocalLoad(local) if self.struct_valued(handle) => {
                scalar(format!("%local{}", local.index()))
            }
            Expression::LocalLoad(local) => {
                let s = self.scalar_of(handle)?;
                let ty = types::scalar(s);
                scalar(self.value(format!("load {ty}, {ty}* %local{}", local.index())))
            }
            Expression::Load { pointer } if self.struct_valued(handle) => {
                // Struct values stay in memory; copies happen where they are stored.
                Ok(self.expr(pointer)?)
            }
            Expression::Load { pointer } => {
                let s = self.scalar_of(handle)?;
                let address = self.expr(pointer)?.scalar();
                let mem = types::memory(s);
                let loaded = self.value(format!(
                    "load {mem}, {mem}* {address}, align {}",
                    s.size_bytes()
                ));
                if s == Scalar::Bool {
                    return scalar(self.value(format!("trunc i8 {loaded} to i1")));
                }
                scalar(loaded)
            }
            Expression::ElementPointer { base, index } => {
                let mem = match self.info.type_of(handle) {
                    ExprType::Pointer { base, .. } => match &self.module.types[base].inner {
                        TypeInner::Scalar(s) => types::memory(*s).to_owned(),
                        TypeInner::Struct { name, .. } => struct_type_name(name),
                        _ => return Err(self.unsupported(span, "a pointer to this type")),
                    },
                    _ => return Err(self.unsupported(span, "an element pointer of this type")),
                };
                let (base_pointer, length) = match self.expr(base)? {
                    Value::Slice { pointer, length } => (pointer, Some(length)),
                    Value::Scalar(pointer) => (pointer, None),
                };
                let index_ty = self.scalar_of(index)?;
                let index_value = self.expr(index)?.scalar();
                let index64 = self.widen_to_i64(index_value, index_ty);
                if let Some(length) = length {
                    self.bounds_check(&index64, &length, span);
                }
                scalar(self.value(format!(
                    "getelementptr inbounds {mem}, {mem}* {base_pointer}, i64 {index64}"
                )))
            }
            Expression::SliceLength { slice } => match self.expr(slice)? {
                Value::Slice { length, .. } => scalar(length),
                Value::Scalar(_) => Err(self.unsupported(span, "`.len()` of a non-slice")),
            },
            Expression::Unary { op, operand } => {
                let s = self.scalar_of(operand)?;
                let value = self.expr(operand)?.scalar();
                let ty = types::scalar(s);
                scalar(match (op, s.is_float()) {
                    // Flip the sign bit: exact, and the only negation LLVM 7 has for these.
                    (UnaryOp::Neg, true) if s == Scalar::BF16 => {
                        self.value(format!("xor i16 {value}, -32768"))
                    }
                    (UnaryOp::Neg, true) if s == Scalar::F16 => {
                        self.value(format!("fsub half 0xH8000, {value}"))
                    }
                    (UnaryOp::Neg, true) => self.value(format!("fsub {ty} -0.0, {value}")),
                    (UnaryOp::Neg, false) => self.value(format!("sub {ty} 0, {value}")),
                    (UnaryOp::Not, _) => {
                        let all_ones = if s == Scalar::Bool { "true" } else { "-1" };
                        self.value(format!("xor {ty} {value}, {all_ones}"))
                    }
                })
            }
            Expression::Binary { op, left, right } => {
                let s = self.scalar_of(left)?;
                let l = self.expr(left)?.scalar();
                let r = self.expr(right)?.scalar();
                scalar(self.binary(op, s, l, r))
            }
            Expression::Logical { and, left, right } => self.logical(and, left, right),
            Expression::Cast { value, to } => {
                let from = self.scalar_of(value)?;
                let v = self.expr(value)?.scalar();
                scalar(self.cast(v, from, to))
            }
            Expression::LocalPointer(local) => scalar(format!("%local{}", local.index())),
            // A struct value is already its address (struct values stay in memory).
            Expression::ValuePointer { value } => Ok(self.expr(value)?),
            Expression::RawSlice {
                address,
                length,
                elem,
                ..
            } => {
                let TypeInner::Scalar(elem) = self.module.types[elem].inner else {
                    return Err(self.unsupported(span, "a slice of non-scalars at an address"));
                };
                let mem = types::memory(elem);
                let address = self.expr(address)?.scalar();
                let length = self.expr(length)?.scalar();
                // Device addresses (peer windows included) are global memory: saying so
                // lets the back end use `ld.global`/`st.global`.
                let global = self.value(format!("inttoptr i64 {address} to {mem} addrspace(1)*"));
                let pointer = self.value(format!(
                    "addrspacecast {mem} addrspace(1)* {global} to {mem}*"
                ));
                Ok(Value::Slice { pointer, length })
            }
            Expression::SubSlice { base, start, end } => {
                let elem = match self.info.type_of(handle) {
                    ExprType::Slice { base, .. } => match &self.module.types[base].inner {
                        TypeInner::Scalar(s) => types::memory(*s).to_owned(),
                        TypeInner::Struct { name, .. } => struct_type_name(name),
                        _ => return Err(self.unsupported(span, "a sub-slice of this type")),
                    },
                    _ => return Err(self.unsupported(span, "a sub-slice of a non-slice")),
                };
                let Value::Slice { pointer, length } = self.expr(base)? else {
                    return Err(self.unsupported(span, "a sub-slice of a non-slice"));
                };
                let start = self.expr(start)?.scalar();
                let end = match end {
                    Some(end) => self.expr(end)?.scalar(),
                    None => length.clone(),
                };
                self.range_check(&start, &end, &length, span);
                let pointer = self.value(format!(
                    "getelementptr inbounds {elem}, {elem}* {pointer}, i64 {start}"
                ));
                let length = self.value(format!("sub i64 {end}, {start}"));
                Ok(Value::Slice { pointer, length })
            }
            Expression::FieldPointer { base, field } => {
                let struct_ty = match self.info.type_of(base) {
                    ExprType::Pointer { base, .. } | ExprType::Value(base) => base,
                    _ => return Err(self.unsupported(span, "a field of a non-struct")),
                };
                let TypeInner::Struct { name, .. } = &self.module.types[struct_ty].inner else {
                    return Err(self.unsupported(span, "a field of a non-struct"));
                };
                let ty = struct_type_name(name);
                let address = self.expr(base)?.scalar();
                scalar(self.value(format!(
                    "getelementptr inbounds {ty}, {ty}* {address}, i32 0, i32 {field}"
                )))
            }
            Expression::CompileFlag(CompileFlag::DebugAssertions) => {
                scalar(self.options.debug_assertions.to_string())
            }
            Expression::MemberElement { array, index } => {
                let ExprType::Pointer { base: array_ty, .. } = self.info.type_of(array) else {
                    return Err(self.unsupported(span, "an element of a non-array"));
                };
                let TypeInner::Array { len, .. } = self.module.types[array_ty].inner else {
                    return Err(self.unsupported(span, "an element of a non-array"));
                };
                let Some((array_type, _, _)) = super::member_layout(self.module, array_ty) else {
                    return Err(self.unsupported(span, "an array of this element type"));
                };
                let pointer = self.expr(array)?.scalar();
                let index_ty = self.scalar_of(index)?;
                let index_value = self.expr(index)?.scalar();
                let index64 = self.widen_to_i64(index_value, index_ty);
                self.bounds_check(&index64, &len.to_string(), span);
                scalar(self.value(format!(
                    "getelementptr inbounds {array_type}, {array_type}* {pointer}, i64 0, i64 {index64}"
                )))
            }
            Expression::ArrayElement { local, index } => {
                let array_ty = self.function.locals[local].ty;
                let TypeInner::Array { base, len } = self.module.types[array_ty].inner else {
                    return Err(self.unsupported(span, "indexing a non-array local"));
                };
                // Scalars in their memory type; structs (`[Body::zero(); 4]`) by name; rows
                // of an array of arrays as arrays (`[4 x float]`).
                let Some((mem, _, _)) = super::member_layout(self.module, base) else {
                    return Err(self.unsupported(span, "an array of this element type"));
                };
                let index_ty = self.scalar_of(index)?;
                let index_value = self.expr(index)?.scalar();
                let index64 = self.widen_to_i64(index_value, index_ty);
                self.bounds_check(&index64, &len.to_string(), span);
                scalar(self.value(format!(
                    "getelementptr inbounds [{len} x {mem}], [{len} x {mem}]* %local{}, i64 0, i64 {index64}",
                    local.index()
                )))
            }
            Expression::SharedSlice(shared) => {
                let variable = &self.module.shared[shared];
                let TypeInner::Scalar(elem) = self.module.types[variable.elem].inner else {
                    return Err(self.unsupported(span, "a shared array of non-scalars"));
                };
                let mem = types::memory(elem);
                let global = shared_global_name(shared.index());
                match variable.len {
                    Some(len) => {
                        let generic = self.value(format!(
                            "addrspacecast [{len} x {mem}] addrspace(3)* {global} to [{len} x {mem}]*"
                        ));
                        let pointer = self.value(format!(
                            "getelementptr inbounds [{len} x {mem}], [{len} x {mem}]* {generic}, i64 0, i64 0"
                        ));
                        Ok(Value::Slice {
                            pointer,
                            length: len.to_string(),
                        })
                    }
                    None => {
                        let generic = self.value(format!(
                            "addrspacecast [0 x i8] addrspace(3)* {DYNAMIC_SHARED} to [0 x i8]*"
                        ));
                        let bytes = self.value(format!(
                            "getelementptr inbounds [0 x i8], [0 x i8]* {generic}, i64 0, i64 0"
                        ));
                        let pointer = self.value(format!("bitcast i8* {bytes} to {mem}*"));
                        // The slice covers the launch's dynamic shared memory.
                        let size = self.value(
                            "call i32 asm \"mov.u32 $0, %dynamic_smem_size;\", \"=r\"()".to_owned(),
                        );
                        let size64 = self.value(format!("zext i32 {size} to i64"));
                        let length =
                            self.value(format!("udiv i64 {size64}, {}", elem.size_bytes()));
                        Ok(Value::Slice { pointer, length })
                    }
                }
            }
            Expression::Math {
                function,
                argument,
                arg1,
                arg2,
            } => {
                let extra: Vec<_> = [arg1, arg2].into_iter().flatten().collect();
                scalar(self.math(function, argument, &extra)?)
            }
            Expression::Builtin(builtin) => {
                let (register, axis) = match builtin {
                    BuiltinValue::ThreadIdx(a) => ("tid", a),
                    BuiltinValue::BlockIdx(a) => ("ctaid", a),
                    BuiltinValue::BlockDim(a) => ("ntid", a),
                    BuiltinValue::GridDim(a) => ("nctaid", a),
                };
                let axis = match axis {
                    Axis::X => "x",
                    Axis::Y => "y",
                    Axis::Z => "z",
                };
                let name = format!("llvm.nvvm.read.ptx.sreg.{register}.{axis}");
                self.declare(format!("declare i32 @{name}() nounwind readnone"));
                scalar(self.value(format!("call i32 @{name}()")))
            }
        }
    }

    pub(super) fn widen_to_i64(&mut self, value: String, ty: Scalar) -> String {
        match ty.bits() {
            64 => value,
            _ if ty.is_signed() => self.value(format!("sext {} {value} to i64", types::scalar(ty))),
            _ => self.value(format!("zext {} {value} to i64", types::scalar(ty))),
        }
    }

    pub(super) fn binary(&mut self, op: BinaryOp, s: Scalar, l: String, r: String) -> String {
        // bf16 (and f16's remainder) compute in f32, then round back, as `half` does.
        if s == Scalar::BF16 || (s == Scalar::F16 && op == BinaryOp::Rem) {
            let wide_l = self.cast(l, s, Scalar::F32);
            let wide_r = self.cast(r, s, Scalar::F32);
            let result = self.binary(op, Scalar::F32, wide_l, wide_r);
            return if op.is_comparison() {
                result
            } else {
                self.cast(result, Scalar::F32, s)
            };
        }
        // Rust's `%` on floats is C's `fmod`, which is exact; LLVM's `frem` becomes
        // `x - trunc(x / y) * y` on NVPTX, which is not (the CPU simulator's differential
        // tests found results off by orders of magnitude). libdevice's `fmod` is exact.
        if op == BinaryOp::Rem && matches!(s, Scalar::F32 | Scalar::F64) {
            let name = if s == Scalar::F32 {
                "__nv_fmodf"
            } else {
                "__nv_fmod"
            };
            let ty = types::scalar(s);
            self.declare(format!(
                "declare {ty} @{name}({ty}, {ty}) nounwind readnone"
            ));
            return self.value(format!("call {ty} @{name}({ty} {l}, {ty} {r})"));
        }
        let ty = types::scalar(s);
        let float = s.is_float();
        let signed = s.is_signed();
        let opcode = match op {
            BinaryOp::Add => {
                if float {
                    "fadd"
                } else {
                    "add"
                }
            }
            BinaryOp::Sub => {
                if float {
                    "fsub"
                } else {
                    "sub"
                }
            }
            BinaryOp::Mul => {
                if float {
                    "fmul"
                } else {
                    "mul"
                }
            }
            BinaryOp::Div => {
                if float {
                    "fdiv"
                } else if signed {
                    "sdiv"
                } else {
                    "udiv"
                }
            }
            BinaryOp::Rem => {
                if float {
                    "frem"
                } else if signed {
                    "srem"
                } else {
                    "urem"
                }
            }
            BinaryOp::BitAnd => "and",
            BinaryOp::BitOr => "or",
            BinaryOp::BitXor => "xor",
            BinaryOp::Shl | BinaryOp::Shr => {
                // Rust's wrapping shifts: the amount is taken modulo the width.
                let masked = self.value(format!("and {ty} {r}, {}", s.bits() - 1));
                let opcode = match (op, signed) {
                    (BinaryOp::Shl, _) => "shl",
                    (_, true) => "ashr",
                    (_, false) => "lshr",
                };
                return self.value(format!("{opcode} {ty} {l}, {masked}"));
            }
            BinaryOp::Eq
            | BinaryOp::Ne
            | BinaryOp::Lt
            | BinaryOp::Le
            | BinaryOp::Gt
            | BinaryOp::Ge => {
                let predicate = comparison(op, s);
                let instruction = if float { "fcmp" } else { "icmp" };
                return self.value(format!("{instruction} {predicate} {ty} {l}, {r}"));
            }
            BinaryOp::And | BinaryOp::Or => unreachable!("lowered as Expression::Logical"),
        };
        self.value(format!("{opcode} {ty} {l}, {r}"))
    }

    /// `a && b` / `a || b`: `b` runs only if `a` does not decide the result.
    pub(super) fn logical(
        &mut self,
        and: bool,
        left: Handle<Expression>,
        right: Handle<Expression>,
    ) -> Result<Value, WriteError> {
        let l = self.expr(left)?.scalar();
        let from_left = self.current_label.clone();
        let rhs = self.label("logic.rhs");
        let end = self.label("logic.end");
        if and {
            self.line(format!("br i1 {l}, label %{rhs}, label %{end}"));
        } else {
            self.line(format!("br i1 {l}, label %{end}, label %{rhs}"));
        }
        self.terminated = true;
        self.start(&rhs);
        let r = self.expr(right)?.scalar();
        let from_right = self.current_label.clone();
        self.branch(&end);
        self.start(&end);
        let short = if and { "false" } else { "true" };
        Ok(Value::Scalar(self.value(format!(
            "phi i1 [ {short}, %{from_left} ], [ {r}, %{from_right} ]"
        ))))
    }

    /// Two 16-bit lanes `low` and `high` of a vector store as one 32-bit word, `low` in the
    /// low half. Two `f32`s narrowed to `bf16` (`bf16::from_f32(x)`, what a `bf16` sum
    /// accumulated in `f32` stores) round together with one `cvt.rn.bf16x2.f32`, as CUDA
    /// C++'s `__float22bfloat162_rn` does.
    pub(super) fn packed_pair(
        &mut self,
        elem: Scalar,
        low: Handle<Expression>,
        high: Handle<Expression>,
    ) -> Result<String, WriteError> {
        let narrowed_f32 =
            |this: &Self, lane: Handle<Expression>| match this.function.expressions[lane] {
                Expression::Cast {
                    value,
                    to: Scalar::BF16,
                } if this.info.type_of(value) == ExprType::Scalar(Scalar::F32) => Some(value),
                _ => None,
            };
        if elem == Scalar::BF16 {
            if let (Some(lo), Some(hi)) = (narrowed_f32(self, low), narrowed_f32(self, high)) {
                let lo = self.expr(lo)?.scalar();
                let hi = self.expr(hi)?.scalar();
                return Ok(self.value(format!(
                    "call i32 asm \"cvt.rn.bf16x2.f32 $0, $1, $2;\", \"=r,f,f\"(float {hi}, float {lo})"
                )));
            }
        }
        let t = types::memory(elem);
        let mut bits = Vec::new();
        for lane in [low, high] {
            let v = self.expr(lane)?.scalar();
            bits.push(if t == "i16" {
                v
            } else {
                self.value(format!("bitcast {t} {v} to i16"))
            });
        }
        let lo = self.value(format!("zext i16 {} to i32", bits[0]));
        let hi = self.value(format!("zext i16 {} to i32", bits[1]));
        let hi = self.value(format!("shl i32 {hi}, 16"));
        Ok(self.value(format!("or i32 {lo}, {hi}")))
    }

    pub(super) fn cast(&mut self, v: String, from: Scalar, to: Scalar) -> String {
        if from == to {
            return v;
        }
        // bf16 converts through f32: widening is exact (its bits are f32's top half),
        // narrowing rounds to nearest even with PTX `cvt.rn.bf16.f32` (sm_80 and newer).
        if from == Scalar::BF16 {
            let wide = self.value(format!("zext i16 {v} to i32"));
            let bits = self.value(format!("shl i32 {wide}, 16"));
            let float = self.value(format!("bitcast i32 {bits} to float"));
            return self.cast(float, Scalar::F32, to);
        }
        if to == Scalar::BF16 {
            let float = self.cast(v, from, Scalar::F32);
            return self.value(format!(
                "call i16 asm \"cvt.rn.bf16.f32 $0, $1;\", \"=h,f\"(float {float})"
            ));
        }
        // f16 to an integer: through f32, whose saturating conversion is Rust's.
        if from == Scalar::F16 && !to.is_float() {
            let float = self.value(format!("fpext half {v} to float"));
            return self.cast(float, Scalar::F32, to);
        }
        let (f, t) = (types::scalar(from), types::scalar(to));
        match (from.is_float(), to.is_float()) {
            (true, true) => match from.bits().cmp(&to.bits()) {
                std::cmp::Ordering::Less => self.value(format!("fpext {f} {v} to {t}")),
                std::cmp::Ordering::Greater => self.value(format!("fptrunc {f} {v} to {t}")),
                std::cmp::Ordering::Equal => v,
            },
            (false, true) => {
                let op = if from.is_signed() { "sitofp" } else { "uitofp" };
                self.value(format!("{op} {f} {v} to {t}"))
            }
            (true, false) => self.float_to_int(v, from, to),
            (false, false) => match from.bits().cmp(&to.bits()) {
                std::cmp::Ordering::Less => {
                    let op = if from.is_signed() { "sext" } else { "zext" };
                    self.value(format!("{op} {f} {v} to {t}"))
                }
                std::cmp::Ordering::Greater => self.value(format!("trunc {f} {v} to {t}")),
                std::cmp::Ordering::Equal => v,
            },
        }
    }

    /// Rust's saturating float-to-int `as`, NaN to 0: PTX `cvt.rzi` to 32 or 64 bits, a
    /// NaN check, then a clamp for 8- and 16-bit targets.
    pub(super) fn float_to_int(&mut self, v: String, from: Scalar, to: Scalar) -> String {
        let wide = to.bits() == 64;
        let source = if from == Scalar::F32 { "f" } else { "d" };
        let target = match (wide, to.is_signed()) {
            (false, true) => "i",
            (false, false) => "ui",
            (true, true) => "ll",
            (true, false) => "ull",
        };
        let result = if wide { "i64" } else { "i32" };
        let name = format!("llvm.nvvm.{source}2{target}.rz");
        let f = types::scalar(from);
        self.declare(format!("declare {result} @{name}({f}) nounwind readnone"));
        let raw = self.value(format!("call {result} @{name}({f} {v})"));
        // `cvt.rzi` saturates, but a NaN becomes the minimum of 64-bit targets; Rust wants 0.
        let is_nan = self.value(format!("fcmp uno {f} {v}, {v}"));
        let converted = self.value(format!("select i1 {is_nan}, {result} 0, {result} {raw}"));
        if to.bits() >= 32 {
            return converted;
        }
        let (low, high) = if to.is_signed() {
            (-(1i64 << (to.bits() - 1)), (1i64 << (to.bits() - 1)) - 1)
        } else {
            (0, (1i64 << to.bits()) - 1)
        };
        let (lt, gt) = if to.is_signed() {
            ("slt", "sgt")
        } else {
            ("ult", "ugt")
        };
        let below = self.value(format!("icmp {lt} i32 {converted}, {low}"));
        let raised = self.value(format!("select i1 {below}, i32 {low}, i32 {converted}"));
        let above = self.value(format!("icmp {gt} i32 {raised}, {high}"));
        let clamped = self.value(format!("select i1 {above}, i32 {high}, i32 {raised}"));
        self.value(format!("trunc i32 {clamped} to {}", types::scalar(to)))
    }

    /// Whether an expression's value is a struct (kept in memory, handled by address).
    pub(super) fn struct_valued(&self, handle: Handle<Expression>) -> bool {
        matches!(self.info.type_of(handle), ExprType::Value(ty)
            if matches!(self.module.types[ty].inner, TypeInner::Struct { .. }))
    }

    /// Copies the struct `value` (at `source`) to `target`.
    pub(super) fn copy_struct(
        &mut self,
        value: Handle<Expression>,
        source: &str,
        target: &str,
    ) -> Result<(), WriteError> {
        let ExprType::Value(ty) = self.info.type_of(value) else {
            return Err(self.unsupported(self.function.span, "copying a non-struct"));
        };
        let TypeInner::Struct { name, align, .. } = &self.module.types[ty].inner else {
            return Err(self.unsupported(self.function.span, "copying a non-struct"));
        };
        let t = struct_type_name(name);
        let loaded = self.value(format!("load {t}, {t}* {source}, align {align}"));
        self.line(format!("store {t} {loaded}, {t}* {target}, align {align}"));
        Ok(())
    }

    /// The element type, LLVM vector type and vector pointer of a vector access.
    pub(super) fn vector_address(
        &mut self,
        pointer: Handle<Expression>,
        count: usize,
    ) -> Result<(Scalar, String, String), WriteError> {
        let span = self.function.expression_span(pointer);
        let ExprType::Pointer { base, .. } = self.info.type_of(pointer) else {
            return Err(self.unsupported(span, "a vector access without a pointer"));
        };
        let TypeInner::Scalar(elem) = self.module.types[base].inner else {
            return Err(self.unsupported(span, "a vector of non-scalars"));
        };
        let t = types::memory(elem);
        let vector = format!("<{count} x {t}>");
        let address = self.expr(pointer)?.scalar();
        let cast = self.value(format!("bitcast {t}* {address} to {vector}*"));
        Ok((elem, vector, cast))
    }
}

/// The `icmp`/`fcmp` predicate of a comparison. Float `!=` is unordered (true for NaN),
/// every other float comparison ordered, as in Rust.
pub(super) fn comparison(op: BinaryOp, s: Scalar) -> &'static str {
    let float = s.is_float();
    let signed = s.is_signed();
    match (op, float, signed) {
        (BinaryOp::Eq, true, _) => "oeq",
        (BinaryOp::Ne, true, _) => "une",
        (BinaryOp::Lt, true, _) => "olt",
        (BinaryOp::Le, true, _) => "ole",
        (BinaryOp::Gt, true, _) => "ogt",
        (BinaryOp::Ge, true, _) => "oge",
        (BinaryOp::Eq, false, _) => "eq",
        (BinaryOp::Ne, false, _) => "ne",
        (BinaryOp::Lt, false, true) => "slt",
        (BinaryOp::Le, false, true) => "sle",
        (BinaryOp::Gt, false, true) => "sgt",
        (BinaryOp::Ge, false, true) => "sge",
        (BinaryOp::Lt, false, false) => "ult",
        (BinaryOp::Le, false, false) => "ule",
        (BinaryOp::Gt, false, false) => "ugt",
        _ => "uge",
    }
}
