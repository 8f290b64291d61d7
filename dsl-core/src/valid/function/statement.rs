//! The rules of statements and control flow: stores, loops and their `break`/`continue`
//! targets, `continuing` blocks, returns.

use super::Checker;
use crate::ir::{Block, LoopId, Statement, TypeInner};
use crate::valid::error::{ValidationError, ValidationErrorKind as Kind};
use crate::valid::ExprType;
use crate::Scalar;

impl Checker<'_> {
    pub(super) fn block(
        &mut self,
        block: &Block,
        in_continuing: bool,
    ) -> Result<(), ValidationError> {
        for (statement, span) in block.iter() {
            self.statement(statement, in_continuing)
                .map_err(|kind| self.error(span, kind))?;
        }
        Ok(())
    }

    pub(super) fn statement(
        &mut self,
        statement: &Statement,
        in_continuing: bool,
    ) -> Result<(), Kind> {
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
                arguments,
                result,
                op,
                ..
            } => {
                // A typed operation's accumulators are the N/2 registers its shape says.
                if let Some(crate::tensor_op::TensorOp::Wgmma(form)) = op {
                    let accumulators = match arguments.first() {
                        Some(crate::ir::PtxOperand::Array { local, .. }) => {
                            match self.module.types[self.function.locals[*local].ty].inner {
                                TypeInner::Array { len, .. } => Some(len),
                                _ => None,
                            }
                        }
                        _ => None,
                    };
                    if arguments.len() != 4 || accumulators != Some(form.n / 2) {
                        return Err(Kind::Unsupported(format!(
                            "a wgmma m64n{} whose operands are not its {} accumulators, A, B and scale-d",
                            form.n,
                            form.n / 2
                        )));
                    }
                }
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

    pub(super) fn loop_target(&self, target: LoopId, what: &'static str) -> Result<(), Kind> {
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
