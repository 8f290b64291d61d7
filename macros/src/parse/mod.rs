//! From syn's syntax tree to cudajit's captured syntax ([`cudajit_core::ast`]).
//!
//! The supported subset of Rust is decided here: every construct outside it is answered
//! by an error at its span, collected in [`Errors`], and parsing goes on so that all
//! mistakes are reported at once.

mod expr;
mod signature;
mod stmt;

use cudajit_core::ast::KernelSource;
use cudajit_core::Span;
use syn::ItemFn;

use crate::errors::Errors;

/// Parses a kernel function. Returns `None` if anything was rejected (see `errors`).
pub(crate) fn kernel(item: &ItemFn, errors: &mut Errors) -> Option<KernelSource> {
    let params = signature::params(&item.sig, errors);
    let mut parser = stmt::Parser::new(errors);
    for param in &params {
        parser.bind(&param.name);
    }
    let body = parser.fn_body(&item.block);
    if !errors.is_empty() {
        return None;
    }
    Some(KernelSource {
        name: item.sig.ident.to_string(),
        params,
        body,
        span: span_of(item.sig.ident.span()),
    })
}

/// The user's position of a token.
pub(crate) fn span_of(span: proc_macro2::Span) -> Span {
    let start = span.start();
    Span::new(start.line as u32, start.column as u32)
}

/// The position of the first token of `tokens`.
pub(crate) fn span_at(tokens: &impl quote::ToTokens) -> Span {
    tokens
        .to_token_stream()
        .into_iter()
        .next()
        .map(|t| span_of(t.span()))
        .unwrap_or_default()
}
