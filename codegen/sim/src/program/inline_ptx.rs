//! `ptx!` statements: the operands bound to frame registers, then the template lowered by
//! [`crate::ptx::lower`].
//!
//! Operand numbers are the NVVM writer's: the result's (one per tuple field) first, then
//! one per argument, a register array's number standing for all its elements. Values that
//! live in local memory (tuple results, register arrays) go through registers: arrays are
//! loaded before the instruction, and tuple fields and `&mut` arrays stored after it, which
//! is what the GPU's registers hold as well.

use cudajit_core::ir::{Handle, LocalVariable, PtxOperand, TypeInner};
use cudajit_core::tensor_op::TensorOp;
use cudajit_core::Scalar;

use super::{Builtin, CompileResult, FunctionCompiler, LocalSlot, Op, Reg};
use lower::Emit;

mod lower;
mod template;

/// A register to store where the `ptx!` puts it, once the template has run.
struct Writeback {
    /// The register holding the address (a frame local's, computed before the template).
    pointer: Reg,
    value: Reg,
    size: u32,
}

impl FunctionCompiler<'_> {
    pub(super) fn inline_ptx(
        &mut self,
        template: &str,
        op: Option<&TensorOp>,
        arguments: &[PtxOperand],
        result: Option<Handle<LocalVariable>>,
    ) -> CompileResult<()> {
        let mut operands: Vec<Vec<Reg>> = Vec::new();
        let mut writebacks = Vec::new();
        let mut masked_results = Vec::new();
        if let Some(local) = result {
            match self.locals[local.index()] {
                LocalSlot::Register(reg) => {
                    let ty = self.function.locals[local].ty;
                    if let Some(scalar) = self.module.types[ty].inner.scalar() {
                        masked_results.push((reg, scalar));
                    }
                    operands.push(vec![reg]);
                }
                LocalSlot::Struct { .. } => {
                    let ty = self.function.locals[local].ty;
                    let TypeInner::Struct { members, .. } = &self.module.types[ty].inner else {
                        return self.unsupported("a `ptx!` result that is not a tuple of scalars");
                    };
                    let fields: Vec<(u32, Option<Scalar>)> = members
                        .iter()
                        .map(|m| (m.offset, self.module.types[m.ty].inner.scalar()))
                        .collect();
                    for (offset, scalar) in fields {
                        let Some(scalar) = scalar else {
                            return self.unsupported("a `ptx!` tuple with a non-scalar element");
                        };
                        let base = self.register(1);
                        self.struct_local(local, base)?;
                        let at = self.constant(u64::from(offset));
                        let pointer = self.register(1);
                        self.emit(Op::PointerElement {
                            dst: pointer,
                            base,
                            index: at,
                            size: 1,
                        });
                        let value = self.register(1);
                        operands.push(vec![value]);
                        writebacks.push(Writeback {
                            pointer,
                            value,
                            size: scalar.size_bytes(),
                        });
                    }
                }
                LocalSlot::Array { .. } => return self.unsupported("an array `ptx!` result"),
            }
        }
        for argument in arguments {
            match *argument {
                PtxOperand::Value(value) => {
                    let scalar = self.scalar_of(value)?;
                    let reg = self.expr(value)?;
                    operands.push(vec![self.widened(reg, scalar)?]);
                }
                PtxOperand::Array { local, read_write } => {
                    let LocalSlot::Array { offset, len, size } = self.locals[local.index()] else {
                        return self.unsupported("a register array that is not a local array");
                    };
                    let mut registers = Vec::with_capacity(len as usize);
                    for i in 0..len {
                        let index = self.constant(u64::from(i));
                        let pointer = self.register(1);
                        self.emit(Op::ArrayElement {
                            dst: pointer,
                            offset,
                            len,
                            index,
                            size,
                        });
                        let value = self.register(1);
                        self.emit(Op::Load {
                            dst: value,
                            pointer,
                            size,
                            mask: u64::MAX,
                        });
                        registers.push(value);
                        if read_write {
                            writebacks.push(Writeback {
                                pointer,
                                value,
                                size,
                            });
                        }
                    }
                    operands.push(registers);
                }
            }
        }
        let span = self.span;
        match op {
            // A typed operation runs as itself; only `ptx!` text is read.
            Some(op) => lower::lower_typed(op, &operands, self),
            None => lower::lower(template, &operands, self),
        }
        .map_err(|what| (span, what))?;
        // A register result holds the bits of its type only, as every register does.
        for (reg, scalar) in masked_results {
            if scalar.bits() < 64 {
                let mask = self.constant(crate::value::canonical(u64::MAX, scalar));
                self.emit(Op::Binary {
                    f: |value, mask| value & mask,
                    dst: reg,
                    a: reg,
                    b: mask,
                });
            }
        }
        for writeback in writebacks {
            self.emit(Op::Store {
                pointer: writeback.pointer,
                src: writeback.value,
                size: writeback.size,
            });
        }
        Ok(())
    }

    /// A `ptx!` input as its 32-bit register: the writer sign-extends signed integers
    /// narrower than 32 bits (registers hold them zero-extended).
    fn widened(&mut self, reg: Reg, scalar: Scalar) -> CompileResult<Reg> {
        if !(scalar.is_signed() && scalar.bits() < 32) {
            return Ok(reg);
        }
        let Some(f) = crate::value::cast_fn(scalar, Scalar::I32) else {
            return self.unsupported(format!("a `{scalar}` operand of `ptx!`"));
        };
        let dst = self.register(1);
        self.emit(Op::Unary { f, dst, a: reg });
        Ok(dst)
    }
}

impl Emit for FunctionCompiler<'_> {
    fn register(&mut self) -> Reg {
        FunctionCompiler::register(self, 1)
    }

    fn constant(&mut self, bits: u64) -> Reg {
        FunctionCompiler::constant(self, bits)
    }

    fn builtin(&mut self, builtin: Builtin) -> Reg {
        FunctionCompiler::builtin(self, builtin)
    }

    fn emit(&mut self, op: Op) {
        FunctionCompiler::emit(self, op);
    }
}
