//! Sub-slices: `&x[a..b]`, `&mut y[a..]`, `&x[..b]`, `&x[..]`.
//!
//! Each is a view of the same memory, an offset pointer and a length (what CUDA C++
//! passes as `x + a, b - a`), checked like indexing where it is made.

use cudajit_core::ast::{Expr, ExprKind};

use super::parser::Parser;
use super::span_at;

/// The range of `&x[range]`, if `reference` is one.
pub(super) fn indexed_range(
    reference: &syn::ExprReference,
) -> Option<(&syn::Expr, &syn::ExprRange)> {
    let syn::Expr::Index(index) = &*reference.expr else {
        return None;
    };
    let syn::Expr::Range(range) = &*index.index else {
        return None;
    };
    Some((&index.expr, range))
}

impl Parser<'_> {
    /// `&x[start..end]` (either bound may be absent) or `&mut x[..]`.
    pub(super) fn sub_slice(&mut self, reference: &syn::ExprReference) -> Option<Expr> {
        let (base, range) = indexed_range(reference)?;
        if let syn::RangeLimits::Closed(_) = range.limits {
            self.errors.at(
                range,
                "inclusive ranges `a..=b` are not supported for sub-slices: write `&x[a..b + 1]`",
            );
            return None;
        }
        let base = self.expr(base);
        let start = range.start.as_deref().map(|start| self.expr(start));
        let end = range.end.as_deref().map(|end| self.expr(end));
        let start = match start {
            Some(start) => Some(Box::new(start?)),
            None => None,
        };
        let end = match end {
            Some(end) => Some(Box::new(end?)),
            None => None,
        };
        Some(Expr {
            kind: ExprKind::SubSlice {
                base: Box::new(base?),
                start,
                end,
                mutable: reference.mutability.is_some(),
            },
            span: span_at(reference),
        })
    }
}
