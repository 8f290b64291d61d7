//! Calls of device functions and of external (`#[extern_device]`) functions: argument
//! counts and types against the callee's signature.

use super::Checker;
use crate::ir::{Expression, Function, Handle};
use crate::valid::error::ValidationErrorKind as Kind;
use crate::valid::ExprType;

impl Checker<'_> {
    pub(super) fn call(
        &self,
        callee: Handle<Function>,
        arguments: &[Handle<Expression>],
        result: Option<Handle<crate::ir::LocalVariable>>,
    ) -> Result<(), Kind> {
        let callee = &self.module.functions[callee];
        if arguments.len() != callee.arguments.len() {
            return Err(Kind::TypeMismatch {
                expected: format!("{} arguments for `{}`", callee.arguments.len(), callee.name),
                found: arguments.len().to_string(),
            });
        }
        for (argument, parameter) in arguments.iter().zip(&callee.arguments) {
            let expected = ExprType::of(self.module, parameter.ty);
            let found = self.ty(*argument);
            let compatible = match (expected, found) {
                // A `&mut [T]` may be passed where a `&[T]` is expected.
                (
                    ExprType::Slice { base, mutable },
                    ExprType::Slice {
                        base: given,
                        mutable: given_mut,
                    },
                ) => base == given && (given_mut || !mutable),
                // `&S`: a pointer to the same struct, anywhere.
                (ExprType::Pointer { base, .. }, ExprType::Pointer { base: given, .. }) => {
                    base == given
                }
                _ => expected == found,
            };
            if !compatible {
                return Err(Kind::TypeMismatch {
                    expected: self.describe(expected),
                    found: self.describe(found),
                });
            }
        }
        match (result, callee.result) {
            (None, _) => Ok(()),
            (Some(local), Some(ty)) => self.same(
                ExprType::of(self.module, self.function.locals[local].ty),
                ExprType::of(self.module, ty),
            ),
            (Some(_), None) => Err(Kind::TypeMismatch {
                expected: format!("a value from `{}`", callee.name),
                found: "nothing".into(),
            }),
        }
    }

    /// An `#[extern_device]` call: scalar arguments of the declared types, in number.
    pub(super) fn call_extern(
        &self,
        callee: Handle<crate::ir::ExternFunction>,
        arguments: &[Handle<Expression>],
        result: Option<Handle<crate::ir::LocalVariable>>,
    ) -> Result<(), Kind> {
        let callee = &self.module.externs[callee];
        if arguments.len() != callee.arguments.len() {
            return Err(Kind::TypeMismatch {
                expected: format!("{} arguments for `{}`", callee.arguments.len(), callee.name),
                found: arguments.len().to_string(),
            });
        }
        for (argument, parameter) in arguments.iter().zip(&callee.arguments) {
            match (ExprType::of(self.module, *parameter), self.ty(*argument)) {
                (expected @ ExprType::Scalar(_), found) => self.same(expected, found)?,
                // A struct by value.
                (expected @ ExprType::Value(_), found) => self.same(expected, found)?,
                // `&S`/`&mut [T; N]`: a pointer to the same type, anywhere; writable when
                // the function writes through it.
                (
                    ExprType::Pointer {
                        base,
                        mutable: wants_mut,
                        ..
                    },
                    ExprType::Pointer {
                        base: given,
                        mutable,
                        ..
                    },
                ) if base == given => {
                    if wants_mut && !mutable {
                        return Err(Kind::StoreToImmutable);
                    }
                }
                (expected, found) => {
                    return Err(Kind::TypeMismatch {
                        expected: format!("{} for `{}`", self.describe(expected), callee.name),
                        found: self.describe(found),
                    })
                }
            }
        }
        match (result, callee.result) {
            (None, _) => Ok(()),
            (Some(local), Some(ty)) => self.same(
                ExprType::of(self.module, self.function.locals[local].ty),
                ExprType::of(self.module, ty),
            ),
            (Some(_), None) => Err(Kind::TypeMismatch {
                expected: format!("a value from `{}`", callee.name),
                found: "nothing".into(),
            }),
        }
    }
}
