//! Writing one function: its signature and locals, the statements and structured control
//! flow of its body, and the writer's state and helpers the other parts share.

use std::collections::BTreeSet;
use std::fmt::Write;

use cudajit_core::abi::{self, ArgWord};
use cudajit_core::ir::{Block, Expression, Function, Handle, LoopId, Module, Statement, TypeInner};
use cudajit_core::valid::{ExprType, FunctionInfo};
use cudajit_core::{Scalar, Span};

use super::types;
use super::{ExternCall, WriteOptions};

/// IR the writer cannot express yet. Validated IR from the current front end never
/// produces it; it names the construct so the gap is clear.
#[derive(Clone, PartialEq, Eq, thiserror::Error, cudajit_error_debug::ReadableDebug)]
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
    /// The `#[extern_device]` functions it calls.
    pub externs: BTreeSet<ExternCall>,
    /// Its function pointer type, for metadata (`void (float, float*)*`).
    pub pointer_type: String,
    /// The 1-based positions of its `grid_constant` parameters (tensor maps), for
    /// `!nvvm.annotations`.
    pub grid_constant: Vec<usize>,
}

/// The LLVM type of a tensor map: `CUtensorMap`'s sixteen 64-bit words.
pub(super) const TENSOR_MAP_TYPE: &str = "%cudajit.TensorMap";

/// A value of the kernel: a scalar operand, or a slice's pointer and length.
#[derive(Clone, Debug)]
pub(super) enum Value {
    Scalar(String),
    Slice { pointer: String, length: String },
}

impl Value {
    pub(super) fn scalar(self) -> String {
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
        externs: BTreeSet::new(),
        next_value: 0,
        next_label: 0,
        current_label: "entry".into(),
        terminated: false,
        loops: Vec::new(),
        arguments: Vec::new(),
        argument_copies: Vec::new(),
        statement_span: function.span,
    };
    let mut params = Vec::new();
    let mut param_types = Vec::new();
    let mut grid_constant = Vec::new();
    for (index, argument) in function.arguments.iter().enumerate() {
        let name = sanitize(&argument.name);
        let inner = &module.types[argument.ty].inner;
        // `&S` of a device function: a plain pointer to the caller's struct; an array
        // parameter (`[f32; 4]`, `&mut [f32; 16]`, a result array): a pointer to the array.
        if let (TypeInner::Pointer { base, .. }, false) = (inner, is_kernel) {
            let ty = match &module.types[*base].inner {
                TypeInner::Struct {
                    name: struct_name, ..
                } => format!("{}*", struct_type_name(struct_name)),
                TypeInner::Array { .. } => match super::member_layout(module, *base) {
                    Some((array, _, _)) => format!("{array}*"),
                    None => return Err(writer.unsupported(argument.span, "an array of this type")),
                },
                // `&mut f32`: a pointer to the caller's scalar (a local's `alloca`, a slice
                // element, a field), in memory's type.
                TypeInner::Scalar(s) => format!("{}*", types::memory(*s)),
                _ => return Err(writer.unsupported(argument.span, "a pointer to this type")),
            };
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
                // By value, as CUDA C++ passes structs: a kernel's is a `byval` pointer to
                // the parameter; a device function's a pointer to the copy its caller made
                // for the call (`call.rs`), which it only reads (a `mut` parameter is
                // copied to a local), so inlining leaves no copy SROA cannot remove.
                (
                    ArgWord::Value,
                    TypeInner::Struct {
                        name: struct_name,
                        align,
                        ..
                    },
                ) => {
                    let ty = format!("{}*", struct_type_name(struct_name));
                    let param = match is_kernel {
                        true => format!("{ty} byval align {align} %arg{index}.{name}"),
                        false => format!("{ty} noalias readonly align {align} %arg{index}.{name}"),
                    };
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
                // As CUDA C++ passes `const __grid_constant__ CUtensorMap`: a `byval` pointer
                // to the parameter, which `grid_constant` keeps in parameter memory, so its
                // address is `cvta.param`'s generic address, not a copy's.
                (ArgWord::TensorMap, TypeInner::TensorMap) => {
                    grid_constant.push(params.len() + 1);
                    let ty = format!("{TENSOR_MAP_TYPE}*");
                    let align = abi::TENSOR_MAP_ALIGN;
                    let param = format!("{ty} byval align {align} %arg{index}.{name}");
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
            abi::ParamClass::Scalar(_) | abi::ParamClass::Value | abi::ParamClass::TensorMap => {
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
            // Arrays of scalars, structs and arrays (`[4 x [4 x float]]`).
            TypeInner::Array { .. } => match super::member_layout(module, local.ty) {
                Some((array, _, _)) => array,
                None => return Err(writer.unsupported(local.span, "an array of this type")),
            },
            _ => return Err(writer.unsupported(local.span, "a local variable of this type")),
        };
        let _ = writeln!(
            writer.body,
            "  %local{} = alloca {ty}, align 16",
            handle.index()
        );
    }
    let copies_at = writer.body.len();
    writer.block(&function.body)?;
    let copies = writer.argument_copies.concat();
    writer.body.insert_str(copies_at, &copies);
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
        externs: writer.externs,
        pointer_type: format!("{result} ({})*", param_types.join(", ")),
        grid_constant,
    })
}

/// Names from user code, restricted to what LLVM and PTX identifiers accept.
pub(super) fn sanitize(name: &str) -> String {
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

pub(super) struct Writer<'a> {
    pub(super) options: &'a WriteOptions,
    /// The function's symbol, to name its constants uniquely.
    pub(super) symbol: String,
    pub(super) constants: Vec<String>,
    pub(super) module: &'a Module,
    pub(super) function: &'a Function,
    pub(super) info: &'a FunctionInfo,
    pub(super) body: String,
    pub(super) declarations: BTreeSet<String>,
    /// The `#[extern_device]` functions called so far.
    pub(super) externs: BTreeSet<ExternCall>,
    pub(super) next_value: u32,
    pub(super) next_label: u32,
    pub(super) current_label: String,
    /// Whether the current basic block already ended with a terminator.
    pub(super) terminated: bool,
    /// Enclosing loops: (id, continue label, exit label).
    pub(super) loops: Vec<(LoopId, String, String)>,
    pub(super) arguments: Vec<Value>,
    /// The entry block's `alloca`s of the copies of structs passed by value to device
    /// functions (`call.rs`), spliced in after the locals' when the function is done.
    pub(super) argument_copies: Vec<String>,
    /// The span of the statement being written: where a check inside an expression of
    /// unknown span is reported, as the simulator does.
    pub(super) statement_span: Span,
}

impl Writer<'_> {
    pub(super) fn unsupported(&self, span: Span, what: &str) -> WriteError {
        WriteError {
            function: self.function.name.clone(),
            span,
            what: what.to_owned(),
        }
    }

    pub(super) fn line(&mut self, instruction: String) {
        let _ = writeln!(self.body, "  {instruction}");
    }

    /// Emits `instruction` producing a new value and returns its name.
    pub(super) fn value(&mut self, instruction: String) -> String {
        let name = format!("%v{}", self.next_value);
        self.next_value += 1;
        self.line(format!("{name} = {instruction}"));
        name
    }

    pub(super) fn label(&mut self, stem: &str) -> String {
        let label = format!("{stem}{}", self.next_label);
        self.next_label += 1;
        label
    }

    /// Starts basic block `label`.
    pub(super) fn start(&mut self, label: &str) {
        let _ = writeln!(self.body, "{label}:");
        self.current_label = label.to_owned();
        self.terminated = false;
    }

    /// Ends the current block with a branch, unless it already ended.
    pub(super) fn branch(&mut self, target: &str) {
        if !self.terminated {
            self.line(format!("br label %{target}"));
            self.terminated = true;
        }
    }

    /// Code after `break`, `continue` or `return` in the same block is unreachable but
    /// must still sit in a block.
    pub(super) fn after_terminator(&mut self) {
        self.terminated = true;
        let dead = self.label("dead");
        self.start(&dead);
    }

    pub(super) fn scalar_of(&self, handle: Handle<Expression>) -> Result<Scalar, WriteError> {
        self.info.type_of(handle).scalar().ok_or_else(|| {
            self.unsupported(
                self.function.expression_span(handle),
                "a non-scalar value here",
            )
        })
    }

    pub(super) fn declare(&mut self, declaration: String) {
        self.declarations.insert(declaration);
    }

    pub(super) fn block(&mut self, block: &Block) -> Result<(), WriteError> {
        for (statement, span) in block.iter() {
            let enclosing = std::mem::replace(&mut self.statement_span, span);
            let written = self.statement(statement, span);
            self.statement_span = enclosing;
            written?;
        }
        Ok(())
    }

    pub(super) fn statement(
        &mut self,
        statement: &Statement,
        span: Span,
    ) -> Result<(), WriteError> {
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
            // A typed tensor-core operation's template is the operation's PTX.
            Statement::InlinePtx {
                template,
                arguments,
                result,
                ..
            } => self.inline_ptx(template, arguments, *result)?,
            Statement::Trap { message } => self.trap(message, span),
            Statement::VectorLoad { pointer, results } => {
                let (elem, vector, address) = self.vector_address(*pointer, results.len())?;
                let t = types::memory(elem);
                let bytes = elem.size_bytes() as usize * results.len();
                if types::paired_lanes(elem, results.len()) {
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
                if types::paired_lanes(elem, values.len()) {
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
