//! Arrays passed to and returned from `#[device]` functions (`fn dot4(a: [f32; 4], b:
//! [f32; 4]) -> f32`, `fn tile(acc: [f32; 16]) -> [f32; 16]`, `acc: &mut [f32; 16]`): the
//! parameter is an array the body indexes, the result an array of the element type.

use super::{Binding, InferTy, Inference};
use crate::ast::{Expr, ValueType};
use crate::lower::error::LowerError;
use crate::lower::spec::Resolved;
use crate::Span;

impl Inference<'_> {
    /// The inferred type of an array of `elem`: of scalars (its element type a variable)
    /// or of structs.
    pub(super) fn array_type(
        &mut self,
        elem: &ValueType,
        span: Span,
    ) -> Result<InferTy, LowerError> {
        // `[[T; M]; N]`: rows of scalars.
        if let ValueType::Array { elem: inner, .. } = elem {
            return match self.array_type(inner, span)? {
                InferTy::Array(var) => Ok(InferTy::Rows(var)),
                _ => Err(LowerError::new(span, "arrays of arrays hold scalars")),
            };
        }
        Ok(match self.library.resolve_value(self.spec, elem, span)? {
            Resolved::Scalar(scalar) => InferTy::Array(self.known(scalar)),
            Resolved::Struct(name) => InferTy::StructArray(name),
        })
    }

    /// What an array parameter of element type `elem` binds its name to.
    pub(super) fn array_binding(
        &mut self,
        elem: &ValueType,
        span: Span,
    ) -> Result<Binding, LowerError> {
        Ok(match self.array_type(elem, span)? {
            InferTy::StructArray(name) => Binding::StructArray(name),
            InferTy::Array(var) => Binding::Array(var, None),
            InferTy::Rows(var) => Binding::Rows(var),
            _ => return Err(LowerError::new(span, "internal: not an array type")),
        })
    }

    /// `value` given where an array like `wanted` is: a local array, an array parameter, an
    /// array field, or a call returning an array, of the same element type.
    pub(super) fn array_value(&mut self, value: &Expr, wanted: InferTy) -> Result<(), LowerError> {
        match (self.expr(value)?, wanted) {
            (InferTy::Array(given), InferTy::Array(elem))
            | (InferTy::Rows(given), InferTy::Rows(elem)) => self.unify(given, elem, value.span),
            (InferTy::StructArray(given), InferTy::StructArray(elem)) if given == elem => Ok(()),
            _ => Err(LowerError::new(
                value.span,
                "an array of the element type is expected here: a local array (`let r = [0.0f32; 4];` .. `r`), an array parameter, an array field or a call returning one",
            )),
        }
    }
}
