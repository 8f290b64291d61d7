//! What ends a chain: the accumulator, the consumer's step per item, and closures
//! applied to items (their parameter patterns bound to the item's parts).

use super::*;

impl Parser<'_> {
    /// Declares the accumulator a consumer needs; the result's expression (for a `for`
    /// loop, `()` as an empty block's value is not needed: `None` means no value).
    pub(super) fn accumulator(
        &mut self,
        consumer: &Consumer<'_>,
        acc: &str,
        some: &str,
        span: Span,
        stmts: &mut Vec<Stmt>,
    ) -> Option<Expr> {
        let declare = |stmts: &mut Vec<Stmt>, name: &str, init: Expr| {
            stmts.push(Stmt::Let {
                name: name.to_owned(),
                mutable: true,
                ty: None,
                init: Some(init),
                span,
            });
        };
        let identity = |one: bool, ty: &Option<ValueType>| Expr {
            kind: ExprKind::Constant {
                ty: ty.clone(),
                one,
            },
            span,
        };
        let acc_var = var(acc, span);
        Some(match consumer {
            // The start has no type of its own (a float sum starts at -0.0, as Rust's
            // `Sum`); a turbofish types the accumulator.
            Consumer::Sum(ty) | Consumer::Product(ty) => {
                stmts.push(Stmt::Let {
                    name: acc.to_owned(),
                    mutable: true,
                    ty: ty.clone(),
                    init: Some(identity(matches!(consumer, Consumer::Product(_)), &None)),
                    span,
                });
                acc_var
            }
            Consumer::Count => {
                declare(stmts, acc, usize_literal(0, span));
                acc_var
            }
            Consumer::Fold(init, _) => {
                let init = self.expr(init)?;
                declare(stmts, acc, init);
                acc_var
            }
            Consumer::Any(_) => {
                declare(stmts, acc, bool_literal(false, span));
                acc_var
            }
            Consumer::All(_) => {
                declare(stmts, acc, bool_literal(true, span));
                acc_var
            }
            Consumer::Optional(optional) => {
                match optional {
                    Optional::Position(_) => declare(stmts, acc, usize_literal(0, span)),
                    // Read only once an item set it (`some`): of the items' type, any value.
                    _ => stmts.push(Stmt::Let {
                        name: acc.to_owned(),
                        mutable: true,
                        ty: None,
                        init: None,
                        span,
                    }),
                }
                declare(stmts, some, bool_literal(false, span));
                // The `Option`'s halves, which `option_value.rs` takes apart.
                Expr {
                    kind: ExprKind::Tuple(vec![var(some, span), acc_var]),
                    span,
                }
            }
            Consumer::For(..) => Expr {
                kind: ExprKind::Block(Block {
                    stmts: Vec::new(),
                    tail: None,
                    span,
                }),
                span,
            },
        })
    }

    /// The consumer's step for `item`; errors point at `site`, the chain.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn consume(
        &mut self,
        site: &syn::Expr,
        consumer: &Consumer<'_>,
        item: Item,
        (acc, some): (&str, &str),
        exit: &str,
        span: Span,
        body: &mut Vec<Stmt>,
    ) -> Option<()> {
        let set = |name: &str, value: Expr| Stmt::Assign {
            place: var(name, span),
            op: None,
            value,
            span,
        };
        let leave = || Stmt::Break {
            label: Some(exit.to_owned()),
            span,
        };
        let whole = |parser: &mut Self, item: &Item| -> Option<Expr> {
            match item {
                Item::One(value) => Some(value.clone()),
                Item::Pair(..) => {
                    parser.errors.at(
                        site,
                        "this chain yields pairs: `map` them to one value before this consumer",
                    );
                    None
                }
            }
        };
        match consumer {
            Consumer::Sum(_) | Consumer::Product(_) => {
                let op = if matches!(consumer, Consumer::Sum(_)) {
                    BinaryOp::Add
                } else {
                    BinaryOp::Mul
                };
                let value = whole(self, &item)?;
                body.push(Stmt::Assign {
                    place: var(acc, span),
                    op: Some(op),
                    value,
                    span,
                });
            }
            Consumer::Count => body.push(Stmt::Assign {
                place: var(acc, span),
                op: Some(BinaryOp::Add),
                value: usize_literal(1, span),
                span,
            }),
            Consumer::Fold(_, f) => {
                let value = self.apply(f, &[Item::One(var(acc, span)), item], body)?;
                body.push(set(acc, value));
            }
            Consumer::Any(p) => {
                let hit = self.apply(p, &[item], body)?;
                body.push(if_then(
                    hit,
                    vec![set(acc, bool_literal(true, span)), leave()],
                    span,
                ));
            }
            Consumer::All(p) => {
                let hit = self.apply(p, &[item], body)?;
                body.push(if_then(
                    not(hit, span),
                    vec![set(acc, bool_literal(false, span)), leave()],
                    span,
                ));
            }
            Consumer::Optional(optional) => {
                let first = not(var(some, span), span);
                match optional {
                    Optional::Extreme { max, key } => {
                        let value = whole(self, &item)?;
                        // Rust's `min` keeps the first of equal elements, `max` the last.
                        let better = match key {
                            None => {
                                let op = if *max { BinaryOp::Ge } else { BinaryOp::Lt };
                                binary(op, value.clone(), var(acc, span), span)
                            }
                            Some(key) => {
                                let mine = self.apply(key, std::slice::from_ref(&item), body)?;
                                let best = self.apply(key, &[Item::One(var(acc, span))], body)?;
                                let op = if *max { BinaryOp::Ge } else { BinaryOp::Lt };
                                binary(op, mine, best, span)
                            }
                        };
                        body.push(if_then(
                            binary(BinaryOp::Or, first, better, span),
                            vec![set(acc, value), set(some, bool_literal(true, span))],
                            span,
                        ));
                    }
                    Optional::ExtremeBy { max, compare } => {
                        let value = whole(self, &item)?;
                        // Rust's `min_by` keeps the first of equal elements (an element
                        // replaces the best only when the best compares `Greater`),
                        // `max_by` the last (unless the best compares `Greater`).
                        // The first element is the best before the comparator sees it,
                        // so the best always holds an element (and has its type).
                        body.push(if_then(first.clone(), vec![set(acc, value.clone())], span));
                        let order =
                            self.apply(compare, &[Item::One(var(acc, span)), item], body)?;
                        let zero = Expr {
                            kind: ExprKind::Lit(cudajit_core::ast::Literal::Int {
                                value: 0,
                                suffix: Some(cudajit_core::Scalar::I8),
                            }),
                            span,
                        };
                        let op = if *max { BinaryOp::Le } else { BinaryOp::Gt };
                        body.push(if_then(
                            binary(BinaryOp::Or, first, binary(op, order, zero, span), span),
                            vec![set(acc, value), set(some, bool_literal(true, span))],
                            span,
                        ));
                    }
                    Optional::Reduce(f) => {
                        let value = whole(self, &item)?;
                        let combined = self.apply(f, &[Item::One(var(acc, span)), item], body)?;
                        body.push(Stmt::If(cudajit_core::ast::IfStmt {
                            cond: first,
                            then: Block {
                                stmts: vec![set(acc, value), set(some, bool_literal(true, span))],
                                tail: None,
                                span,
                            },
                            otherwise: Some(Box::new(cudajit_core::ast::Else::Block(Block {
                                stmts: vec![set(acc, combined)],
                                tail: None,
                                span,
                            }))),
                            span,
                        }));
                    }
                    Optional::Position(p) => {
                        let hit = self.apply(p, &[item], body)?;
                        body.push(if_then(
                            hit,
                            vec![set(some, bool_literal(true, span)), leave()],
                            span,
                        ));
                        body.push(Stmt::Assign {
                            place: var(acc, span),
                            op: Some(BinaryOp::Add),
                            value: usize_literal(1, span),
                            span,
                        });
                    }
                    Optional::Find(p) => {
                        let value = whole(self, &item)?;
                        let hit = self.apply(p, &[item], body)?;
                        body.push(if_then(
                            hit,
                            vec![
                                set(acc, value),
                                set(some, bool_literal(true, span)),
                                leave(),
                            ],
                            span,
                        ));
                    }
                    Optional::Last => {
                        let value = whole(self, &item)?;
                        body.push(set(acc, value));
                        body.push(set(some, bool_literal(true, span)));
                    }
                }
            }
            Consumer::For(pattern, block) => {
                self.push_scope();
                let bound = self.bind_item(pattern, &item, body);
                let parsed = self.block(block);
                self.pop_scope();
                if !bound {
                    return None;
                }
                let parsed = self.no_tail_in(parsed, block);
                body.push(Stmt::Block(parsed));
            }
        }
        Some(())
    }

    /// The value of `f` applied to `args`: a closure, inlined with its parameters bound to
    /// the arguments; or a function by path (`f32::max`, a `#[device]` function, a closure
    /// local), called with them.
    pub(super) fn apply(
        &mut self,
        f: &syn::Expr,
        args: &[Item],
        body: &mut Vec<Stmt>,
    ) -> Option<Expr> {
        self.apply_with(f, args, body, |parser, e| parser.expr(e))
    }

    /// `f` applied to single values (an `Option`'s `map`, `filter`, `unwrap_or_else`):
    /// as [`Parser::apply`], its body (or call) parsed by `parse`.
    pub(in crate::parse) fn apply_closure<R>(
        &mut self,
        f: &syn::Expr,
        args: Vec<Expr>,
        body: &mut Vec<Stmt>,
        parse: impl FnOnce(&mut Self, &syn::Expr) -> Option<R>,
    ) -> Option<R> {
        let items: Vec<Item> = args.into_iter().map(Item::One).collect();
        self.apply_with(f, &items, body, parse)
    }

    fn apply_with<R>(
        &mut self,
        f: &syn::Expr,
        args: &[Item],
        body: &mut Vec<Stmt>,
        parse: impl FnOnce(&mut Self, &syn::Expr) -> Option<R>,
    ) -> Option<R> {
        match f {
            syn::Expr::Paren(paren) => self.apply_with(&paren.expr, args, body, parse),
            syn::Expr::Closure(closure) => {
                if closure.inputs.len() != args.len() {
                    self.errors.at(
                        closure,
                        format!(
                            "this closure takes {} arguments here, not {}",
                            args.len(),
                            closure.inputs.len()
                        ),
                    );
                    return None;
                }
                if let Some(token) = &closure.capture {
                    self.errors.at(token, "`move` is not needed here: the closure is inlined where the chain runs; remove `move`");
                    return None;
                }
                self.push_scope();
                let mut bound = true;
                for (pattern, arg) in closure.inputs.iter().zip(args) {
                    bound &= self.bind_item(pattern, arg, body);
                }
                let value = if bound {
                    parse(self, &closure.body)
                } else {
                    None
                };
                self.pop_scope();
                value
            }
            syn::Expr::Path(_) => {
                // `f(a, b)` with each argument bound to a name for the call.
                let mut names: Vec<syn::Expr> = Vec::new();
                self.push_scope();
                for arg in args {
                    let Item::One(value) = arg else {
                        self.errors.at(f, "a function takes one value per argument here: take pairs apart with a closure, `|(i, v)| f(v)`");
                        self.pop_scope();
                        return None;
                    };
                    let name = format!("__cudajit_arg{}", self.next_view());
                    self.bind_alias(&name, value.clone());
                    let ident = syn::Ident::new(&name, proc_macro2::Span::call_site());
                    names.push(syn::parse_quote!(#ident));
                }
                let call: syn::Expr = syn::parse_quote!(#f(#(#names),*));
                let value = parse(self, &call);
                self.pop_scope();
                value
            }
            other => {
                self.errors.at(other, "an iterator adapter in a kernel takes a closure (`|v| v * 2.0`) or a function by name (`f32::max`)");
                None
            }
        }
    }

    /// Binds the names of a closure parameter's or a `for` loop's `pattern` to `item`:
    /// as references to it (`v`, `&v`, `&&v`: reading `v` or `*v` reads the item), as a
    /// copy for `mut v`, and pairs by tuple patterns.
    pub(super) fn bind_item(
        &mut self,
        pattern: &syn::Pat,
        item: &Item,
        body: &mut Vec<Stmt>,
    ) -> bool {
        match (pattern, item) {
            (syn::Pat::Type(typed), _) => self.bind_item(&typed.pat, item, body),
            (syn::Pat::Paren(paren), _) => self.bind_item(&paren.pat, item, body),
            (syn::Pat::Reference(reference), _) => self.bind_item(&reference.pat, item, body),
            (syn::Pat::Wild(_), _) => true,
            (syn::Pat::Ident(ident), Item::One(value))
                if ident.by_ref.is_none() && ident.subpat.is_none() =>
            {
                let name = ident.ident.to_string();
                if ident.mutability.is_some() {
                    body.push(Stmt::Let {
                        name: name.clone(),
                        mutable: true,
                        ty: None,
                        init: Some(value.clone()),
                        span: value.span,
                    });
                    self.bind(&name);
                } else {
                    self.bind_alias(&name, value.clone());
                }
                true
            }
            (syn::Pat::Tuple(tuple), Item::Pair(a, b)) if tuple.elems.len() == 2 => {
                let first = self.bind_item(&tuple.elems[0], a, body);
                let second = self.bind_item(&tuple.elems[1], b, body);
                first && second
            }
            (syn::Pat::Ident(_), Item::Pair(..)) => {
                self.errors
                    .at(pattern, "this item is a pair: take it apart, `|(i, v)|`");
                false
            }
            _ => {
                self.errors.at(pattern, "a closure of an iterator chain binds names, `&v`, `mut v`, `_` and pairs `(a, b)`");
                false
            }
        }
    }
}
