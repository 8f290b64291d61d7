//! Sub-slices bound to names: `let row = &x[a..b];`, `let (lo, hi) = y.split_at_mut(mid);`.
//!
//! A bound view is what CUDA C++ keeps for `float* row = x + a; size_t n = b - a;`: the
//! bounds are evaluated once, at the `let`, into hidden locals, and every use of the name
//! is the sub-slice [`Expression::SubSlice`] of the slice it views (a parameter, a shared
//! array, a `slice_at` slice or another view, as bound when the `let` ran, so shadowing
//! the base later changes nothing) with those bounds. Each use is range-checked like a
//! sub-slice passed directly (on the GPU when bounds checks are on, always on the
//! simulator); the optimiser folds the repeated arithmetic.

use super::*;

/// `split_at` used anywhere but a tuple `let`.
pub(super) const SPLIT_AT_LET: &str =
    "`split_at`/`split_at_mut` give two slices: bind them, `let (lo, hi) = x.split_at_mut(mid);`";

/// A view bound by `let`: the slice it views and its bounds, `None` for the base's start
/// or end.
#[derive(Clone, Copy, Debug)]
pub(super) struct SliceView {
    base: Binding,
    start: Option<Handle<LocalVariable>>,
    end: Option<Handle<LocalVariable>>,
}

impl Lowerer<'_, '_> {
    /// `let name = &base[start..end];` (either bound may be absent).
    pub(super) fn view_let(
        &mut self,
        name: &str,
        init: &Expr,
        out: &mut Block,
    ) -> Result<(), LowerError> {
        let ExprKind::SubSlice {
            base, start, end, ..
        } = &init.kind
        else {
            return Err(LowerError::new(init.span, "internal: not a sub-slice"));
        };
        let base = self.viewed(base)?;
        let start = self.bound(name, "start", start.as_deref(), out)?;
        let end = self.bound(name, "end", end.as_deref(), out)?;
        self.bind_view(name, SliceView { base, start, end });
        Ok(())
    }

    /// `let (lo, hi) = base.split_at(mid);` (or `split_at_mut`): `lo` views `..mid`, `hi`
    /// views `mid..`, with `mid` evaluated once.
    pub(super) fn split_at_let(
        &mut self,
        names: &[(String, bool)],
        init: &Expr,
        out: &mut Block,
    ) -> Result<(), LowerError> {
        let (ExprKind::SplitAt { base, mid, .. }, [(lo, _), (hi, _)]) = (&init.kind, names) else {
            return Err(LowerError::new(init.span, SPLIT_AT_LET));
        };
        let base = self.viewed(base)?;
        let mid = self.bound(lo, "mid", Some(mid), out)?;
        // Both bound after `mid` is read: `let (x, rest) = x.split_at(1)` shadows.
        self.bind_view(
            lo,
            SliceView {
                base,
                start: None,
                end: mid,
            },
        );
        self.bind_view(
            hi,
            SliceView {
                base,
                start: mid,
                end: None,
            },
        );
        Ok(())
    }

    /// The slice `name` views, as a new use: the sub-slice of its base.
    pub(super) fn view_expr(&mut self, view: usize, span: Span) -> Handle<Expression> {
        let SliceView { base, start, end } = self.views[view];
        let base = self.slice_of(base, span);
        let start = match start {
            Some(start) => self.load_local(start, span),
            None => self.int(0, Scalar::Usize, span),
        };
        let end = end.map(|end| self.load_local(end, span));
        self.expr_node(Expression::SubSlice { base, start, end }, span)
    }

    /// The binding of the slice a view is taken of: a named slice.
    fn viewed(&mut self, base: &Expr) -> Result<Binding, LowerError> {
        let named = match &base.kind {
            ExprKind::Var(name) => self.scopes.lookup(name),
            _ => None,
        };
        match named {
            Some(
                binding @ (Binding::Argument(_)
                | Binding::Shared(_)
                | Binding::RawSlice { .. }
                | Binding::View(_)),
            ) => Ok(binding),
            _ => Err(LowerError::new(
                base.span,
                "a bound sub-slice views a named slice (a parameter, a shared array, a `slice_at` slice or another bound sub-slice): `let row = &x[a..b];`",
            )),
        }
    }

    /// A bound's value in a hidden local, or `None` when absent.
    fn bound(
        &mut self,
        view: &str,
        which: &str,
        bound: Option<&Expr>,
        out: &mut Block,
    ) -> Result<Option<Handle<LocalVariable>>, LowerError> {
        let Some(bound) = bound else {
            return Ok(None);
        };
        let value = self.expr(bound, out)?;
        let name = format!("{view}.{which}");
        Ok(Some(self.temporary(
            &name,
            value,
            Scalar::Usize,
            bound.span,
            out,
        )))
    }

    fn bind_view(&mut self, name: &str, view: SliceView) {
        self.views.push(view);
        let index = self.views.len() - 1;
        self.scopes.bind(name, Binding::View(index));
    }

    /// The slice a slice binding stands for, as an expression.
    fn slice_of(&mut self, binding: Binding, span: Span) -> Handle<Expression> {
        match binding {
            Binding::Shared(shared) => self.expr_node(Expression::SharedSlice(shared), span),
            Binding::RawSlice {
                address,
                length,
                elem,
                mutable,
            } => {
                let address = self.load_local(address, span);
                let length = self.load_local(length, span);
                self.expr_node(
                    Expression::RawSlice {
                        address,
                        length,
                        elem,
                        mutable,
                    },
                    span,
                )
            }
            Binding::View(view) => self.view_expr(view, span),
            // A slice parameter (`viewed` admits no other argument: inference typed it).
            Binding::Argument(index) => self.expr_node(Expression::FunctionArgument(index), span),
            Binding::Local(_)
            | Binding::Array(..)
            | Binding::ArrayArgument(..)
            | Binding::Constant(_) => {
                unreachable!("`viewed` admits only slice bindings")
            }
        }
    }
}
