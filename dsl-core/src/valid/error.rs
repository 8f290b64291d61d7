//! Validation errors, with the position of the offending node.

use crate::Span;

/// An IR module that breaks a rule of the IR. Front ends that produce valid IR never see
/// one; it names the function, the user's position and the broken rule.
#[derive(Clone, PartialEq, thiserror::Error, cudajit_error_debug::ReadableDebug)]
#[error("invalid IR in `{function}` at {span}: {kind}")]
pub struct ValidationError {
    pub function: String,
    pub span: Span,
    pub kind: ValidationErrorKind,
}

/// The rule an invalid module breaks.
#[derive(Clone, PartialEq, thiserror::Error, cudajit_error_debug::ReadableDebug)]
#[non_exhaustive]
pub enum ValidationErrorKind {
    #[error("handle {handle} of a {what} is out of range")]
    BadHandle { what: &'static str, handle: usize },
    #[error("expression {expression} refers to expression {operand}, which is not earlier")]
    ForwardReference { expression: usize, operand: usize },
    #[error("argument {index} does not exist")]
    BadArgument { index: u32 },
    #[error("expected {expected}, found {found}")]
    TypeMismatch { expected: String, found: String },
    #[error("operator `{op}` does not apply to {ty}")]
    BadOperand { op: &'static str, ty: String },
    #[error("cannot cast {from} to {to}")]
    BadCast { from: String, to: String },
    #[error("store through a pointer to immutable memory (a `&[T]` slice)")]
    StoreToImmutable,
    #[error("`{what}` targets loop {target}, which does not enclose it")]
    BadLoopTarget { what: &'static str, target: u32 },
    #[error("loop id {0} is used by two loops")]
    DuplicateLoop(u32),
    #[error("a kernel must return `()`")]
    KernelReturnsValue,
    #[error("kernel parameter `{name}` has type {ty}, which cannot be passed to a kernel")]
    BadKernelParameter { name: String, ty: String },
    #[error("entry point `{0}` refers to a missing function")]
    MissingEntryFunction(String),
    #[error("{0}")]
    Unsupported(String),
}
