//! Errors of lowering captured syntax to IR.

use crate::Span;

/// A kernel that the macro accepted but that cannot be lowered, for example because the
/// type of a variable is not determined by the body. Carries the user's position.
#[derive(Clone, PartialEq, Eq, thiserror::Error, cudajit_error_debug::ReadableDebug)]
#[error("{span}: {message}")]
pub struct LowerError {
    pub message: String,
    pub span: Span,
}

impl LowerError {
    pub(crate) fn new(span: Span, message: impl Into<String>) -> Self {
        LowerError {
            message: message.into(),
            span,
        }
    }
}
