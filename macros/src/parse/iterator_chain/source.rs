//! A chain's source loops: each source walked by a plain `for` loop (`iterate.rs`),
//! sub-slices bound to names first, the item's parts bound to fresh names.

use super::*;

impl Parser<'_> {
    /// One source's loop: its items through its own stages (which end this loop) and the
    /// shared ones (which end the chain), then the consumer.
    pub(super) fn source_loop(
        &mut self,
        source: &Source<'_>,
        (stages, shared, own): (&[Stage<'_>], &[StageState], &[StageState]),
        consumer: &Consumer<'_>,
        (acc, some): (&str, &str),
        (inner_label, exit): (&str, &str),
        span: Span,
    ) -> Option<Stmt> {
        // The source, as a plain loop walks it: its item bound to fresh names.
        let source_site = &source.expr;
        let mut prelude = Vec::new();
        let own_stages = &source.stages;
        let source = self.named_source(&source.expr, &mut prelude)?;
        let (pattern, names) = self.fresh_pattern(&source);
        let mut body = Vec::new();
        self.push_scope();
        let stmt = self.plain_loop(&pattern, &source, inner_label, |parser| {
            // The names the loop bound: locals, or aliases of elements.
            let mut item = parser.resolve_item(&names);
            for (stage, state) in own_stages.iter().zip(own) {
                item = parser.stage(
                    stage,
                    state,
                    item,
                    (inner_label, inner_label),
                    span,
                    &mut body,
                )?;
            }
            for (stage, state) in stages.iter().zip(shared) {
                item = parser.stage(stage, state, item, (inner_label, exit), span, &mut body)?;
            }
            parser.consume(
                source_site,
                consumer,
                item,
                (acc, some),
                exit,
                span,
                &mut body,
            )?;
            Some(std::mem::take(&mut body))
        });
        self.pop_scope();
        let stmt = stmt?;
        prelude.push(stmt);
        Some(Stmt::Block(Block {
            stmts: prelude,
            tail: None,
            span,
        }))
    }

    /// `source` with any sub-slice it walks bound to a name first (`x[lo..hi].iter()`
    /// walks `let view = &x[lo..hi];`), as the plain loops need.
    pub(super) fn named_source(
        &mut self,
        source: &syn::Expr,
        prelude: &mut Vec<Stmt>,
    ) -> Option<syn::Expr> {
        let Some(call) = method_call(source) else {
            return Some(source.clone());
        };
        let mut call = call.clone();
        let method = call.method.to_string();
        if matches!(method.as_str(), "iter" | "iter_mut" | "into_iter") && !is_name(&call.receiver)
        {
            let view = syn::Ident::new(
                &format!("__cudajit_view{}", self.next_view()),
                proc_macro2::Span::call_site(),
            );
            let receiver = &call.receiver;
            let mutable = method == "iter_mut";
            let reference: syn::Expr = match (&**receiver, mutable) {
                (syn::Expr::Reference(_), _) => (**receiver).clone(),
                (_, true) => syn::parse_quote!(&mut #receiver),
                (_, false) => syn::parse_quote!(&#receiver),
            };
            let stmt: syn::Stmt = syn::parse_quote!(let #view = #reference;);
            let parsed = self.stmt(&stmt);
            prelude.append(&mut self.pending);
            prelude.extend(parsed);
            call.receiver = Box::new(syn::parse_quote!(#view));
            return Some(syn::Expr::MethodCall(call));
        }
        call.receiver = Box::new(self.named_source(&call.receiver, prelude)?);
        let args: Vec<syn::Expr> = call
            .args
            .iter()
            .map(|arg| self.named_source(arg, prelude))
            .collect::<Option<_>>()?;
        call.args = args.into_iter().collect();
        Some(syn::Expr::MethodCall(call))
    }

    /// A label no user writes (`'__cudajit_chain3`).
    pub(super) fn fresh_label(&mut self, what: &str) -> String {
        format!("__cudajit_{what}{}", self.next_view())
    }

    pub(super) fn next_view(&mut self) -> usize {
        self.temps += 1;
        self.temps
    }

    /// A pattern of fresh names for what `source` yields (pairs for `enumerate` and
    /// `zip`), and the item those names are.
    pub(super) fn fresh_pattern(&mut self, source: &syn::Expr) -> (syn::Pat, Item) {
        let pair = |this: &mut Self, a: &syn::Expr, b: Option<&syn::Expr>| {
            let (pa, ia) = this.fresh_pattern(a);
            let (pb, ib) = match b {
                Some(b) => this.fresh_pattern(b),
                None => this.fresh_pattern(&syn::parse_quote!(0..1)),
            };
            let pattern: syn::Pat = syn::parse_quote!((#pa, #pb));
            (pattern, Item::Pair(Box::new(ia), Box::new(ib)))
        };
        if let Some(call) = method_call(source) {
            match call.method.to_string().as_str() {
                // `enumerate` yields (index, item).
                "enumerate" => {
                    let (pi, ii) = self.fresh_pattern(&syn::parse_quote!(0..1));
                    let (pv, iv) = self.fresh_pattern(&call.receiver);
                    let pattern: syn::Pat = syn::parse_quote!((#pi, #pv));
                    return (pattern, Item::Pair(Box::new(ii), Box::new(iv)));
                }
                "zip" => return pair(self, &call.receiver, call.args.first()),
                "rev" | "step_by" | "copied" | "cloned" | "into_iter" => {
                    return self.fresh_pattern(&call.receiver)
                }
                _ => {}
            }
        }
        let name = format!("__cudajit_item{}", self.next_view());
        let ident = syn::Ident::new(&name, proc_macro2::Span::call_site());
        (
            syn::parse_quote!(#ident),
            Item::One(var(&name, Span::default())),
        )
    }

    /// `item` with each name the loop bound replaced by what it stands for (an element,
    /// where the loop made the name an alias of one).
    pub(super) fn resolve_item(&self, item: &Item) -> Item {
        match item {
            Item::One(value) => match &value.kind {
                ExprKind::Var(name) => Item::One(self.alias(name).unwrap_or_else(|| value.clone())),
                _ => Item::One(value.clone()),
            },
            Item::Pair(a, b) => Item::Pair(
                Box::new(self.resolve_item(a)),
                Box::new(self.resolve_item(b)),
            ),
        }
    }

    /// A plain loop (`iterate.rs`) labelled `label` of `pattern` over `source`, whose body
    /// `inner` makes (after the loop's own bindings of the pattern).
    pub(super) fn plain_loop(
        &mut self,
        pattern: &syn::Pat,
        source: &syn::Expr,
        label: &str,
        inner: impl FnOnce(&mut Self) -> Option<Vec<Stmt>>,
    ) -> Option<Stmt> {
        let lifetime = syn::Lifetime::new(&format!("'{label}"), proc_macro2::Span::call_site());
        let for_loop: syn::ExprForLoop = syn::parse_quote!(#lifetime: for #pattern in #source {});
        self.for_loop_with(&for_loop, |parser| {
            let stmts = inner(parser)?;
            Some(Block {
                stmts,
                tail: None,
                span: Span::default(),
            })
        })
    }
}
