//! Sub-slices: `&x[a..b]`, `&mut y[a..]`, `&x[..b]`, `&x[..]`, and the two halves of
//! `x.split_at(mid)` / `y.split_at_mut(mid)`.
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

/// Whether `call` is `x.split_at(mid)` or `x.split_at_mut(mid)`.
pub(super) fn is_split_at(call: &syn::ExprMethodCall) -> bool {
    call.method == "split_at" || call.method == "split_at_mut"
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

    /// `base.split_at(mid)` or `base.split_at_mut(mid)` (bound by a tuple `let`).
    pub(super) fn split_at(&mut self, call: &syn::ExprMethodCall) -> Option<Expr> {
        let method = call.method.to_string();
        let [mid] = call.args.iter().collect::<Vec<_>>()[..] else {
            self.errors.at(
                call,
                format!("`{method}` takes the index to split at: `x.{method}(mid)`"),
            );
            return None;
        };
        let base = self.expr(&call.receiver);
        let mid = self.expr(mid);
        Some(Expr {
            kind: ExprKind::SplitAt {
                base: Box::new(base?),
                mid: Box::new(mid?),
                mutable: method == "split_at_mut",
            },
            span: span_at(call),
        })
    }
}
