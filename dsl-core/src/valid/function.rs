//! The checks of one function: its signature, then every expression's type and every statement's
//! rules, each in a room of its own below.

use super::error::{ValidationError, ValidationErrorKind as Kind};
use super::{ExprType, FunctionInfo};

use crate::ir::{Expression, Function, Handle, LoopId, Module, TypeInner};
use crate::{Scalar, Span};

mod call;
mod expression;
mod intrinsic;
mod statement;

pub(super) fn validate_function(
    module: &Module,
    function: &Function,
) -> Result<FunctionInfo, ValidationError> {
    let mut checker = Checker {
        module,
        function,
        types: Vec::with_capacity(function.expressions.len()),
        loops: Vec::new(),
        seen_loops: Vec::new(),
    };
    for (handle, expression) in function.expressions.iter() {
        let ty = checker
            .resolve(expression)
            .map_err(|kind| checker.error(function.expression_span(handle), kind))?;
        checker.types.push(ty);
    }
    checker.block(&function.body, false)?;
    Ok(FunctionInfo {
        expression_types: checker.types,
    })
}

/// A tensor map lives in a kernel's parameter memory (grid-constant); a device function
/// takes its address (`u64`) instead.
pub(super) fn check_device_signature(
    module: &Module,
    function: &Function,
) -> Result<(), ValidationError> {
    match function
        .arguments
        .iter()
        .find(|a| module.types[a.ty].inner == TypeInner::TensorMap)
    {
        Some(argument) => Err(ValidationError {
            function: function.name.clone(),
            span: argument.span,
            kind: Kind::Unsupported(
                "a tensor map parameter of a device function: only kernels take tensor maps; pass `tensor_map_address(&map)` instead".into(),
            ),
        }),
        None => Ok(()),
    }
}

pub(super) fn check_kernel_signature(
    module: &Module,
    function: &Function,
) -> Result<(), ValidationError> {
    let error = |span, kind| ValidationError {
        function: function.name.clone(),
        span,
        kind,
    };
    if function.result.is_some() {
        return Err(error(function.span, Kind::KernelReturnsValue));
    }
    for argument in &function.arguments {
        let ok = match &module.types[argument.ty].inner {
            TypeInner::Scalar(_) | TypeInner::Pointer { .. } | TypeInner::Struct { .. } => true,
            TypeInner::Slice { base, .. } => {
                matches!(
                    module.types[*base].inner,
                    TypeInner::Scalar(_) | TypeInner::Struct { .. }
                )
            }
            TypeInner::TensorMap => true,
            TypeInner::Array { .. } => false,
        };
        if !ok {
            return Err(error(
                argument.span,
                Kind::BadKernelParameter {
                    name: argument.name.clone(),
                    ty: super::describe_type(module, argument.ty),
                },
            ));
        }
    }
    Ok(())
}

struct Checker<'a> {
    module: &'a Module,
    function: &'a Function,
    types: Vec<ExprType>,
    /// Enclosing loops; `true` while checking that loop's `continuing` block.
    loops: Vec<(LoopId, bool)>,
    seen_loops: Vec<LoopId>,
}

impl Checker<'_> {
    fn error(&self, span: Span, kind: Kind) -> ValidationError {
        ValidationError {
            function: self.function.name.clone(),
            span,
            kind,
        }
    }

    fn ty(&self, handle: Handle<Expression>) -> ExprType {
        self.types[handle.index()]
    }

    fn describe(&self, ty: ExprType) -> String {
        ty.describe(self.module)
    }

    fn scalar(&self, handle: Handle<Expression>) -> Result<Scalar, Kind> {
        self.ty(handle).scalar().ok_or_else(|| Kind::TypeMismatch {
            expected: "a scalar".into(),
            found: self.describe(self.ty(handle)),
        })
    }

    fn expect(&self, handle: Handle<Expression>, expected: Scalar) -> Result<(), Kind> {
        let found = self.ty(handle);
        if found == ExprType::Scalar(expected) {
            Ok(())
        } else {
            Err(Kind::TypeMismatch {
                expected: format!("`{expected}`"),
                found: self.describe(found),
            })
        }
    }

    /// The slice a chain of sub-slices views (`&tile[a..][b..]` views `tile`): its memory
    /// is the root's.
    fn slice_root(&self, mut slice: Handle<Expression>) -> Handle<Expression> {
        while let Some(Expression::SubSlice { base, .. }) = self.function.expressions.try_get(slice)
        {
            slice = *base;
        }
        slice
    }

    fn same(&self, expected: ExprType, found: ExprType) -> Result<(), Kind> {
        if expected == found {
            Ok(())
        } else {
            Err(Kind::TypeMismatch {
                expected: self.describe(expected),
                found: self.describe(found),
            })
        }
    }
}
