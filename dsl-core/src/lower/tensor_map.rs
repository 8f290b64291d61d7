//! `tensor_map_address(&map)`: the address of a kernel's tensor-map parameter.
//!
//! The map stays in the kernel's parameter memory, where the launch put it (the NVVM
//! writer marks the parameter `grid_constant`), so its address is a value of the whole
//! kernel: an expression, not a statement. Inference has checked that the argument is
//! `&map` of a `map: TensorMap` parameter.

use super::*;

impl Lowerer<'_, '_> {
    pub(super) fn tensor_map_address(
        &mut self,
        args: &[Expr],
        span: Span,
    ) -> Result<Handle<Expression>, LowerError> {
        let argument = match args {
            [Expr {
                kind: ExprKind::Reference { place, .. },
                ..
            }] => match &place.kind {
                ExprKind::Var(name) => match self.scopes.lookup(name) {
                    Some(Binding::Argument(argument)) => Some(argument),
                    _ => None,
                },
                _ => None,
            },
            _ => None,
        };
        let argument = argument.ok_or_else(|| {
            LowerError::new(
                span,
                "`tensor_map_address` takes a tensor-map parameter of the kernel: `tensor_map_address(&map)`",
            )
        })?;
        Ok(self.expr_node(Expression::TensorMapAddress { argument }, span))
    }
}
