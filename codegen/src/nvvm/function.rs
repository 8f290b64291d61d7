//! Writing one function: expressions, statements and structured control flow.

use std::collections::BTreeSet;
use std::fmt::Write;

use cudajit_core::abi::{self, ArgWord};
use cudajit_core::ast::FormatPiece;
use cudajit_core::ast::{Axis, BinaryOp, UnaryOp};
use cudajit_core::intrinsics::{AtomicOp, AtomicScope, FenceScope, Intrinsic, ShuffleMode, VoteOp};
use cudajit_core::ir::{
    Block, BuiltinValue, CompileFlag, Expression, ExternFunction, Function, Handle, Literal,
    LocalVariable, LoopId, Module, Statement, Type, TypeInner,
};
use cudajit_core::math::MathFunction;
use cudajit_core::valid::{ExprType, FunctionInfo};
use cudajit_core::{Scalar, Span};

use super::types;
use super::WriteOptions;

/// IR the writer cannot express yet. Validated IR from the current front end never
/// produces it; it names the construct so the gap is clear.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("NVVM writer: {what} is not supported yet (in `{function}` at {span})")]
pub struct WriteError {
    pub function: String,
    pub span: Span,
    pub what: String,
}

/// A written kernel definition.
pub(super) struct WrittenKernel {
    pub text: String,
    /// Module-level string constants (format strings, messages) it uses.
    pub constants: Vec<String>,
    /// `declare` lines of the intrinsics it calls.
    pub declarations: BTreeSet<String>,
    /// Its function pointer type, for metadata (`void (float, float*)*`).
    pub pointer_type: String,
}

/// A value of the kernel: a scalar operand, or a slice's pointer and length.
#[derive(Clone, Debug)]
enum Value {
    Scalar(String),
    Slice { pointer: String, length: String },
}

impl Value {
    fn scalar(self) -> String {
        match self {
            Value::Scalar(s) => s,
            Value::Slice { pointer, .. } => pointer,
        }
    }
}

/// The LLVM name of a function: a kernel's entry symbol, or the device function's name
/// with a `cudajit_dev_` prefix (PTX identifiers allow no `.`, so no suffix can be outside
/// Rust's identifiers; the prefix keeps device functions apart from kernels in practice).
pub(super) fn symbol_of(module: &Module, function: Handle<Function>) -> String {
    match module.entry_points.iter().find(|e| e.function == function) {
        Some(entry) => entry.symbol.clone(),
        None => format!("cudajit_dev_{}", sanitize(&module.functions[function].name)),
    }
}

/// Writes one function: a kernel (`is_kernel`: `void` result, `noalias` slices) or an
/// internal device function.
pub(super) fn write_function(
    module: &Module,
    function: &Function,
    info: &FunctionInfo,
    symbol: &str,
    is_kernel: bool,
    options: &WriteOptions,
) -> Result<WrittenKernel, WriteError> {
    let mut writer = Writer {
        options,
        symbol: symbol.to_owned(),
        constants: Vec::new(),
        module,
        function,
        info,
        body: String::new(),
        declarations: BTreeSet::new(),
        next_value: 0,
        next_label: 0,
        current_label: "entry".into(),
        terminated: false,
        loops: Vec::new(),
        arguments: Vec::new(),
    };
    let mut params = Vec::new();
    let mut param_types = Vec::new();
    for (index, argument) in function.arguments.iter().enumerate() {
        let name = sanitize(&argument.name);
        let inner = &module.types[argument.ty].inner;
        // `&S` of a device function: a plain pointer to the caller's struct.
        if let (TypeInner::Pointer { base, .. }, false) = (inner, is_kernel) {
            let TypeInner::Struct {
                name: struct_name, ..
            } = &module.types[*base].inner
            else {
                return Err(writer.unsupported(argument.span, "a pointer to a non-struct"));
            };
            let ty = format!("{}*", struct_type_name(struct_name));
            params.push(format!("{ty} %arg{index}.{name}"));
            param_types.push(ty);
            writer
                .arguments
                .push(Value::Scalar(format!("%arg{index}.{name}")));
            continue;
        }
        // Kernel parameters as the argument ABI passes them, one per word.
        let Some(class) = abi::ParamClass::of_ir(inner) else {
            return Err(writer.unsupported(argument.span, "this kernel parameter type"));
        };
        for word in abi::words(class) {
            let (ty, param) = match (word, inner) {
                (ArgWord::BoolByte, _) => {
                    let ty = types::scalar(abi::BOOL_BYTE).to_owned();
                    let param = format!("{ty} %arg{index}.{name}");
                    (ty, param)
                }
                (ArgWord::Value, TypeInner::Scalar(s)) => {
                    let ty = types::scalar(*s).to_owned();
                    let param = format!("{ty} %arg{index}.{name}");
                    (ty, param)
                }
                // By value, as CUDA C++ passes structs: a `byval` pointer to the parameter.
                (
                    ArgWord::Value,
                    TypeInner::Struct {
                        name: struct_name,
                        align,
                        ..
                    },
                ) => {
                    let ty = format!("{}*", struct_type_name(struct_name));
                    let param = format!("{ty} byval align {align} %arg{index}.{name}");
                    (ty, param)
                }
                (ArgWord::SlicePointer { mutable }, TypeInner::Slice { base, .. }) => {
                    let elem = match &module.types[*base].inner {
                        TypeInner::Scalar(elem) => types::memory(*elem).to_owned(),
                        TypeInner::Struct { name, .. } => struct_type_name(name),
                        _ => return Err(writer.unsupported(argument.span, "a slice of this type")),
                    };
                    let ty = format!("{elem}*");
                    let attrs = match (is_kernel, *mutable) {
                        (false, _) => "",
                        (true, true) => "noalias",
                        (true, false) => "noalias readonly",
                    };
                    let param = format!("{ty} {attrs} %arg{index}.{name}.ptr");
                    (ty, param)
                }
                (ArgWord::SliceLength, _) => {
                    let ty = types::scalar(abi::SLICE_LENGTH).to_owned();
                    let param = format!("{ty} %arg{index}.{name}.len");
                    (ty, param)
                }
                _ => return Err(writer.unsupported(argument.span, "this kernel parameter type")),
            };
            params.push(param);
            param_types.push(ty);
        }
        writer.arguments.push(match class {
            abi::ParamClass::Slice { .. } => Value::Slice {
                pointer: format!("%arg{index}.{name}.ptr"),
                length: format!("%arg{index}.{name}.len"),
            },
            abi::ParamClass::Scalar(_) | abi::ParamClass::Value => {
                Value::Scalar(format!("%arg{index}.{name}"))
            }
        });
    }

    // Every local lives in an `alloca` of the entry block; NVVM's mem2reg turns them
    // into registers.
    for (handle, local) in function.locals.iter() {
        let ty = match &module.types[local.ty].inner {
            TypeInner::Scalar(s) => types::scalar(*s).to_owned(),
            TypeInner::Struct { name, .. } => struct_type_name(name),
            TypeInner::Array { base, len } => match module.types[*base].inner {
                TypeInner::Scalar(s) => format!("[{len} x {}]", types::memory(s)),
                _ => return Err(writer.unsupported(local.span, "an array of non-scalars")),
            },
            _ => return Err(writer.unsupported(local.span, "a local variable of this type")),
        };
        let _ = writeln!(
            writer.body,
            "  %local{} = alloca {ty}, align 16",
            handle.index()
        );
    }
    writer.block(&function.body)?;
    if !writer.terminated {
        let fallthrough = match function.result {
            // A device function whose every path returns still needs a terminator here.
            Some(_) => "unreachable",
            None => "ret void",
        };
        writer.line(fallthrough.into());
    }

    let result = match function.result {
        Some(ty) => match &module.types[ty].inner {
            TypeInner::Scalar(s) => types::scalar(*s).to_owned(),
            // A struct (or tuple) is returned as an LLVM aggregate; the call inlines.
            TypeInner::Struct { name, .. } => struct_type_name(name),
            _ => return Err(writer.unsupported(function.span, "this return type")),
        },
        None => "void".to_owned(),
    };
    let linkage = if is_kernel { "" } else { "internal " };
    let text = format!(
        "define {linkage}{result} @{symbol}({}) {{\nentry:\n{}}}\n",
        params.join(", "),
        writer.body
    );
    Ok(WrittenKernel {
        constants: writer.constants,
        text,
        declarations: writer.declarations,
        pointer_type: format!("{result} ({})*", param_types.join(", ")),
    })
}

/// Names from user code, restricted to what LLVM and PTX identifiers accept.
fn sanitize(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

struct Writer<'a> {
    options: &'a WriteOptions,
    /// The function's symbol, to name its constants uniquely.
    symbol: String,
    constants: Vec<String>,
    module: &'a Module,
    function: &'a Function,
    info: &'a FunctionInfo,
    body: String,
    declarations: BTreeSet<String>,
    next_value: u32,
    next_label: u32,
    current_label: String,
    /// Whether the current basic block already ended with a terminator.
    terminated: bool,
    /// Enclosing loops: (id, continue label, exit label).
    loops: Vec<(LoopId, String, String)>,
    arguments: Vec<Value>,
}

impl Writer<'_> {
    fn unsupported(&self, span: Span, what: &str) -> WriteError {
        WriteError {
            function: self.function.name.clone(),
            span,
            what: what.to_owned(),
        }
    }

    fn line(&mut self, instruction: String) {
        let _ = writeln!(self.body, "  {instruction}");
    }

    /// Emits `instruction` producing a new value and returns its name.
    fn value(&mut self, instruction: String) -> String {
        let name = format!("%v{}", self.next_value);
        self.next_value += 1;
        self.line(format!("{name} = {instruction}"));
        name
    }

    fn label(&mut self, stem: &str) -> String {
        let label = format!("{stem}{}", self.next_label);
        self.next_label += 1;
        label
    }

    /// Starts basic block `label`.
    fn start(&mut self, label: &str) {
        let _ = writeln!(self.body, "{label}:");
        self.current_label = label.to_owned();
        self.terminated = false;
    }

    /// Ends the current block with a branch, unless it already ended.
    fn branch(&mut self, target: &str) {
        if !self.terminated {
            self.line(format!("br label %{target}"));
            self.terminated = true;
        }
    }

    /// Code after `break`, `continue` or `return` in the same block is unreachable but
    /// must still sit in a block.
    fn after_terminator(&mut self) {
        self.terminated = true;
        let dead = self.label("dead");
        self.start(&dead);
    }

    fn scalar_of(&self, handle: Handle<Expression>) -> Result<Scalar, WriteError> {
        self.info.type_of(handle).scalar().ok_or_else(|| {
            self.unsupported(
                self.function.expression_span(handle),
                "a non-scalar value here",
            )
        })
    }

    fn declare(&mut self, declaration: String) {
        self.declarations.insert(declaration);
    }

    // ----- expressions -----

    fn expr(&mut self, handle: Handle<Expression>) -> Result<Value, WriteError> {
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
            Expression::ArrayElement { local, index } => {
                let array_ty = self.function.locals[local].ty;
                let TypeInner::Array { base, len } = self.module.types[array_ty].inner else {
                    return Err(self.unsupported(span, "indexing a non-array local"));
                };
                let TypeInner::Scalar(elem) = self.module.types[base].inner else {
                    return Err(self.unsupported(span, "an array of non-scalars"));
                };
                let index_ty = self.scalar_of(index)?;
                let index_value = self.expr(index)?.scalar();
                let index64 = self.widen_to_i64(index_value, index_ty);
                self.bounds_check(&index64, &len.to_string(), span);
                let mem = types::memory(elem);
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

    fn widen_to_i64(&mut self, value: String, ty: Scalar) -> String {
        match ty.bits() {
            64 => value,
            _ if ty.is_signed() => self.value(format!("sext {} {value} to i64", types::scalar(ty))),
            _ => self.value(format!("zext {} {value} to i64", types::scalar(ty))),
        }
    }

    fn binary(&mut self, op: BinaryOp, s: Scalar, l: String, r: String) -> String {
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
    fn logical(
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
    fn packed_pair(
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

    fn cast(&mut self, v: String, from: Scalar, to: Scalar) -> String {
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
    fn float_to_int(&mut self, v: String, from: Scalar, to: Scalar) -> String {
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

    fn call(
        &mut self,
        callee: Handle<Function>,
        arguments: &[Handle<Expression>],
        result: Option<Handle<LocalVariable>>,
    ) -> Result<(), WriteError> {
        let mut operands = Vec::new();
        for argument in arguments {
            match self.expr(*argument)? {
                Value::Slice { pointer, length } => {
                    let ExprType::Slice { base, .. } = self.info.type_of(*argument) else {
                        return Err(self.unsupported(self.function.span, "a slice argument"));
                    };
                    let TypeInner::Scalar(elem) = self.module.types[base].inner else {
                        return Err(self.unsupported(self.function.span, "a slice of non-scalars"));
                    };
                    operands.push(format!("{}* {pointer}", types::memory(elem)));
                    operands.push(format!("i64 {length}"));
                }
                // `&S`: the pointer.
                Value::Scalar(value)
                    if matches!(self.info.type_of(*argument), ExprType::Pointer { .. }) =>
                {
                    let ExprType::Pointer { base, .. } = self.info.type_of(*argument) else {
                        return Err(self.unsupported(self.function.span, "a pointer argument"));
                    };
                    let TypeInner::Struct { name, .. } = &self.module.types[base].inner else {
                        return Err(self.unsupported(self.function.span, "a pointer argument"));
                    };
                    operands.push(format!("{}* {value}", struct_type_name(name)));
                }
                // A struct passes as its address, the callee's `byval` copy, as in C.
                Value::Scalar(value) if self.struct_valued(*argument) => {
                    let ExprType::Value(ty) = self.info.type_of(*argument) else {
                        return Err(self.unsupported(self.function.span, "a struct argument"));
                    };
                    let TypeInner::Struct { name, align, .. } = &self.module.types[ty].inner else {
                        return Err(self.unsupported(self.function.span, "a struct argument"));
                    };
                    operands.push(format!(
                        "{}* byval align {align} {value}",
                        struct_type_name(name)
                    ));
                }
                Value::Scalar(value) => {
                    let s = self.scalar_of(*argument)?;
                    let value = if s == Scalar::Bool {
                        self.value(format!("zext i1 {value} to i8"))
                    } else {
                        value
                    };
                    operands.push(format!("{} {value}", types::memory(s)));
                }
            }
        }
        let symbol = symbol_of(self.module, callee);
        let call = format!("@{symbol}({})", operands.join(", "));
        match self.module.functions[callee].result {
            Some(ty) => {
                let ty = match &self.module.types[ty].inner {
                    TypeInner::Scalar(s) => types::scalar(*s).to_owned(),
                    TypeInner::Struct { name, .. } => struct_type_name(name),
                    _ => return Err(self.unsupported(self.function.span, "this result type")),
                };
                let value = self.value(format!("call {ty} {call}"));
                if let Some(local) = result {
                    self.line(format!("store {ty} {value}, {ty}* %local{}", local.index()));
                }
            }
            None => self.line(format!("call void {call}")),
        }
        Ok(())
    }

    /// A call of an `#[extern_device]` function, declared here and defined by its device
    /// library at link time. Scalars pass as in C: `bool` as an `i8` holding 0 or 1.
    fn call_extern(
        &mut self,
        callee: Handle<ExternFunction>,
        arguments: &[Handle<Expression>],
        result: Option<Handle<LocalVariable>>,
    ) -> Result<(), WriteError> {
        let module = self.module;
        let declared = &module.externs[callee];
        let scalar_of_type = |ty: Handle<Type>| match module.types[ty].inner {
            TypeInner::Scalar(s) => Some(s),
            _ => None,
        };
        let mut parameters = Vec::new();
        for &ty in &declared.arguments {
            let parameter = match &module.types[ty].inner {
                TypeInner::Scalar(s) => types::memory(*s).to_owned(),
                // A struct by value: an LLVM aggregate, as nvcc passes it.
                TypeInner::Struct { name, .. } => struct_type_name(name),
                // `&S`, `&mut [T; N]`: C's `const S*`, `T*`, declared `i8*` (C's `void*`), so
                // two Rust declarations of one symbol with different pointee types (the
                // `[u64; 8]` and `LsaBarrierSession` forms of a barrier session) declare
                // it alike; each argument is cast at the call.
                TypeInner::Pointer { .. } => "i8*".to_owned(),
                _ => {
                    return Err(
                        self.unsupported(self.function.span, "a non-scalar extern parameter")
                    )
                }
            };
            parameters.push(parameter);
        }
        // A struct result is an LLVM aggregate, as nvcc returns a small struct.
        let result_struct = declared
            .result
            .and_then(|ty| match &module.types[ty].inner {
                TypeInner::Struct { name, .. } => Some(struct_type_name(name)),
                _ => None,
            });
        let result_scalar = match declared.result {
            Some(ty) => match (scalar_of_type(ty), &result_struct) {
                (Some(s), _) => Some(s),
                (None, Some(_)) => None,
                (None, None) => {
                    return Err(self.unsupported(self.function.span, "this extern result type"))
                }
            },
            None => None,
        };
        let return_type = match &result_struct {
            Some(name) => name.clone(),
            None => result_scalar.map_or("void", types::memory).to_owned(),
        };
        let symbol = &declared.symbol;
        self.declare(format!(
            "declare {return_type} @{symbol}({})",
            parameters.join(", ")
        ));
        let mut operands = Vec::new();
        for (argument, parameter) in arguments.iter().zip(&parameters) {
            if self.struct_valued(*argument) {
                // Struct values are kept in memory: load the aggregate.
                let address = self.expr(*argument)?.scalar();
                let value = self.value(format!("load {parameter}, {parameter}* {address}"));
                operands.push(format!("{parameter} {value}"));
                continue;
            }
            if parameter == "i8*" {
                let pointee = match self.info.type_of(*argument) {
                    ExprType::Pointer { base, .. } => match &module.types[base].inner {
                        TypeInner::Scalar(s) => types::memory(*s).to_owned(),
                        TypeInner::Struct { name, .. } => struct_type_name(name),
                        _ => {
                            return Err(
                                self.unsupported(self.function.span, "a pointer extern argument")
                            )
                        }
                    },
                    _ => {
                        return Err(
                            self.unsupported(self.function.span, "a pointer extern argument")
                        )
                    }
                };
                let value = self.expr(*argument)?.scalar();
                let cast = self.value(format!("bitcast {pointee}* {value} to i8*"));
                operands.push(format!("i8* {cast}"));
                continue;
            }
            let s = self.scalar_of(*argument)?;
            let value = self.expr(*argument)?.scalar();
            let value = if s == Scalar::Bool {
                self.value(format!("zext i1 {value} to i8"))
            } else {
                value
            };
            operands.push(format!("{parameter} {value}"));
        }
        let call = format!("@{symbol}({})", operands.join(", "));
        if let Some(ty) = &result_struct {
            let value = self.value(format!("call {ty} {call}"));
            if let Some(local) = result {
                self.line(format!("store {ty} {value}, {ty}* %local{}", local.index()));
            }
            return Ok(());
        }
        match result_scalar {
            Some(s) => {
                let value = self.value(format!("call {return_type} {call}"));
                if let Some(local) = result {
                    let (ty, value) = if s == Scalar::Bool {
                        ("i1", self.value(format!("icmp ne i8 {value}, 0")))
                    } else {
                        (types::scalar(s), value)
                    };
                    self.line(format!("store {ty} {value}, {ty}* %local{}", local.index()));
                }
            }
            None => self.line(format!("call void {call}")),
        }
        Ok(())
    }

    /// Whether an expression's value is a struct (kept in memory, handled by address).
    fn struct_valued(&self, handle: Handle<Expression>) -> bool {
        matches!(self.info.type_of(handle), ExprType::Value(ty)
            if matches!(self.module.types[ty].inner, TypeInner::Struct { .. }))
    }

    /// Copies the struct `value` (at `source`) to `target`.
    fn copy_struct(
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

    /// `ptx!`: an `asm sideeffect` call. Operands take the register class of their type
    /// (`r` 32-bit, `l` 64-bit, `f`/`d` floats); integers narrower than 32 bits and `bool`s
    /// travel as 32-bit registers.
    fn inline_ptx(
        &mut self,
        template: &str,
        arguments: &[Handle<Expression>],
        result: Option<Handle<LocalVariable>>,
    ) -> Result<(), WriteError> {
        let class = |s: Scalar| match (s.is_float(), s.bits()) {
            (true, 64) => ("d", "double"),
            (true, _) => ("f", "float"),
            (false, 64) => ("l", "i64"),
            (false, _) => ("r", "i32"),
        };
        let mut constraints = Vec::new();
        let mut operands = Vec::new();
        let result_ty = match result {
            Some(local) => {
                let ty = self.module.types[self.function.locals[local].ty]
                    .inner
                    .scalar();
                let Some(ty) = ty else {
                    return Err(self.unsupported(self.function.span, "a non-scalar `ptx!` result"));
                };
                constraints.push(format!("={}", class(ty).0));
                Some(ty)
            }
            None => None,
        };
        for argument in arguments {
            let ty = self.scalar_of(*argument)?;
            let mut value = self.expr(*argument)?.scalar();
            let (letter, register) = class(ty);
            if !ty.is_float() && ty.bits() < 32 {
                let op = if ty.is_signed() { "sext" } else { "zext" };
                value = self.value(format!("{op} {} {value} to i32", types::scalar(ty)));
            }
            constraints.push(letter.to_owned());
            operands.push(format!("{register} {value}"));
        }
        constraints.push("~{memory}".into());
        let escaped: String = template
            .bytes()
            .map(|b| {
                if b == b'"' || b == b'\\' || !(b.is_ascii_graphic() || b == b' ') {
                    format!("\\{b:02X}")
                } else {
                    (b as char).to_string()
                }
            })
            .collect();
        let call = format!(
            "asm sideeffect \"{escaped}\", \"{}\"({})",
            constraints.join(","),
            operands.join(", ")
        );
        match (result_ty, result) {
            (Some(ty), Some(local)) => {
                let register = class(ty).1;
                let raw = self.value(format!("call {register} {call}"));
                let value = if !ty.is_float() && ty.bits() < 32 {
                    if ty == Scalar::Bool {
                        self.value(format!("icmp ne i32 {raw}, 0"))
                    } else {
                        self.value(format!("trunc i32 {raw} to {}", types::scalar(ty)))
                    }
                } else {
                    raw
                };
                let t = types::scalar(ty);
                self.line(format!("store {t} {value}, {t}* %local{}", local.index()));
            }
            _ => self.line(format!("call void {call}")),
        }
        Ok(())
    }

    /// A module-level constant holding `text` (NUL-terminated), as a generic `i8*`.
    fn string_constant(&mut self, text: &str) -> String {
        let name = format!("@cudajit_str_{}_{}", self.symbol, self.constants.len());
        let mut bytes: Vec<u8> = text.as_bytes().to_vec();
        bytes.push(0);
        let encoded: String = bytes
            .iter()
            .map(|&b| {
                if b.is_ascii_graphic() && b != b'"' && b != b'\\' || b == b' ' {
                    (b as char).to_string()
                } else {
                    format!("\\{b:02X}")
                }
            })
            .collect();
        let n = bytes.len();
        self.constants.push(format!(
            "{name} = private unnamed_addr addrspace(4) constant [{n} x i8] c\"{encoded}\", align 1"
        ));
        let generic = self.value(format!(
            "addrspacecast [{n} x i8] addrspace(4)* {name} to [{n} x i8]*"
        ));
        self.value(format!(
            "getelementptr inbounds [{n} x i8], [{n} x i8]* {generic}, i64 0, i64 0"
        ))
    }

    /// `vprintf(format, arguments)`: arguments are packed into a local buffer with C's
    /// promotions (small integers to `i32`, `f32` to `double`), `bool`s print as
    /// `true`/`false` through `%s`.
    fn print(
        &mut self,
        pieces: &[FormatPiece],
        arguments: &[Handle<Expression>],
    ) -> Result<(), WriteError> {
        let mut values = Vec::new();
        for argument in arguments {
            let ty = self.scalar_of(*argument)?;
            let value = self.expr(*argument)?.scalar();
            values.push((ty, value));
        }
        let mut format = String::new();
        let mut packed: Vec<(String, String)> = Vec::new();
        for piece in pieces {
            match piece {
                FormatPiece::Text(text) => format.push_str(&text.replace('%', "%%")),
                FormatPiece::Arg { index, spec } => {
                    let (ty, value) = values[*index].clone();
                    let mut conversion = String::from("%");
                    if let Some(width) = spec.width {
                        conversion.push_str(&width.to_string());
                    }
                    if let (Some(precision), true) = (spec.precision, ty.is_float()) {
                        conversion.push_str(&format!(".{precision}"));
                    }
                    let (letters, slot) = match ty {
                        Scalar::Bool => {
                            let yes = self.string_constant("true");
                            let no = self.string_constant("false");
                            let pick =
                                self.value(format!("select i1 {value}, i8* {yes}, i8* {no}"));
                            ("s", ("i8*".to_owned(), pick))
                        }
                        Scalar::F32 | Scalar::F16 | Scalar::BF16 => {
                            let wide = self.cast(value, ty, Scalar::F64);
                            ("f", ("double".to_owned(), wide))
                        }
                        Scalar::F64 => ("f", ("double".to_owned(), value)),
                        s if s.bits() == 64 => {
                            let letter = match (spec.hex, s.is_signed()) {
                                (Some(false), _) => "llx",
                                (Some(true), _) => "llX",
                                (None, true) => "lld",
                                (None, false) => "llu",
                            };
                            (letter, ("i64".to_owned(), value))
                        }
                        s => {
                            let wide = if s.bits() < 32 {
                                let op = if s.is_signed() { "sext" } else { "zext" };
                                self.value(format!("{op} {} {value} to i32", types::scalar(s)))
                            } else {
                                value
                            };
                            let letter = match (spec.hex, s.is_signed()) {
                                (Some(false), _) => "x",
                                (Some(true), _) => "X",
                                (None, true) => "d",
                                (None, false) => "u",
                            };
                            (letter, ("i32".to_owned(), wide))
                        }
                    };
                    conversion.push_str(letters);
                    format.push_str(&conversion);
                    packed.push(slot);
                }
            }
        }
        let format_pointer = self.string_constant(&format);
        self.declare("declare i32 @vprintf(i8*, i8*) nounwind".into());
        let buffer = if packed.is_empty() {
            "null".to_owned()
        } else {
            let struct_ty = format!(
                "{{ {} }}",
                packed
                    .iter()
                    .map(|(t, _)| t.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            );
            let storage = self.value(format!("alloca {struct_ty}, align 8"));
            for (field, (ty, value)) in packed.iter().enumerate() {
                let slot = self.value(format!(
                    "getelementptr inbounds {struct_ty}, {struct_ty}* {storage}, i32 0, i32 {field}"
                ));
                self.line(format!("store {ty} {value}, {ty}* {slot}"));
            }
            self.value(format!("bitcast {struct_ty}* {storage} to i8*"))
        };
        self.value(format!(
            "call i32 @vprintf(i8* {format_pointer}, i8* {buffer})"
        ));
        Ok(())
    }

    /// Stops the kernel through CUDA's device-side assertion (`__assertfail`): the driver
    /// prints the message with the kernel, file, line, block and thread, and the host sees
    /// `CUDA_ERROR_ASSERT`.
    fn trap(&mut self, message: &str, span: Span) {
        let message = self.string_constant(message);
        let file = self.options.file.clone();
        let file = self.string_constant(&file);
        let function = self.function.name.clone();
        let function = self.string_constant(&function);
        self.declare("declare void @__assertfail(i8*, i8*, i32, i8*, i64)".into());
        self.line(format!(
            "call void @__assertfail(i8* {message}, i8* {file}, i32 {}, i8* {function}, i64 1)",
            span.line
        ));
    }

    /// With bounds checks on: if `index >= length`, print both and trap.
    fn bounds_check(&mut self, index: &str, length: &str, span: Span) {
        if !self.options.bounds_checks {
            return;
        }
        let outside = self.value(format!("icmp uge i64 {index}, {length}"));
        let fail = self.label("bounds.fail");
        let ok = self.label("bounds.ok");
        self.line(format!("br i1 {outside}, label %{fail}, label %{ok}"));
        self.terminated = true;
        self.start(&fail);
        let text = format!(
            "kernel `{}` ({}:{}:{}): index out of bounds: the len is %llu but the index is %llu\n",
            self.function.name,
            self.options.file,
            span.line,
            span.column + 1
        );
        let format = self.string_constant(&text);
        self.declare("declare i32 @vprintf(i8*, i8*) nounwind".into());
        let storage = self.value("alloca { i64, i64 }, align 8".into());
        let first = self.value(format!(
            "getelementptr inbounds {{ i64, i64 }}, {{ i64, i64 }}* {storage}, i32 0, i32 0"
        ));
        self.line(format!("store i64 {length}, i64* {first}"));
        let second = self.value(format!(
            "getelementptr inbounds {{ i64, i64 }}, {{ i64, i64 }}* {storage}, i32 0, i32 1"
        ));
        self.line(format!("store i64 {index}, i64* {second}"));
        let buffer = self.value(format!("bitcast {{ i64, i64 }}* {storage} to i8*"));
        self.value(format!("call i32 @vprintf(i8* {format}, i8* {buffer})"));
        self.trap("index out of bounds", span);
        self.line("unreachable".into());
        self.terminated = true;
        self.start(&ok);
    }

    /// The element type, LLVM vector type and vector pointer of a vector access.
    fn vector_address(
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

    /// A device intrinsic; returns its value and type, if it has one.
    fn intrinsic(
        &mut self,
        intrinsic: Intrinsic,
        arguments: &[Handle<Expression>],
        span: Span,
    ) -> Result<Option<(String, Scalar)>, WriteError> {
        let mut values = Vec::new();
        for argument in arguments {
            values.push(self.expr(*argument)?.scalar());
        }
        Ok(match intrinsic {
            Intrinsic::SyncThreads => {
                self.declare("declare void @llvm.nvvm.barrier0() convergent nounwind".into());
                self.line("call void @llvm.nvvm.barrier0()".into());
                None
            }
            Intrinsic::Fence(scope) => {
                let name = match scope {
                    FenceScope::Block => "cta",
                    FenceScope::Device => "gl",
                    FenceScope::System => "sys",
                };
                self.declare(format!("declare void @llvm.nvvm.membar.{name}() nounwind"));
                self.line(format!("call void @llvm.nvvm.membar.{name}()"));
                None
            }
            Intrinsic::SharedArray | Intrinsic::DynamicShared | Intrinsic::SliceAt { .. } => {
                return Err(self.unsupported(span, "a shared array as a statement"))
            }
            Intrinsic::Atomic(op, AtomicScope::Device) => {
                let ty = self.scalar_of(arguments[1])?;
                Some((self.atomic(op, ty, &values), ty))
            }
            Intrinsic::Atomic(op, scope) => {
                let ty = self.scalar_of(arguments[1])?;
                Some((self.scoped_atomic(op, scope, ty, &values), ty))
            }
            Intrinsic::Shuffle(mode) => {
                let ty = self.scalar_of(arguments[1])?;
                let value = self.shuffle(mode, ty, &values[0], &values[1], &values[2]);
                Some((value, ty))
            }
            Intrinsic::Vote(op) => {
                let (name, result, ty) = match op {
                    VoteOp::Ballot => ("ballot", "i32", Scalar::U32),
                    VoteOp::All => ("all", "i1", Scalar::Bool),
                    VoteOp::Any => ("any", "i1", Scalar::Bool),
                };
                self.declare(format!(
                    "declare {result} @llvm.nvvm.vote.{name}.sync(i32, i1) convergent nounwind"
                ));
                let value = self.value(format!(
                    "call {result} @llvm.nvvm.vote.{name}.sync(i32 {}, i1 {})",
                    values[0], values[1]
                ));
                Some((value, ty))
            }
            Intrinsic::ActiveMask => {
                let value = self
                    .value("call i32 asm sideeffect \"activemask.b32 $0;\", \"=r\"()".to_owned());
                Some((value, Scalar::U32))
            }
            Intrinsic::VectorLoad(_) | Intrinsic::VectorStore(_) => {
                return Err(self.unsupported(span, "a vector access as an intrinsic statement"))
            }
            Intrinsic::LaneId => {
                self.declare(
                    "declare i32 @llvm.nvvm.read.ptx.sreg.laneid() nounwind readnone".into(),
                );
                let value = self.value("call i32 @llvm.nvvm.read.ptx.sreg.laneid()".into());
                Some((value, Scalar::U32))
            }
        })
    }

    /// A relaxed, device-scope atomic (CUDA's `atomicAdd` and friends). Floats use NVVM's
    /// add intrinsics, or their integer bits for exchange and compare-exchange.
    fn atomic(&mut self, op: AtomicOp, ty: Scalar, values: &[String]) -> String {
        let t = types::scalar(ty);
        let pointer = &values[0];
        if ty.is_float() && matches!(op, AtomicOp::Add | AtomicOp::Sub) {
            let suffix = if ty == Scalar::F32 {
                "f32.p0f32"
            } else {
                "f64.p0f64"
            };
            let name = format!("llvm.nvvm.atomic.load.add.{suffix}");
            self.declare(format!("declare {t} @{name}({t}*, {t}) nounwind"));
            let operand = if op == AtomicOp::Sub {
                self.value(format!("fsub {t} -0.0, {}", values[1]))
            } else {
                values[1].clone()
            };
            return self.value(format!("call {t} @{name}({t}* {pointer}, {t} {operand})"));
        }
        if ty.is_float() {
            // Exchange and compare-exchange move bits: do them on the integer of that width.
            let int = if ty == Scalar::F32 {
                Scalar::U32
            } else {
                Scalar::U64
            };
            let i = types::scalar(int);
            let int_pointer = self.value(format!("bitcast {t}* {pointer} to {i}*"));
            let mut int_values = vec![int_pointer];
            for value in &values[1..] {
                int_values.push(self.value(format!("bitcast {t} {value} to {i}")));
            }
            let old = self.atomic(op, int, &int_values);
            return self.value(format!("bitcast {i} {old} to {t}"));
        }
        if op == AtomicOp::CompareExchange {
            let pair = self.value(format!(
                "cmpxchg {t}* {pointer}, {t} {}, {t} {} monotonic monotonic",
                values[1], values[2]
            ));
            return self.value(format!("extractvalue {{ {t}, i1 }} {pair}, 0"));
        }
        let name = match (op, ty.is_signed()) {
            (AtomicOp::Add, _) => "add",
            (AtomicOp::Sub, _) => "sub",
            (AtomicOp::Min, true) => "min",
            (AtomicOp::Min, false) => "umin",
            (AtomicOp::Max, true) => "max",
            (AtomicOp::Max, false) => "umax",
            (AtomicOp::And, _) => "and",
            (AtomicOp::Or, _) => "or",
            (AtomicOp::Xor, _) => "xor",
            _ => "xchg",
        };
        self.value(format!(
            "atomicrmw {name} {t}* {pointer}, {t} {} monotonic",
            values[1]
        ))
    }

    /// A relaxed atomic at block or system scope, as PTX `atom.cta`/`atom.sys` (LLVM 7 has
    /// no scopes on `atomicrmw`, and NVVM's scoped intrinsics lack the unsigned min/max).
    fn scoped_atomic(
        &mut self,
        op: AtomicOp,
        scope: AtomicScope,
        ty: Scalar,
        values: &[String],
    ) -> String {
        let scope = if scope == AtomicScope::Block {
            "cta"
        } else {
            "sys"
        };
        let t = types::scalar(ty);
        let wide = ty.bits() == 64;
        let (ptx_op, ptx_ty) = match op {
            AtomicOp::Add | AtomicOp::Sub if ty.is_float() => {
                ("add", if wide { "f64" } else { "f32" })
            }
            AtomicOp::Add | AtomicOp::Sub => ("add", if wide { "u64" } else { "u32" }),
            AtomicOp::Min | AtomicOp::Max => {
                let op = if op == AtomicOp::Min { "min" } else { "max" };
                let ty = match (ty.is_signed(), wide) {
                    (true, true) => "s64",
                    (true, false) => "s32",
                    (false, true) => "u64",
                    (false, false) => "u32",
                };
                (op, ty)
            }
            AtomicOp::And => ("and", if wide { "b64" } else { "b32" }),
            AtomicOp::Or => ("or", if wide { "b64" } else { "b32" }),
            AtomicOp::Xor => ("xor", if wide { "b64" } else { "b32" }),
            AtomicOp::Exchange => ("exch", if wide { "b64" } else { "b32" }),
            AtomicOp::CompareExchange => ("cas", if wide { "b64" } else { "b32" }),
        };
        let letter = match (ty.is_float(), wide) {
            (true, true) => "d",
            (true, false) => "f",
            (false, true) => "l",
            (false, false) => "r",
        };
        let address = self.value(format!("ptrtoint {t}* {} to i64", values[0]));
        let mut operands = vec![format!("i64 {address}")];
        let mut value = values[1].clone();
        if op == AtomicOp::Sub {
            value = if ty.is_float() {
                self.value(format!("fsub {t} -0.0, {value}"))
            } else {
                self.value(format!("sub {t} 0, {value}"))
            };
        }
        operands.push(format!("{t} {value}"));
        let (template, constraints) = if op == AtomicOp::CompareExchange {
            operands.push(format!("{t} {}", values[2]));
            (
                format!("atom.{scope}.{ptx_op}.{ptx_ty} $0, [$1], $2, $3;"),
                format!("={letter},l,{letter},{letter},~{{memory}}"),
            )
        } else {
            (
                format!("atom.{scope}.{ptx_op}.{ptx_ty} $0, [$1], $2;"),
                format!("={letter},l,{letter},~{{memory}}"),
            )
        };
        self.value(format!(
            "call {t} asm sideeffect \"{template}\", \"{constraints}\"({})",
            operands.join(", ")
        ))
    }

    /// `shfl.sync` on 32-bit lanes: narrower values are widened, 64-bit values shuffled as
    /// two halves.
    fn shuffle(
        &mut self,
        mode: ShuffleMode,
        ty: Scalar,
        mask: &str,
        value: &str,
        lane: &str,
    ) -> String {
        let (name, clamp) = match mode {
            ShuffleMode::Idx => ("idx", 31),
            ShuffleMode::Up => ("up", 0),
            ShuffleMode::Down => ("down", 31),
            ShuffleMode::Xor => ("bfly", 31),
        };
        let intrinsic = format!("llvm.nvvm.shfl.sync.{name}.i32");
        self.declare(format!(
            "declare i32 @{intrinsic}(i32, i32, i32, i32) convergent nounwind"
        ));
        let t = types::scalar(ty);
        let shuffle32 = |this: &mut Self, v: String| {
            this.value(format!(
                "call i32 @{intrinsic}(i32 {mask}, i32 {v}, i32 {lane}, i32 {clamp})"
            ))
        };
        match (ty.bits(), ty.is_float()) {
            (64, _) => {
                let bits = if ty.is_float() {
                    self.value(format!("bitcast {t} {value} to i64"))
                } else {
                    value.to_owned()
                };
                let low = self.value(format!("trunc i64 {bits} to i32"));
                let high_wide = self.value(format!("lshr i64 {bits}, 32"));
                let high = self.value(format!("trunc i64 {high_wide} to i32"));
                let low = shuffle32(self, low);
                let high = shuffle32(self, high);
                let low = self.value(format!("zext i32 {low} to i64"));
                let high = self.value(format!("zext i32 {high} to i64"));
                let high = self.value(format!("shl i64 {high}, 32"));
                let joined = self.value(format!("or i64 {high}, {low}"));
                if ty.is_float() {
                    self.value(format!("bitcast i64 {joined} to {t}"))
                } else {
                    joined
                }
            }
            (32, true) => {
                let bits = self.value(format!("bitcast float {value} to i32"));
                let moved = shuffle32(self, bits);
                self.value(format!("bitcast i32 {moved} to float"))
            }
            (32, false) => shuffle32(self, value.to_owned()),
            _ if ty == Scalar::F16 => {
                let bits = self.value(format!("bitcast half {value} to i16"));
                let wide = self.value(format!("zext i16 {bits} to i32"));
                let moved = shuffle32(self, wide);
                let narrow = self.value(format!("trunc i32 {moved} to i16"));
                self.value(format!("bitcast i16 {narrow} to half"))
            }
            _ => {
                let wide = self.value(format!("zext {t} {value} to i32"));
                let moved = shuffle32(self, wide);
                self.value(format!("trunc i32 {moved} to {t}"))
            }
        }
    }

    /// A scalar method: libdevice for floating-point functions, LLVM intrinsics and
    /// selects for the integer ones.
    fn math(
        &mut self,
        function: MathFunction,
        argument: Handle<Expression>,
        extra: &[Handle<Expression>],
    ) -> Result<String, WriteError> {
        let s = self.scalar_of(argument)?;
        let ty = types::scalar(s);
        let x = self.expr(argument)?.scalar();
        let mut rest = Vec::new();
        for arg in extra {
            let arg_ty = self.scalar_of(*arg)?;
            let value = self.expr(*arg)?.scalar();
            rest.push(format!("{} {value}", types::scalar(arg_ty)));
        }
        let int = s.is_integer();
        Ok(match function {
            MathFunction::Recip => self.value(format!("fdiv {ty} 1.0, {x}")),
            MathFunction::IsNan => self.value(format!("fcmp uno {ty} {x}, {x}")),
            MathFunction::Abs if int => {
                // PTX `abs`, opaque to LLVM: `i32::MIN.abs()` wraps to `MIN` in Rust, but
                // LLVM 7 treats an `abs` it recognises as never negative (C's `abs(INT_MIN)`
                // is undefined) and folds later comparisons and remainders on that basis,
                // as the CPU simulator's differential tests found.
                let (wide, asm, constraint) = if s.bits() == 64 {
                    (x.clone(), "abs.s64", "l")
                } else if s.bits() == 32 {
                    (x.clone(), "abs.s32", "r")
                } else {
                    (self.value(format!("sext {ty} {x} to i32")), "abs.s32", "r")
                };
                let wide_ty = if s.bits() == 64 { "i64" } else { "i32" };
                let result = self.value(format!(
                    "call {wide_ty} asm \"{asm} $0, $1;\", \"={constraint},{constraint}\"({wide_ty} {wide})"
                ));
                if s.bits() < 32 {
                    self.value(format!("trunc i32 {result} to {ty}"))
                } else {
                    result
                }
            }
            MathFunction::Min | MathFunction::Max if int => {
                let predicate = match (function == MathFunction::Min, s.is_signed()) {
                    (true, true) => "slt",
                    (true, false) => "ult",
                    (false, true) => "sgt",
                    (false, false) => "ugt",
                };
                let y = rest[0]
                    .split_once(' ')
                    .map(|(_, v)| v.to_owned())
                    .unwrap_or_default();
                let pick = self.value(format!("icmp {predicate} {ty} {x}, {y}"));
                self.value(format!("select i1 {pick}, {ty} {x}, {ty} {y}"))
            }
            MathFunction::CountOnes | MathFunction::LeadingZeros | MathFunction::TrailingZeros => {
                let (name, extra_arg) = match function {
                    MathFunction::CountOnes => ("ctpop", ""),
                    MathFunction::LeadingZeros => ("ctlz", ", i1 false"),
                    _ => ("cttz", ", i1 false"),
                };
                let flag = if extra_arg.is_empty() { "" } else { ", i1" };
                self.declare(format!(
                    "declare {ty} @llvm.{name}.{ty}({ty}{flag}) nounwind readnone"
                ));
                let counted =
                    self.value(format!("call {ty} @llvm.{name}.{ty}({ty} {x}{extra_arg})"));
                self.cast(counted, s, Scalar::U32)
            }
            _ => {
                let name = libdevice_name(function, s);
                let mut params = vec![ty.to_owned()];
                params.extend(
                    rest.iter()
                        .map(|r| r.split(' ').next().unwrap_or(ty).to_owned()),
                );
                self.declare(format!(
                    "declare {ty} @{name}({}) nounwind readnone",
                    params.join(", ")
                ));
                let mut operands = vec![format!("{ty} {x}")];
                operands.extend(rest);
                self.value(format!("call {ty} @{name}({})", operands.join(", ")))
            }
        })
    }

    // ----- statements -----

    fn block(&mut self, block: &Block) -> Result<(), WriteError> {
        for (statement, span) in block.iter() {
            self.statement(statement, span)?;
        }
        Ok(())
    }

    fn statement(&mut self, statement: &Statement, span: Span) -> Result<(), WriteError> {
        match statement {
            Statement::LocalStore { local, value } if self.struct_valued(*value) => {
                let source = self.expr(*value)?.scalar();
                self.copy_struct(*value, &source, &format!("%local{}", local.index()))?;
            }
            Statement::Store { pointer, value } if self.struct_valued(*value) => {
                let source = self.expr(*value)?.scalar();
                let target = self.expr(*pointer)?.scalar();
                self.copy_struct(*value, &source, &target)?;
            }
            Statement::LocalStore { local, value } => {
                let s = self.scalar_of(*value)?;
                let v = self.expr(*value)?.scalar();
                let ty = types::scalar(s);
                self.line(format!("store {ty} {v}, {ty}* %local{}", local.index()));
            }
            Statement::Store { pointer, value } => {
                let s = self.scalar_of(*value)?;
                let address = self.expr(*pointer)?.scalar();
                let mut v = self.expr(*value)?.scalar();
                if s == Scalar::Bool {
                    v = self.value(format!("zext i1 {v} to i8"));
                }
                let mem = types::memory(s);
                self.line(format!(
                    "store {mem} {v}, {mem}* {address}, align {}",
                    s.size_bytes()
                ));
            }
            Statement::If {
                condition,
                accept,
                reject,
            } => {
                let c = self.expr(*condition)?.scalar();
                let then = self.label("if.then");
                let otherwise = self.label("if.else");
                let end = self.label("if.end");
                self.line(format!("br i1 {c}, label %{then}, label %{otherwise}"));
                self.terminated = true;
                self.start(&then);
                self.block(accept)?;
                self.branch(&end);
                self.start(&otherwise);
                self.block(reject)?;
                self.branch(&end);
                self.start(&end);
            }
            Statement::Loop {
                id,
                body,
                continuing,
            } => {
                let head = self.label("loop.body");
                let cont = self.label("loop.continue");
                let exit = self.label("loop.exit");
                self.branch(&head);
                self.start(&head);
                self.loops.push((*id, cont.clone(), exit.clone()));
                let result = self.block(body).and_then(|()| {
                    self.branch(&cont);
                    self.start(&cont);
                    self.block(continuing)
                });
                self.loops.pop();
                result?;
                self.branch(&head);
                self.start(&exit);
            }
            Statement::Break { target } | Statement::Continue { target } => {
                let is_break = matches!(statement, Statement::Break { .. });
                let Some((_, cont, exit)) = self.loops.iter().rev().find(|l| l.0 == *target) else {
                    return Err(self.unsupported(span, "a jump to a loop that does not enclose it"));
                };
                let destination = if is_break { exit.clone() } else { cont.clone() };
                self.branch(&destination);
                self.after_terminator();
            }
            Statement::Return { value } => {
                let instruction = match value {
                    Some(value) if self.struct_valued(*value) => {
                        // Struct values live in memory: return the loaded aggregate.
                        let ExprType::Value(ty) = self.info.type_of(*value) else {
                            return Err(self.unsupported(span, "this returned value"));
                        };
                        let TypeInner::Struct { name, align, .. } = &self.module.types[ty].inner
                        else {
                            return Err(self.unsupported(span, "this returned value"));
                        };
                        let t = struct_type_name(name);
                        let address = self.expr(*value)?.scalar();
                        let v = self.value(format!("load {t}, {t}* {address}, align {align}"));
                        format!("ret {t} {v}")
                    }
                    Some(value) => {
                        let s = self.scalar_of(*value)?;
                        let v = self.expr(*value)?.scalar();
                        format!("ret {} {v}", types::scalar(s))
                    }
                    None => "ret void".to_owned(),
                };
                if !self.terminated {
                    self.line(instruction);
                }
                self.after_terminator();
            }
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
            Statement::Print { pieces, arguments } => self.print(pieces, arguments)?,
            Statement::InlinePtx {
                template,
                arguments,
                result,
            } => self.inline_ptx(template, arguments, *result)?,
            Statement::Trap { message } => self.trap(message, span),
            Statement::VectorLoad { pointer, results } => {
                let (elem, vector, address) = self.vector_address(*pointer, results.len())?;
                let t = types::memory(elem);
                let bytes = elem.size_bytes() as usize * results.len();
                if paired_lanes(elem, results.len()) {
                    // The NVPTX back end splits `<8 x i16>` into two 8-byte accesses (and
                    // folds a bitcast of a `<4 x i32>` load back into one): load 16 bytes as
                    // `<4 x i32>`, as CUDA C++ loads a `uint4`, and split each word.
                    let cast = self.value(format!("bitcast {vector}* {address} to <4 x i32>*"));
                    let raw =
                        self.value(format!("load <4 x i32>, <4 x i32>* {cast}, align {bytes}"));
                    for (lane, local) in results.iter().enumerate() {
                        let word =
                            self.value(format!("extractelement <4 x i32> {raw}, i32 {}", lane / 2));
                        let shifted = if lane % 2 == 1 {
                            self.value(format!("lshr i32 {word}, 16"))
                        } else {
                            word
                        };
                        let bits = self.value(format!("trunc i32 {shifted} to i16"));
                        let value = if t == "i16" {
                            bits
                        } else {
                            self.value(format!("bitcast i16 {bits} to {t}"))
                        };
                        self.line(format!("store {t} {value}, {t}* %local{}", local.index()));
                    }
                } else {
                    let loaded =
                        self.value(format!("load {vector}, {vector}* {address}, align {bytes}"));
                    for (lane, local) in results.iter().enumerate() {
                        let value =
                            self.value(format!("extractelement {vector} {loaded}, i32 {lane}"));
                        self.line(format!("store {t} {value}, {t}* %local{}", local.index()));
                    }
                }
            }
            Statement::VectorStore { pointer, values } => {
                let (elem, vector, address) = self.vector_address(*pointer, values.len())?;
                let t = types::memory(elem);
                let bytes = elem.size_bytes() as usize * values.len();
                if paired_lanes(elem, values.len()) {
                    // As the load: two 16-bit lanes per 32-bit word, one 16-byte store.
                    let mut packed = "undef".to_owned();
                    for (word, pair) in values.chunks(2).enumerate() {
                        let both = self.packed_pair(elem, pair[0], pair[1])?;
                        packed = self.value(format!(
                            "insertelement <4 x i32> {packed}, i32 {both}, i32 {word}"
                        ));
                    }
                    let cast = self.value(format!("bitcast {vector}* {address} to <4 x i32>*"));
                    self.line(format!(
                        "store <4 x i32> {packed}, <4 x i32>* {cast}, align {bytes}"
                    ));
                } else {
                    let mut packed = "undef".to_owned();
                    for (lane, value) in values.iter().enumerate() {
                        let v = self.expr(*value)?.scalar();
                        packed = self.value(format!(
                            "insertelement {vector} {packed}, {t} {v}, i32 {lane}"
                        ));
                    }
                    self.line(format!(
                        "store {vector} {packed}, {vector}* {address}, align {bytes}"
                    ));
                }
            }
            Statement::Intrinsic {
                intrinsic,
                arguments,
                result,
            } => {
                let value = self.intrinsic(*intrinsic, arguments, span)?;
                if let (Some(local), Some((value, ty))) = (result, value) {
                    let ty = types::scalar(ty);
                    self.line(format!("store {ty} {value}, {ty}* %local{}", local.index()));
                }
            }
            Statement::Block(inner) => self.block(inner)?,
        }
        Ok(())
    }
}

/// The `icmp`/`fcmp` predicate of a comparison. Float `!=` is unordered (true for NaN),
/// every other float comparison ordered, as in Rust.
fn comparison(op: BinaryOp, s: Scalar) -> &'static str {
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

/// The libdevice function implementing `function` for `ty` (`__nv_sqrtf`, `__nv_sqrt`).
fn libdevice_name(function: MathFunction, ty: Scalar) -> String {
    let base = match function {
        MathFunction::Sqrt => "sqrt",
        MathFunction::Exp => "exp",
        MathFunction::Exp2 => "exp2",
        MathFunction::Ln => "log",
        MathFunction::Log2 => "log2",
        MathFunction::Log10 => "log10",
        MathFunction::Sin => "sin",
        MathFunction::Cos => "cos",
        MathFunction::Tan => "tan",
        MathFunction::Asin => "asin",
        MathFunction::Acos => "acos",
        MathFunction::Atan => "atan",
        MathFunction::Sinh => "sinh",
        MathFunction::Cosh => "cosh",
        MathFunction::Tanh => "tanh",
        MathFunction::Cbrt => "cbrt",
        MathFunction::Floor => "floor",
        MathFunction::Ceil => "ceil",
        MathFunction::Round => "round",
        MathFunction::Trunc => "trunc",
        MathFunction::Powf => "pow",
        MathFunction::Powi => "powi",
        MathFunction::MulAdd => "fma",
        MathFunction::Copysign => "copysign",
        MathFunction::Hypot => "hypot",
        MathFunction::Atan2 => "atan2",
        MathFunction::Abs => "fabs",
        MathFunction::Min => "fmin",
        MathFunction::Max => "fmax",
        MathFunction::Erf => "erf",
        MathFunction::Erfc => "erfc",
        MathFunction::Rsqrt => "rsqrt",
        MathFunction::FastExp => "fast_exp",
        MathFunction::FastSin => "fast_sin",
        MathFunction::FastCos => "fast_cos",
        MathFunction::FastLn => "fast_log",
        MathFunction::FastLog2 => "fast_log2",
        MathFunction::FastDiv => "fast_fdivide",
        // Lowered without libdevice.
        MathFunction::Recip
        | MathFunction::IsNan
        | MathFunction::CountOnes
        | MathFunction::LeadingZeros
        | MathFunction::TrailingZeros => "unreachable",
    };
    let suffix = if ty == Scalar::F32 { "f" } else { "" };
    format!("__nv_{base}{suffix}")
}

/// The dynamic shared memory of a kernel, sized at launch.
pub(super) const DYNAMIC_SHARED: &str = "@cudajit_shared_dynamic";

/// The LLVM name of shared variable `index`.
pub(super) fn shared_global_name(index: usize) -> String {
    format!("@cudajit_shared_{index}")
}

/// The LLVM name of a user struct's type.
pub(super) fn struct_type_name(name: &str) -> String {
    format!("%struct.{}", sanitize(name))
}

/// Whether a vector access of `count` `elem`s moves its 16-bit lanes in pairs, as 32-bit
/// words (see the vector load).
fn paired_lanes(elem: Scalar, count: usize) -> bool {
    elem.size_bytes() == 2 && count == 8
}
