//! Writing calls: of `#[device]` functions (internal, inlined by libNVVM) and of
//! `#[extern_device]` functions (declared here, defined by a device library at link time).

use cudajit_core::ir::{
    Expression, ExternFunction, Function, Handle, LocalVariable, Type, TypeInner,
};
use cudajit_core::valid::ExprType;
use cudajit_core::Scalar;

use super::function::{struct_type_name, symbol_of, Value, WriteError, Writer};
use super::types;
use super::ExternCall;

impl Writer<'_> {
    pub(super) fn call(
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
                    // The element's memory type, as the callee's parameter has it
                    // (`function.rs`): a scalar's, or a struct's (`&[Body]`).
                    let elem = match &self.module.types[base].inner {
                        TypeInner::Scalar(elem) => types::memory(*elem).to_owned(),
                        TypeInner::Struct { name, .. } => struct_type_name(name),
                        _ => return Err(self.unsupported(self.function.span, "a slice of arrays")),
                    };
                    operands.push(format!("{elem}* {pointer}"));
                    operands.push(format!("i64 {length}"));
                }
                // `&S`: the pointer.
                Value::Scalar(value)
                    if matches!(self.info.type_of(*argument), ExprType::Pointer { .. }) =>
                {
                    let ExprType::Pointer { base, .. } = self.info.type_of(*argument) else {
                        return Err(self.unsupported(self.function.span, "a pointer argument"));
                    };
                    let pointee = match &self.module.types[base].inner {
                        TypeInner::Struct { name, .. } => struct_type_name(name),
                        // An array parameter's pointer (`arrays.rs` of the language).
                        TypeInner::Array { .. } => match super::member_layout(self.module, base) {
                            Some((array, _, _)) => array,
                            None => {
                                return Err(
                                    self.unsupported(self.function.span, "an array argument")
                                )
                            }
                        },
                        // `&mut x` for a `&mut f32` parameter (never a `bool`: refused).
                        TypeInner::Scalar(s) => types::memory(*s).to_owned(),
                        _ => return Err(self.unsupported(self.function.span, "a pointer argument")),
                    };
                    operands.push(format!("{pointee}* {value}"));
                }
                // A struct passes by value as C passes it: a copy made here, in an `alloca`
                // of the entry block, whose address the callee reads. (A `byval` copy,
                // which LLVM 7's inliner makes with a `memcpy`, left a byte loop through
                // local memory for structs holding arrays.)
                Value::Scalar(value) if self.struct_valued(*argument) => {
                    let ExprType::Value(ty) = self.info.type_of(*argument) else {
                        return Err(self.unsupported(self.function.span, "a struct argument"));
                    };
                    let TypeInner::Struct { name, align, .. } = &self.module.types[ty].inner else {
                        return Err(self.unsupported(self.function.span, "a struct argument"));
                    };
                    let t = struct_type_name(name);
                    let copy = format!("%argument.copy{}", self.argument_copies.len());
                    self.argument_copies
                        .push(format!("  {copy} = alloca {t}, align {align}\n"));
                    self.copy_struct(*argument, &value, &copy)?;
                    operands.push(format!("{t}* {copy}"));
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
    pub(super) fn call_extern(
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
        self.externs.insert(ExternCall {
            function: declared.name.clone(),
            symbol: symbol.clone(),
        });
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
}
