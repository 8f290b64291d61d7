//! Compiling statements: stores, control flow (jumps to labels bound later), calls,
//! returns, `print!` and `ptx!`.

use cudajit_core::ir::{Block, Expression, Handle, Statement, TypeInner};
use cudajit_core::valid::ExprType;

use crate::externs::MAX_EXTERN_ARGS;

use super::{CompileResult, FunctionCompiler, LocalSlot, Op, PrintFormat, Reg};

impl FunctionCompiler<'_> {
    pub(super) fn block(&mut self, block: &Block) -> CompileResult<()> {
        for (statement, span) in block.iter() {
            let saved = std::mem::replace(&mut self.span, span);
            let result = self.statement(statement);
            self.span = saved;
            result?;
        }
        Ok(())
    }

    pub(super) fn statement(&mut self, statement: &Statement) -> CompileResult<()> {
        match statement {
            // A scalar whose address is taken: written to the frame.
            Statement::LocalStore { local, value }
                if matches!(self.locals[local.index()], LocalSlot::Struct { .. })
                    && self.module.types[self.function.locals[*local].ty]
                        .inner
                        .scalar()
                        .is_some() =>
            {
                let s = self.scalar_of(*value)?;
                let src = self.expr(*value)?;
                let pointer = self.register(1);
                self.struct_local(*local, pointer)?;
                self.emit(Op::Store {
                    pointer,
                    src,
                    size: s.size_bytes(),
                });
            }
            Statement::LocalStore { local, value }
                if matches!(self.locals[local.index()], LocalSlot::Struct { .. }) =>
            {
                let src = self.expr(*value)?;
                let dst = self.register(1);
                let size = self.struct_local(*local, dst)?;
                self.emit(Op::CopyBytes { dst, src, size });
            }
            Statement::Store { pointer, value } if self.struct_size(*value).is_some() => {
                let size = self.struct_size(*value).unwrap_or_default();
                let dst = self.expr(*pointer)?;
                let src = self.expr(*value)?;
                self.emit(Op::CopyBytes { dst, src, size });
            }
            Statement::LocalStore { local, value } => {
                let reg = self.local_register(*local)?;
                let width = self.width_of(self.info.type_of(*value));
                let single = width == 1
                    && matches!(
                        self.function.expressions[*value],
                        Expression::Load { .. }
                            | Expression::Unary { .. }
                            | Expression::Binary { .. }
                            | Expression::Cast { .. }
                            | Expression::Math { .. }
                            | Expression::ElementPointer { .. }
                            | Expression::ArrayElement { .. }
                            | Expression::MemberElement { .. }
                    );
                let src = self.expr_into(*value, single.then_some(reg))?;
                if src != reg {
                    self.emit(Op::Copy { dst: reg, src });
                    if width == 2 {
                        self.emit(Op::Copy {
                            dst: reg + 1,
                            src: src + 1,
                        });
                    }
                }
            }
            Statement::Store { pointer, value } => {
                let s = self.scalar_of(*value)?;
                let pointer = self.expr(*pointer)?;
                let src = self.expr(*value)?;
                self.emit(Op::Store {
                    pointer,
                    src,
                    size: s.size_bytes(),
                });
            }
            Statement::If {
                condition,
                accept,
                reject,
            } => {
                if let Some(known) = super::constant::known_condition(self.function, *condition) {
                    return self.block(if known { accept } else { reject });
                }
                let cond = self.expr(*condition)?;
                let otherwise = self.label();
                let end = self.label();
                self.jump_if(cond, false, otherwise);
                self.block(accept)?;
                if !reject.is_empty() {
                    self.jump(end);
                }
                self.bind(otherwise);
                self.block(reject)?;
                self.bind(end);
            }
            Statement::Loop {
                id,
                body,
                continuing,
            } => {
                let head = self.label();
                let cont = self.label();
                let exit = self.label();
                self.bind(head);
                self.loops.push((*id, cont, exit));
                let result = self.block(body).and_then(|()| {
                    self.bind(cont);
                    self.block(continuing)
                });
                self.loops.pop();
                result?;
                self.jump(head);
                self.bind(exit);
            }
            Statement::Break { target } | Statement::Continue { target } => {
                let Some(&(_, cont, exit)) = self.loops.iter().rev().find(|l| l.0 == *target)
                else {
                    return self.unsupported("a jump to a loop that does not enclose it");
                };
                let to = if matches!(statement, Statement::Break { .. }) {
                    exit
                } else {
                    cont
                };
                self.jump(to);
            }
            Statement::Return { value } => {
                let value = value.map(|v| self.expr(v)).transpose()?;
                self.emit(Op::Return { value });
            }
            Statement::Block(inner) => self.block(inner)?,
            Statement::Call {
                function,
                arguments,
                result,
            } => {
                let mut args = Vec::new();
                for argument in arguments {
                    let width = self.width_of(self.info.type_of(*argument));
                    let reg = self.expr(*argument)?;
                    args.extend((0..width).map(|k| reg + k));
                }
                // A struct result comes back as a pointer into the callee's finished
                // frame, copied into the local before anything else can reuse it.
                let struct_result =
                    result.filter(|l| matches!(self.locals[l.index()], LocalSlot::Struct { .. }));
                let register = match (result, struct_result) {
                    (_, Some(_)) => Some(self.register(1)),
                    (Some(local), None) => Some(self.local_register(*local)?),
                    (None, _) => None,
                };
                self.emit(Op::Call {
                    function: function.index() as u32,
                    args: args.into(),
                    result: register,
                });
                if let (Some(local), Some(src)) = (struct_result, register) {
                    let dst = self.register(1);
                    let size = self.struct_local(local, dst)?;
                    self.emit(Op::CopyBytes { dst, src, size });
                }
            }
            Statement::VectorLoad { pointer, results } => {
                let size = self.pointee(*pointer)?.size_bytes();
                let pointer = self.vector_pointer(*pointer, results.len() as u32)?;
                let results = results
                    .iter()
                    .map(|l| self.local_register(*l))
                    .collect::<CompileResult<Vec<_>>>()?;
                self.emit(Op::VectorLoad {
                    pointer,
                    results: results.into(),
                    size,
                });
            }
            Statement::VectorStore { pointer, values } => {
                let size = self.pointee(*pointer)?.size_bytes();
                let pointer = self.vector_pointer(*pointer, values.len() as u32)?;
                let values = values
                    .iter()
                    .map(|v| self.expr(*v))
                    .collect::<CompileResult<Vec<_>>>()?;
                self.emit(Op::VectorStore {
                    pointer,
                    values: values.into(),
                    size,
                });
            }
            Statement::InlinePtx {
                template,
                arguments,
                result,
                op,
            } => self.inline_ptx(template, op.as_ref(), arguments, *result)?,
            Statement::CallExtern {
                function,
                arguments,
                result,
            } => {
                let declaration = &self.module.externs[*function];
                if arguments.len() > MAX_EXTERN_ARGS {
                    return self.unsupported(format!(
                        "an extern function of more than {MAX_EXTERN_ARGS} parameters"
                    ));
                }
                let result_scalar = match declaration.result {
                    Some(ty) => match self.module.types[ty].inner {
                        TypeInner::Scalar(s) => Some(s),
                        _ => return self.unsupported("an extern function returning a non-scalar"),
                    },
                    None => None,
                };
                let mut args = Vec::new();
                for argument in arguments {
                    if self.width_of(self.info.type_of(*argument)) != 1 {
                        return self.unsupported("a slice passed to an extern function");
                    }
                    args.push(self.expr(*argument)?);
                }
                let result = match (result, result_scalar) {
                    (Some(local), Some(scalar)) => Some((self.local_register(*local)?, scalar)),
                    _ => None,
                };
                self.emit(Op::CallExtern {
                    function: function.index() as u32,
                    args: args.into(),
                    result,
                });
            }
            Statement::Print { pieces, arguments } => {
                let mut types = Vec::new();
                let mut args = Vec::new();
                for argument in arguments {
                    types.push(self.scalar_of(*argument)?);
                    args.push(self.expr(*argument)?);
                }
                self.program.formats.push(PrintFormat {
                    pieces: pieces.clone(),
                    types,
                });
                let format = (self.program.formats.len() - 1) as u32;
                self.emit(Op::Print {
                    format,
                    args: args.into(),
                });
            }
            Statement::Trap { message } => {
                self.program.messages.push(message.clone());
                let message = (self.program.messages.len() - 1) as u32;
                self.emit(Op::Trap { message });
            }
            Statement::Intrinsic {
                intrinsic,
                arguments,
                result,
            } => self.intrinsic(*intrinsic, arguments, *result)?,
        }
        Ok(())
    }

    /// The pointer of a vector access of `count` elements, checked to lie within its slice
    /// when it is a slice's element.
    pub(super) fn vector_pointer(
        &mut self,
        pointer: Handle<Expression>,
        count: u32,
    ) -> CompileResult<Reg> {
        match self.function.expressions[pointer] {
            Expression::ElementPointer { base, index }
                if matches!(self.info.type_of(base), ExprType::Slice { .. }) =>
            {
                self.element_pointer(pointer, base, index, count, None)
            }
            _ => self.expr(pointer),
        }
    }
}
