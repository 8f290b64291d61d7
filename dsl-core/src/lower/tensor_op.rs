//! A typed tensor-core operation's call lowered: its generic arguments resolved for the
//! specialisation, its operands' shapes read, the operation checked
//! ([`crate::tensor_op::TensorOp::of_call`]) with an error at the call, and its PTX text
//! made from the operation.

use super::*;
use crate::ast::{GenericArg, TensorOpCall};
use crate::ir::PtxOperand;
use crate::tensor_op::{OperandShape, TensorOp, WgmmaInput};

impl Lowerer<'_, '_> {
    /// The operation `call` stands for with `arguments` (lowered from `args`); a `bool`
    /// operand becomes the `u32` the template tests.
    pub(super) fn tensor_op(
        &mut self,
        call: &TensorOpCall,
        args: &[Expr],
        arguments: &mut [PtxOperand],
        span: Span,
    ) -> Result<TensorOp, LowerError> {
        let name = call.name;
        let mut generics = call.generic_args.iter();
        let input = if name.takes_type() {
            match generics.next() {
                Some(GenericArg::Type(ty)) => Some(self.wgmma_input(ty, span)?),
                _ => {
                    return Err(LowerError::new(
                        span,
                        format!(
                            "`{}`'s first generic argument is its element type",
                            name.name()
                        ),
                    ))
                }
            }
        } else {
            None
        };
        let consts = generics
            .map(|arg| self.tensor_op_constant(arg, span))
            .collect::<Result<Vec<u64>, _>>()?;
        let shapes = arguments
            .iter()
            .zip(args)
            .map(|(operand, arg)| self.operand_shape(*operand, arg))
            .collect::<Result<Vec<_>, _>>()?;
        let op = TensorOp::of_call(name, input, &consts, &shapes)
            .map_err(|message| LowerError::new(span, message))?;
        for (operand, shape) in arguments.iter_mut().zip(&shapes) {
            if let (PtxOperand::Value(value), OperandShape::Scalar(Scalar::Bool)) =
                (*operand, shape)
            {
                let widened = Expression::Cast {
                    value,
                    to: Scalar::U32,
                };
                *operand = PtxOperand::Value(self.expr_node(widened, span));
            }
        }
        Ok(op)
    }

    fn wgmma_input(&self, ty: &ast::ValueType, span: Span) -> Result<WgmmaInput, LowerError> {
        let (scalar, name) = match ty {
            ast::ValueType::Struct(name) => (None, name.rsplit("::").next().unwrap_or(name)),
            other => (
                Some(self.program.library.scalar(self.spec, other, span)?),
                "",
            ),
        };
        WgmmaInput::of_type(scalar, name).ok_or_else(|| {
            let given = scalar.map_or_else(|| format!("`{name}`"), |s| format!("`{s}`"));
            LowerError::new(
                span,
                format!("a `wgmma` multiplies `bf16`, `f16`, `E4m3` or `E5m2` elements (`cudajit::tensor::wgmma::{{E4m3, E5m2}}`), not {given}"),
            )
        })
    }

    fn tensor_op_constant(&self, arg: &GenericArg, span: Span) -> Result<u64, LowerError> {
        let literal = match arg {
            GenericArg::Const(expr) => match &expr.kind {
                ExprKind::Lit(ast::Literal::Int { value, .. }) => Some(Literal::Int {
                    bits: *value,
                    ty: Scalar::U32,
                }),
                ExprKind::Lit(ast::Literal::Bool(b)) => Some(Literal::Bool(*b)),
                ExprKind::Var(name) => match self.scopes.lookup(name) {
                    Some(Binding::Constant(value)) => Some(value),
                    _ => None,
                },
                _ => None,
            },
            GenericArg::Type(_) => None,
        };
        match literal {
            Some(Literal::Int { bits, .. }) => Ok(bits),
            Some(Literal::Bool(b)) => Ok(u64::from(b)),
            _ => Err(LowerError::new(
                span,
                "a tensor-core operation's const arguments are literals, const generics or module constants",
            )),
        }
    }

    fn operand_shape(&self, operand: PtxOperand, arg: &Expr) -> Result<OperandShape, LowerError> {
        match operand {
            PtxOperand::Array { local, read_write } => {
                let ty = self.function.locals[local].ty;
                let types = &self.program.module.types;
                let TypeInner::Array { base, len } = types[ty].inner else {
                    return Err(LowerError::new(
                        arg.span,
                        "internal: a register list that is no array",
                    ));
                };
                let element = types[base].inner.scalar().ok_or_else(|| {
                    LowerError::new(arg.span, "a register array's elements are scalars")
                })?;
                Ok(OperandShape::Array {
                    element,
                    len,
                    read_write,
                })
            }
            PtxOperand::Value(_) => {
                let scalar = self.types.expr(arg).ok_or_else(|| {
                    LowerError::new(
                        arg.span,
                        "this operand of a tensor-core operation is not a scalar",
                    )
                })?;
                Ok(OperandShape::Scalar(scalar))
            }
        }
    }
}
