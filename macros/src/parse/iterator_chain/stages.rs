//! The adapters after a chain's source: what each keeps across iterations (counters,
//! limits, the slice a `zip` pairs with) and what it does to an item in the loop body.

use super::*;

impl Parser<'_> {
    /// What a stage keeps across iterations, declared before the loop: a count, a limit
    /// evaluated once, a flag, the slice a `zip` pairs with.
    pub(super) fn stage_state(
        &mut self,
        stage: &Stage<'_>,
        span: Span,
        stmts: &mut Vec<Stmt>,
    ) -> Option<StageState> {
        let counter = self.fresh_name("stage");
        let mut declare = |name: String, init: Expr, mutable: bool| {
            stmts.push(Stmt::Let {
                name,
                mutable,
                ty: None,
                init: Some(init),
                span,
            });
        };
        let mut partner = None;
        match stage {
            Stage::Enumerate | Stage::StepBy(_) => {
                declare(counter.clone(), usize_literal(0, span), true)
            }
            Stage::Zip(other) => {
                let (base, skip) = self.zip_partner(other, stmts)?;
                let mut declare = |name: String, init: Expr, mutable: bool| {
                    stmts.push(Stmt::Let {
                        name,
                        mutable,
                        ty: None,
                        init: Some(init),
                        span,
                    });
                };
                let offset = format!("{counter}.offset");
                declare(
                    offset.clone(),
                    skip.unwrap_or(usize_literal(0, span)),
                    false,
                );
                declare(counter.clone(), usize_literal(0, span), true);
                self.bind(&offset);
                partner = Some((base, var(&offset, span)));
            }
            Stage::Take(n) | Stage::Skip(n) => {
                let limit = self.expr(n)?;
                declare(format!("{counter}.limit"), limit, false);
                declare(counter.clone(), usize_literal(0, span), true);
            }
            Stage::SkipWhile(_) => declare(counter.clone(), bool_literal(true, span), true),
            Stage::Map(_) | Stage::Filter(_) | Stage::TakeWhile(_) => {}
        }
        for name in [counter.clone(), format!("{counter}.limit")] {
            self.bind(&name);
        }
        Some(StageState { counter, partner })
    }

    /// Applies `stage` to `item` in the loop body: the item after it. A skipped item goes
    /// on with the loop labelled `inner`, a stage that ends the walk leaves `exit`.
    pub(super) fn stage(
        &mut self,
        stage: &Stage<'_>,
        state: &StageState,
        item: Item,
        (inner, exit): (&str, &str),
        span: Span,
        body: &mut Vec<Stmt>,
    ) -> Option<Item> {
        let counter = state.counter.as_str();
        let next = || Stmt::Continue {
            label: Some(inner.to_owned()),
            span,
        };
        let leave = || Stmt::Break {
            label: Some(exit.to_owned()),
            span,
        };
        let step = |name: &str| Stmt::Assign {
            place: var(name, span),
            op: Some(BinaryOp::Add),
            value: usize_literal(1, span),
            span,
        };
        let limit = var(&format!("{counter}.limit"), span);
        Some(match stage {
            Stage::Map(f) => {
                let value = self.apply(f, &[item], body)?;
                let name = self.fresh_name("mapped");
                body.push(Stmt::Let {
                    name: name.clone(),
                    mutable: false,
                    ty: None,
                    init: Some(value),
                    span,
                });
                self.bind(&name);
                Item::One(var(&name, span))
            }
            Stage::Filter(p) => {
                let keep = self.apply(p, std::slice::from_ref(&item), body)?;
                body.push(if_then(not(keep, span), vec![next()], span));
                item
            }
            Stage::TakeWhile(p) => {
                let keep = self.apply(p, std::slice::from_ref(&item), body)?;
                body.push(if_then(not(keep, span), vec![leave()], span));
                item
            }
            Stage::SkipWhile(p) => {
                let skip = self.apply(p, std::slice::from_ref(&item), body)?;
                let skipping = var(counter, span);
                body.push(if_then(
                    skipping,
                    vec![
                        if_then(skip, vec![next()], span),
                        Stmt::Assign {
                            place: var(counter, span),
                            op: None,
                            value: bool_literal(false, span),
                            span,
                        },
                    ],
                    span,
                ));
                item
            }
            Stage::Take(_) => {
                let done = binary(BinaryOp::Ge, var(counter, span), limit, span);
                body.push(if_then(done, vec![leave()], span));
                body.push(step(counter));
                item
            }
            Stage::Skip(_) => {
                let skipping = binary(BinaryOp::Lt, var(counter, span), limit, span);
                body.push(if_then(skipping, vec![step(counter), next()], span));
                item
            }
            Stage::StepBy(s) => {
                let s = self.expr(s)?;
                let index = self.counted("position", var(counter, span), span, body);
                body.push(step(counter));
                let off = binary(
                    BinaryOp::Ne,
                    binary(BinaryOp::Rem, var(&index, span), s, span),
                    usize_literal(0, span),
                    span,
                );
                body.push(if_then(off, vec![next()], span));
                item
            }
            Stage::Enumerate => {
                let index = self.counted("index", var(counter, span), span, body);
                body.push(step(counter));
                Item::Pair(Box::new(Item::One(var(&index, span))), Box::new(item))
            }
            Stage::Zip(_) => {
                // The other side walked by position: its element at this item's count,
                // from where its `skip` starts it.
                let (base, offset) = state.partner.clone()?;
                let len = Expr {
                    kind: ExprKind::Len(Box::new(base.clone())),
                    span,
                };
                let position = binary(BinaryOp::Add, var(counter, span), offset, span);
                body.push(if_then(
                    binary(BinaryOp::Ge, position.clone(), len, span),
                    vec![leave()],
                    span,
                ));
                let index = self.counted("zipped", position, span, body);
                body.push(step(counter));
                let element = Expr {
                    kind: ExprKind::Index {
                        base: Box::new(base),
                        index: Box::new(var(&index, span)),
                    },
                    span,
                };
                Item::Pair(Box::new(item), Box::new(Item::One(element)))
            }
        })
    }

    /// The slice or array a `zip` after other adapters pairs with, and where the pairing
    /// starts in it: `y`, `&y`, `y.iter()`, `y.iter_mut()`, `y[lo..hi].iter()` (bound to a
    /// name first, in `stmts`), with a `.skip(k)`.
    pub(super) fn zip_partner(
        &mut self,
        other: &syn::Expr,
        stmts: &mut Vec<Stmt>,
    ) -> Option<(Expr, Option<Expr>)> {
        if let Some(call) = method_call(other) {
            if call.method == "skip" && call.args.len() == 1 {
                let (base, inner) = self.zip_partner(&call.receiver, stmts)?;
                let skip = self.expr(&call.args[0])?;
                let skip = match inner {
                    Some(inner) => {
                        let span = skip.span;
                        binary(BinaryOp::Add, inner, skip, span)
                    }
                    None => skip,
                };
                return Some((base, Some(skip)));
            }
        }
        let named = self.named_source(other, stmts)?;
        let base = match &named {
            syn::Expr::Reference(reference) => (*reference.expr).clone(),
            syn::Expr::MethodCall(call)
                if matches!(
                    call.method.to_string().as_str(),
                    "iter" | "iter_mut" | "into_iter"
                ) && call.args.is_empty() =>
            {
                (*call.receiver).clone()
            }
            other => other.clone(),
        };
        if !is_name(&base) {
            self.errors.at(other, "after `map` or `filter`, `zip` pairs with a slice or array (`.zip(y.iter())`, `.zip(y.iter().skip(1))`): bind other iterators' values with `let` first");
            return None;
        }
        Some((self.expr(&base)?, None))
    }

    /// `let what = value;` in the loop body, for a count read before it steps on: the
    /// fresh local's name.
    pub(super) fn counted(
        &mut self,
        what: &str,
        value: Expr,
        span: Span,
        body: &mut Vec<Stmt>,
    ) -> String {
        let name = self.fresh_name(what);
        body.push(Stmt::Let {
            name: name.clone(),
            mutable: false,
            ty: None,
            init: Some(value),
            span,
        });
        self.bind(&name);
        name
    }
}
