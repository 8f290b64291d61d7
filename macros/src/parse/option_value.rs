//! `Option<T>` values, resolved at capture time as a pair: whether a value is present
//! (`bool`) and the value (`T`, read only when present). An `Option` local `o` is the tuple
//! local `(o.0, o.1)` of `tuple.rs`, so both halves stay in registers, as nvcc keeps a
//! `bool` and a `float`; a `#[device]` function returning `Option<T>` returns the tuple
//! `(bool, T)`, and an `Option<T>` parameter is its two halves, as a tuple parameter is.
//!
//! What gives an `Option` (`Some(x)`, `None`, a local, `x.get(i)`, `map`, `and_then`,
//! `filter`, `or`, `or_else`, an iterator's `min`/`max`/`position`/`find`/`reduce`/
//! `last`, `if`/`match`/blocks ending in options, a call) becomes [`OptionParts`]: the
//! statements that compute it and the two halves. What takes one (`is_some`, `unwrap_or`,
//! `unwrap`, `?`, `if let`, `match`, `let … else`, `while let`, a `let`, an argument, a
//! return) reads the halves; `unwrap`/`expect` of `None` stops the kernel with Rust's
//! message, as `assert!` does.

use cudajit_core::ast::{
    Block, Expr, ExprKind, FormatPiece, IfStmt, Literal, Stmt, UnaryOp, ValueType,
};
use cudajit_core::Span;

use super::parser::Parser;
use super::span_at;
use super::tuple::element_name;

/// Where an `Option` value may stand.
pub(super) const OPTION_PLACES: &str = "this is an `Option`: in a kernel an `Option` is bound with `let`, passed to or returned from a `#[device]` function, matched (`if let Some(v)`, `match`, `let … else`), or read with `is_some`, `unwrap_or`, `unwrap_or_else`, `unwrap`, `map_or`, `?`";

/// Where `?` applies.
const TRY_PLACES: &str =
    "`?` in a kernel applies to an `Option` in a `#[device]` function that returns `Option<T>`";

/// An `Option` value taken apart.
pub(super) struct OptionParts {
    /// What runs first, in order (hidden locals it binds are in scope after it).
    pub prelude: Vec<Stmt>,
    /// `true` when a value is present.
    pub present: Expr,
    /// The value, evaluated only where `present` holds; `None` for the literal `None`.
    pub value: Option<Expr>,
}

fn var(name: &str, span: Span) -> Expr {
    Expr {
        kind: ExprKind::Var(name.to_owned()),
        span,
    }
}

fn bool_lit(value: bool, span: Span) -> Expr {
    Expr {
        kind: ExprKind::Lit(Literal::Bool(value)),
        span,
    }
}

fn not(operand: Expr) -> Expr {
    let span = operand.span;
    Expr {
        kind: ExprKind::Unary {
            op: UnaryOp::Not,
            operand: Box::new(operand),
        },
        span,
    }
}

fn tail_block(stmts: Vec<Stmt>, tail: Expr) -> Block {
    let span = tail.span;
    Block {
        stmts,
        tail: Some(Box::new(tail)),
        span,
    }
}

fn stmt_block(stmts: Vec<Stmt>, span: Span) -> Block {
    Block {
        stmts,
        tail: None,
        span,
    }
}

/// `{ stmts; tail }` as a value (just `tail` without statements).
fn block_value(stmts: Vec<Stmt>, tail: Expr) -> Expr {
    if stmts.is_empty() {
        return tail;
    }
    let span = tail.span;
    Expr {
        kind: ExprKind::Block(tail_block(stmts, tail)),
        span,
    }
}

fn if_value(cond: Expr, then: Block, otherwise: Block) -> Expr {
    let span = cond.span;
    Expr {
        kind: ExprKind::If {
            cond: Box::new(cond),
            then,
            otherwise,
        },
        span,
    }
}

fn if_stmt(cond: Expr, then: Vec<Stmt>, otherwise: Option<Vec<Stmt>>) -> Stmt {
    let span = cond.span;
    Stmt::If(IfStmt {
        cond,
        then: stmt_block(then, span),
        otherwise: otherwise
            .map(|stmts| Box::new(cudajit_core::ast::Else::Block(stmt_block(stmts, span)))),
        span,
    })
}

fn assign(name: &str, value: Expr) -> Stmt {
    let span = value.span;
    Stmt::Assign {
        place: var(name, span),
        op: None,
        value,
        span,
    }
}

fn let_mut(name: &str, ty: Option<ValueType>, init: Option<Expr>, span: Span) -> Stmt {
    Stmt::Let {
        name: name.to_owned(),
        mutable: true,
        ty,
        init,
        span,
    }
}

/// Whether evaluating `expr` twice, or where no value is present, is harmless: a local,
/// a literal or a field of one.
fn is_settled(expr: &Expr) -> bool {
    match &expr.kind {
        ExprKind::Var(_) | ExprKind::Lit(_) | ExprKind::Constant { .. } => true,
        ExprKind::Field { base, .. } => is_settled(base),
        _ => false,
    }
}

/// The zero of `ty`: what a `None` of a function returning `Option<T>` carries.
pub(super) fn zero_of(ty: &ValueType, span: Span) -> Expr {
    match ty {
        ValueType::Scalar(cudajit_core::Scalar::Bool) => bool_lit(false, span),
        other => Expr {
            kind: ExprKind::Constant {
                ty: Some(other.clone()),
                one: false,
            },
            span,
        },
    }
}

/// What the value half of an `Option` local of a struct or array type starts as (a
/// struct or array local has its value from the start): the type's zero. `None` for a
/// scalar, whose half may stay unset until a value is present.
fn zero_start(ty: &Option<ValueType>, span: Span) -> Option<Expr> {
    match ty.as_ref()? {
        ty @ ValueType::Struct(_) => Some(zero_of(ty, span)),
        ValueType::Array { elem, len } => {
            let len = match len {
                cudajit_core::ast::ArrayLen::Literal(n) => Expr {
                    kind: ExprKind::Lit(Literal::Int {
                        value: u64::from(*n),
                        suffix: Some(cudajit_core::Scalar::Usize),
                    }),
                    span,
                },
                cudajit_core::ast::ArrayLen::Generic(name) => var(name, span),
            };
            let value = match zero_start(&Some((**elem).clone()), span) {
                Some(nested) => nested,
                None => zero_of(elem, span),
            };
            Some(Expr {
                kind: ExprKind::Repeat {
                    value: Box::new(value),
                    len: Box::new(len),
                },
                span,
            })
        }
        _ => None,
    }
}

/// The type a `let` of a value of type `ty` is annotated with: an array's `let` names its
/// elements' scalar type (as `let acc: [f32; 4]` is captured).
fn let_type(ty: Option<ValueType>) -> Option<ValueType> {
    match ty {
        Some(ValueType::Array { elem, .. }) => let_type(Some(*elem)),
        other => other,
    }
}

/// A number of any type inference gives it: the value half of a `None` argument.
fn any_zero(span: Span) -> Expr {
    Expr {
        kind: ExprKind::Constant {
            ty: None,
            one: false,
        },
        span,
    }
}

/// `T` of `Option<T>` as written.
pub(super) fn option_inner(ty: &syn::Type) -> Option<&syn::Type> {
    let syn::Type::Path(path) = ty else {
        return None;
    };
    let last = path.path.segments.last()?;
    if path.qself.is_some() || last.ident != "Option" {
        return None;
    }
    match &last.arguments {
        syn::PathArguments::AngleBracketed(args) if args.args.len() == 1 => match &args.args[0] {
            syn::GenericArgument::Type(inner) => Some(inner),
            _ => None,
        },
        _ => None,
    }
}

/// `Some(x)`'s argument.
fn some_argument(expr: &syn::Expr) -> Option<&syn::Expr> {
    match expr {
        syn::Expr::Call(call) if call.args.len() == 1 => match &*call.func {
            syn::Expr::Path(path) if path.qself.is_none() && path.path.is_ident("Some") => {
                Some(&call.args[0])
            }
            _ => None,
        },
        _ => None,
    }
}

/// The value a block ends in, if it ends in one.
fn block_tail(block: &syn::Block) -> Option<&syn::Expr> {
    match block.stmts.last() {
        Some(syn::Stmt::Expr(expr, None)) => Some(expr),
        _ => None,
    }
}

/// An iterator consumer that gives an `Option`.
pub(super) fn is_optional_consumer(call: &syn::ExprMethodCall) -> bool {
    let optional = matches!(
        (call.method.to_string().as_str(), call.args.len()),
        ("min" | "max" | "last", 0)
            | (
                "min_by_key" | "max_by_key" | "min_by" | "max_by" | "reduce" | "position" | "find",
                1
            )
    );
    optional && super::iterator_chain::is_iterator(&call.receiver)
}

/// Whether a pattern is `Some(..)` or `None`.
pub(super) fn is_option_pattern(pat: &syn::Pat) -> bool {
    match pat {
        syn::Pat::TupleStruct(some) => some.qself.is_none() && some.path.is_ident("Some"),
        syn::Pat::Ident(ident) => ident.ident == "None" && ident.subpat.is_none(),
        syn::Pat::Path(path) => path.qself.is_none() && path.path.is_ident("None"),
        syn::Pat::Or(or) => or.cases.iter().any(is_option_pattern),
        syn::Pat::Paren(paren) => is_option_pattern(&paren.pat),
        _ => false,
    }
}

impl Parser<'_> {
    /// Declares `name` an `Option` local (its halves `name.0` and `name.1`).
    pub(super) fn bind_option_name(&mut self, name: &str) {
        self.bind(name);
        self.bind(&format!("{name}.?"));
        self.bind_tuple_name(name, 2);
    }

    /// Whether `expr` is, as written, an `Option` value.
    pub(super) fn is_option_value(&self, expr: &syn::Expr) -> bool {
        match expr {
            syn::Expr::Paren(paren) => self.is_option_value(&paren.expr),
            syn::Expr::Group(group) => self.is_option_value(&group.expr),
            syn::Expr::Call(_) => some_argument(expr).is_some(),
            syn::Expr::Path(path) if path.qself.is_none() => match path.path.get_ident() {
                Some(ident) if ident == "None" => !self.is_bound("None"),
                Some(ident) => self.is_option_local(&ident.to_string()),
                None => false,
            },
            syn::Expr::MethodCall(call) => {
                let method = call.method.to_string();
                match method.as_str() {
                    "copied" | "cloned" => self.is_option_value(&call.receiver),
                    "get" | "get_mut" | "partial_cmp" => call.args.len() == 1,
                    "map" | "filter" | "and_then" | "or" | "or_else" | "xor" => {
                        match &*call.receiver {
                            // A local, an element or a field is an `Option` only when it
                            // is one as written: `p.map(f)` of a struct local or `a[i]`
                            // is the struct's own method (a user's `fn map`).
                            syn::Expr::Path(_) | syn::Expr::Index(_) | syn::Expr::Field(_) => {
                                self.is_option_value(&call.receiver)
                            }
                            // A call's result may be an `Option` the parser cannot see.
                            receiver => {
                                self.is_option_value(receiver)
                                    || !super::iterator_chain::is_iterator(receiver)
                            }
                        }
                    }
                    _ => is_optional_consumer(call),
                }
            }
            syn::Expr::If(expr_if) => {
                block_tail(&expr_if.then_branch).is_some_and(|t| self.is_option_value(t))
                    || expr_if
                        .else_branch
                        .as_ref()
                        .is_some_and(|(_, other)| self.is_option_value(other))
            }
            syn::Expr::Block(block) if block.label.is_none() => {
                block_tail(&block.block).is_some_and(|t| self.is_option_value(t))
            }
            syn::Expr::Match(expr_match) => expr_match
                .arms
                .iter()
                .any(|arm| self.is_option_value(&arm.body)),
            _ => false,
        }
    }

    /// `expr`, which must be an `Option`, taken apart.
    /// [`Self::option_parts`] of an option whose `T` the syntax around it gives.
    fn option_parts_of(&mut self, expr: &syn::Expr, ty: Option<ValueType>) -> Option<OptionParts> {
        let outer = std::mem::replace(&mut self.option_type_hint, ty);
        let parts = self.option_parts(expr);
        self.option_type_hint = outer;
        parts
    }

    pub(super) fn option_parts(&mut self, expr: &syn::Expr) -> Option<OptionParts> {
        let span = span_at(expr);
        // The hint is this option's alone, not its parts'.
        let hint = self.option_type_hint.take();
        if let Some(argument) = some_argument(expr) {
            let mut prelude = Vec::new();
            // `Some([a, b])`: the array bound to a hidden local first, in the option's own
            // statements (a branch's locals stay in scope).
            let value = if matches!(argument, syn::Expr::Array(_) | syn::Expr::Repeat(_)) {
                let (binding, name) = self.hidden_array_let(argument)?;
                prelude.push(binding);
                self.expr(&name)?
            } else {
                self.expr(argument)?
            };
            let value = self.settled(value, &mut prelude);
            return Some(OptionParts {
                prelude,
                present: bool_lit(true, span),
                value: Some(value),
            });
        }
        match expr {
            syn::Expr::Paren(paren) => return self.option_parts_of(&paren.expr, hint),
            syn::Expr::Group(group) => return self.option_parts_of(&group.expr, hint),
            syn::Expr::Path(path) if path.qself.is_none() => {
                if let Some(ident) = path.path.get_ident() {
                    let name = ident.to_string();
                    if name == "None" && !self.is_bound("None") {
                        return Some(OptionParts {
                            prelude: Vec::new(),
                            present: bool_lit(false, span),
                            value: None,
                        });
                    }
                    if self.is_option_local(&name) {
                        return Some(OptionParts {
                            prelude: Vec::new(),
                            present: var(&element_name(&name, 0), span),
                            value: Some(var(&element_name(&name, 1), span)),
                        });
                    }
                }
            }
            syn::Expr::MethodCall(call) => {
                if let Some(parts) = self.option_method_parts(call) {
                    return parts;
                }
            }
            syn::Expr::If(_) | syn::Expr::Match(_) | syn::Expr::Block(_)
                if self.is_option_value(expr) =>
            {
                self.option_type_hint = hint;
                return self.branches_option(expr);
            }
            _ => {}
        }
        self.opaque_option(expr)
    }

    /// An `Option` whose parts the syntax does not show (a call, a parameter): a value of
    /// the tuple `(bool, T)`, bound once and read by its fields.
    fn opaque_option(&mut self, expr: &syn::Expr) -> Option<OptionParts> {
        let span = span_at(expr);
        let mut value = self.expr(expr)?;
        let mut prelude = Vec::new();
        // A call whose own `Option` arguments run statements first (`f(x, Some(y + 1))`):
        // those first, then the call.
        if let ExprKind::Block(block) = &mut value.kind {
            if matches!(
                block.tail.as_deref(),
                Some(Expr {
                    kind: ExprKind::Call { .. },
                    ..
                })
            ) {
                if let Some(call) = block.tail.take() {
                    prelude.append(&mut block.stmts);
                    value = *call;
                }
            }
        }
        let whole = if let ExprKind::Call { .. } = value.kind {
            // A call returning a tuple binds its elements (`tuple.rs`'s `let (a, b) = f(x)`).
            let name = self.fresh_name("option");
            prelude.push(Stmt::LetTuple {
                names: vec![
                    (element_name(&name, 0), true),
                    (element_name(&name, 1), true),
                ],
                init: value,
                span,
            });
            return Some(OptionParts {
                prelude,
                present: var(&element_name(&name, 0), span),
                value: Some(var(&element_name(&name, 1), span)),
            });
        } else {
            self.settled(value, &mut prelude)
        };
        let field = |index: usize| Expr {
            kind: ExprKind::Field {
                base: Box::new(whole.clone()),
                field: index.to_string(),
            },
            span,
        };
        Some(OptionParts {
            prelude,
            present: field(0),
            value: Some(field(1)),
        })
    }

    /// `value` as something that may be evaluated again: itself when it is a local or a
    /// literal, else a hidden local bound to it in `prelude`.
    fn settled(&mut self, value: Expr, prelude: &mut Vec<Stmt>) -> Expr {
        if is_settled(&value) {
            return value;
        }
        let span = value.span;
        let name = self.fresh_name("value");
        prelude.push(Stmt::Let {
            name: name.clone(),
            mutable: false,
            ty: None,
            init: Some(value),
            span,
        });
        var(&name, span)
    }

    /// `parts` with a value that may be evaluated anywhere: a value that may only be read
    /// where one is present (`x[i]` of `x.get(i)`) is copied there into a hidden local.
    pub(super) fn settle(&mut self, parts: OptionParts, span: Span) -> OptionParts {
        if parts.value.as_ref().is_none_or(is_settled) {
            return parts;
        }
        let name = self.fresh_name("option");
        let stmts = self.store_option(&name, parts, None, span);
        OptionParts {
            prelude: stmts,
            present: var(&element_name(&name, 0), span),
            value: Some(var(&element_name(&name, 1), span)),
        }
    }

    /// Declares the `Option` local `name` (halves typed by `ty`'s `T` when given) and
    /// stores `parts` in it: the statements, in order.
    fn store_option(
        &mut self,
        name: &str,
        parts: OptionParts,
        ty: Option<ValueType>,
        span: Span,
    ) -> Vec<Stmt> {
        let (present, value) = (element_name(name, 0), element_name(name, 1));
        let mut stmts = parts.prelude;
        let bool_ty = Some(ValueType::Scalar(cudajit_core::Scalar::Bool));
        stmts.push(let_mut(&present, bool_ty, Some(parts.present), span));
        match parts.value {
            Some(v) if is_settled(&v) => stmts.push(let_mut(&value, ty, Some(v), span)),
            Some(v) => {
                let start = zero_start(&ty, span);
                stmts.push(let_mut(&value, let_type(ty), start, span));
                stmts.push(if_stmt(var(&present, span), vec![assign(&value, v)], None));
            }
            None => {
                let start = zero_start(&ty, span);
                stmts.push(let_mut(&value, let_type(ty), start, span));
            }
        }
        stmts
    }

    /// The statements that assign `parts` to the existing `Option` local `name`.
    fn assign_option(&mut self, name: &str, parts: OptionParts, span: Span) -> Vec<Stmt> {
        let (present, value) = (element_name(name, 0), element_name(name, 1));
        let mut stmts = parts.prelude;
        stmts.push(assign(&present, parts.present));
        if let Some(v) = parts.value {
            if is_settled(&v) {
                stmts.push(assign(&value, v));
            } else {
                stmts.push(if_stmt(var(&present, span), vec![assign(&value, v)], None));
            }
        }
        stmts
    }

    /// `if`, `match` or a block whose branches end in options: each branch's option is
    /// assigned to one hidden `Option` local (a branch that leaves, `return None`, stays
    /// as it is).
    fn branches_option(&mut self, expr: &syn::Expr) -> Option<OptionParts> {
        let span = span_at(expr);
        self.temps += 1;
        let name = format!("__cudajit_option{}", self.temps);
        let ident = syn::Ident::new(&name, proc_macro2::Span::call_site());
        let ty = self.option_type_hint.take();
        let mut prelude = self.store_option(
            &name,
            OptionParts {
                prelude: Vec::new(),
                present: bool_lit(false, span),
                value: None,
            },
            ty,
            span,
        );
        self.bind_option_name(&name);
        let mut rewritten = expr.clone();
        assign_tails(&mut rewritten, &ident);
        let stmt = match &rewritten {
            syn::Expr::Block(block) => {
                let parsed = self.block(&block.block);
                Some(Stmt::Block(parsed))
            }
            other => self.expr_stmt(other),
        }?;
        prelude.append(&mut self.pending);
        prelude.push(stmt);
        Some(OptionParts {
            prelude,
            present: var(&element_name(&name, 0), span),
            value: Some(var(&element_name(&name, 1), span)),
        })
    }

    /// The `Option` methods that give an `Option`; `None` when `call` is not one.
    fn option_method_parts(&mut self, call: &syn::ExprMethodCall) -> Option<Option<OptionParts>> {
        let span = span_at(call);
        let method = call.method.to_string();
        let args: Vec<&syn::Expr> = call.args.iter().collect();
        if is_optional_consumer(call) {
            return Some(self.optional_chain(call));
        }
        Some(match (method.as_str(), args.as_slice()) {
            ("get" | "get_mut", [_]) => self.get_parts(call),
            ("partial_cmp", [_]) => return self.partial_cmp_parts(call),
            ("copied" | "cloned", []) => self.option_parts(&call.receiver),
            ("map", [_]) if self.refused_array_map(&call.receiver, &call.method) => None,
            ("map", [f]) => self.option_map(&call.receiver, f, false, span),
            ("and_then", [f]) => self.option_map(&call.receiver, f, true, span),
            ("filter", [p]) => self.option_filter(&call.receiver, p, span),
            ("or", [other]) => {
                let first = self.option_parts(&call.receiver);
                let second = self.option_parts(other);
                self.option_or(first?, |_| second, span)
            }
            ("or_else", [f]) => {
                let first = self.option_parts(&call.receiver)?;
                self.option_or(first, |parser| parser.closure_option(f), span)
            }
            _ => return None,
        })
    }

    /// `receiver.map(f)` (`and_then` when `chained`: `f` gives an `Option` itself).
    fn option_map(
        &mut self,
        receiver: &syn::Expr,
        f: &syn::Expr,
        chained: bool,
        span: Span,
    ) -> Option<OptionParts> {
        let input = self.option_parts(receiver)?;
        let name = self.fresh_name("option");
        let (present, value) = (element_name(&name, 0), element_name(&name, 1));
        let mut prelude = input.prelude;
        let bool_ty = Some(ValueType::Scalar(cudajit_core::Scalar::Bool));
        prelude.push(let_mut(
            &present,
            bool_ty,
            Some(input.present.clone()),
            span,
        ));
        prelude.push(let_mut(&value, None, None, span));
        let Some(item) = input.value else {
            // `None.map(f)`: nothing to apply `f` to.
            return Some(OptionParts {
                prelude,
                present: bool_lit(false, span),
                value: None,
            });
        };
        let mut body = Vec::new();
        if chained {
            let result =
                self.apply_closure(f, vec![item], &mut body, |parser, e| parser.option_parts(e))?;
            body.extend(self.assign_option(&name, result, span));
        } else {
            let result =
                self.apply_closure(f, vec![item], &mut body, |parser, e| parser.expr(e))?;
            body.push(assign(&value, result));
        }
        prelude.push(if_stmt(var(&present, span), body, None));
        Some(OptionParts {
            prelude,
            present: var(&present, span),
            value: Some(var(&value, span)),
        })
    }

    /// `receiver.filter(p)`: the value if `p(&value)` holds.
    fn option_filter(
        &mut self,
        receiver: &syn::Expr,
        p: &syn::Expr,
        span: Span,
    ) -> Option<OptionParts> {
        let input = self.option_parts(receiver)?;
        let input = self.settle(input, span);
        let Some(item) = input.value.clone() else {
            return Some(input);
        };
        let name = self.fresh_name("option");
        let present = element_name(&name, 0);
        let mut prelude = input.prelude;
        let bool_ty = Some(ValueType::Scalar(cudajit_core::Scalar::Bool));
        prelude.push(let_mut(
            &present,
            bool_ty,
            Some(bool_lit(false, span)),
            span,
        ));
        let mut body = Vec::new();
        let keep =
            self.apply_closure(p, vec![item.clone()], &mut body, |parser, e| parser.expr(e))?;
        body.push(assign(&present, keep));
        prelude.push(if_stmt(input.present, body, None));
        Some(OptionParts {
            prelude,
            present: var(&present, span),
            value: Some(item),
        })
    }

    /// `first.or(second)` and `first.or_else(|| second)`: `second` is taken apart by
    /// `otherwise` (for `or_else`, where `first` has no value only).
    fn option_or(
        &mut self,
        first: OptionParts,
        otherwise: impl FnOnce(&mut Self) -> Option<OptionParts>,
        span: Span,
    ) -> Option<OptionParts> {
        let name = self.fresh_name("option");
        let first = self.settle(first, span);
        let present = first.present.clone();
        let mut prelude = self.store_option(&name, first, None, span);
        let second = otherwise(self)?;
        let fallback = self.assign_option(&name, second, span);
        prelude.push(if_stmt(not(present), fallback, None));
        Some(OptionParts {
            prelude,
            present: var(&element_name(&name, 0), span),
            value: Some(var(&element_name(&name, 1), span)),
        })
    }

    /// `|| option` called: the closure's body as an `Option`.
    fn closure_option(&mut self, f: &syn::Expr) -> Option<OptionParts> {
        let mut body = Vec::new();
        let mut parts =
            self.apply_closure(f, Vec::new(), &mut body, |parser, e| parser.option_parts(e))?;
        body.append(&mut parts.prelude);
        parts.prelude = body;
        Some(parts)
    }

    /// `x.get(i)` of a slice or array by name: present when `i < x.len()`, the element
    /// `x[i]` (read only then).
    fn get_parts(&mut self, call: &syn::ExprMethodCall) -> Option<OptionParts> {
        let (index_let, present, element) = self.get_call(call)?;
        Some(OptionParts {
            prelude: vec![index_let],
            present,
            value: Some(element),
        })
    }

    /// An iterator chain ending in `min`, `max`, `position`, ...: its flag and value.
    fn optional_chain(&mut self, call: &syn::ExprMethodCall) -> Option<OptionParts> {
        let value = self.consume_chain(call)?;
        let ExprKind::Block(block) = value.kind else {
            return None;
        };
        let tail = block.tail.map(|tail| *tail);
        let Some(Expr {
            kind: ExprKind::Tuple(mut halves),
            ..
        }) = tail
        else {
            return None;
        };
        let value = halves.pop()?;
        let present = halves.pop()?;
        Some(OptionParts {
            prelude: block.stmts,
            present,
            value: Some(value),
        })
    }

    /// The methods of `Option` that give a plain value (`is_some`, `unwrap_or`, ..);
    /// `None` when `call` is not one of them.
    pub(super) fn option_value_method(
        &mut self,
        call: &syn::ExprMethodCall,
    ) -> Option<Option<Expr>> {
        let method = call.method.to_string();
        let args: Vec<&syn::Expr> = call.args.iter().collect();
        let known = matches!(
            (method.as_str(), args.len()),
            ("is_some" | "is_none" | "unwrap" | "unwrap_or_default", 0)
                | (
                    "expect" | "unwrap_or" | "unwrap_or_else" | "is_some_and" | "is_none_or",
                    1
                )
                | ("map_or" | "map_or_else", 2)
        );
        if !known {
            return None;
        }
        let span = span_at(call);
        Some((|| {
            let parts = self.option_parts(&call.receiver)?;
            let mut parts = self.settle(parts, span);
            let mut stmts = std::mem::take(&mut parts.prelude);
            let value = parts.value.unwrap_or_else(|| any_zero(span));
            let present = parts.present;
            let tail = match (method.as_str(), args.as_slice()) {
                ("is_some", []) => present,
                ("is_none", []) => not(present),
                ("unwrap", []) | ("expect", [_]) => {
                    let message = match args.first() {
                        Some(syn::Expr::Lit(syn::ExprLit {
                            lit: syn::Lit::Str(text),
                            ..
                        })) => text.value(),
                        Some(other) => {
                            self.errors
                                .at(other, "`expect` in a kernel takes a string literal");
                            return None;
                        }
                        None => "called `Option::unwrap()` on a `None` value".to_owned(),
                    };
                    stmts.push(Stmt::Assert {
                        cond: present,
                        text: message.clone(),
                        message: Some((vec![FormatPiece::Text(message)], Vec::new())),
                        debug_only: false,
                        span,
                    });
                    value
                }
                ("unwrap_or", [default]) => {
                    // The default is evaluated first, as Rust evaluates arguments.
                    let default = self.expr(default)?;
                    let default = self.settled(default, &mut stmts);
                    if_value(
                        present,
                        tail_block(Vec::new(), value),
                        tail_block(Vec::new(), default),
                    )
                }
                ("unwrap_or_default", []) => if_value(
                    present,
                    tail_block(Vec::new(), value),
                    tail_block(Vec::new(), any_zero(span)),
                ),
                ("unwrap_or_else", [f]) => {
                    let mut body = Vec::new();
                    let fallback =
                        self.apply_closure(f, Vec::new(), &mut body, |parser, e| parser.expr(e))?;
                    if_value(
                        present,
                        tail_block(Vec::new(), value),
                        tail_block(body, fallback),
                    )
                }
                ("is_some_and" | "is_none_or", [f]) => {
                    let mut body = Vec::new();
                    let test =
                        self.apply_closure(f, vec![value], &mut body, |parser, e| parser.expr(e))?;
                    let some = method == "is_some_and";
                    let (then, otherwise) = if some {
                        (
                            tail_block(body, test),
                            tail_block(Vec::new(), bool_lit(false, span)),
                        )
                    } else {
                        (
                            tail_block(body, test),
                            tail_block(Vec::new(), bool_lit(true, span)),
                        )
                    };
                    if_value(present, then, otherwise)
                }
                ("map_or", [default, f]) => {
                    let default = self.expr(default)?;
                    let default = self.settled(default, &mut stmts);
                    let mut body = Vec::new();
                    let mapped =
                        self.apply_closure(f, vec![value], &mut body, |parser, e| parser.expr(e))?;
                    if_value(
                        present,
                        tail_block(body, mapped),
                        tail_block(Vec::new(), default),
                    )
                }
                ("map_or_else", [d, f]) => {
                    let mut fallback_body = Vec::new();
                    let fallback =
                        self.apply_closure(d, Vec::new(), &mut fallback_body, |parser, e| {
                            parser.expr(e)
                        })?;
                    let mut body = Vec::new();
                    let mapped =
                        self.apply_closure(f, vec![value], &mut body, |parser, e| parser.expr(e))?;
                    if_value(
                        present,
                        tail_block(body, mapped),
                        tail_block(fallback_body, fallback),
                    )
                }
                _ => return None,
            };
            Some(block_value(stmts, tail))
        })())
    }

    /// `option?` in a device function returning `Option<T>`: the value, or `return None`.
    pub(super) fn try_value(&mut self, expr: &syn::ExprTry) -> Option<Expr> {
        let span = span_at(expr);
        let Some(inner) = self.returns_option.clone() else {
            self.errors.at(expr, TRY_PLACES);
            return None;
        };
        let parts = self.option_parts(&expr.expr)?;
        let mut parts = self.settle(parts, span);
        let mut stmts = std::mem::take(&mut parts.prelude);
        let none = Expr {
            kind: ExprKind::Tuple(vec![bool_lit(false, span), zero_of(&inner, span)]),
            span,
        };
        stmts.push(if_stmt(
            not(parts.present),
            vec![Stmt::Return {
                value: Some(none),
                span,
            }],
            None,
        ));
        let value = parts.value.unwrap_or_else(|| zero_of(&inner, span));
        Some(block_value(stmts, value))
    }

    /// What a `#[device]` function returning `Option<T>` returns: the tuple `(bool, T)`.
    pub(super) fn option_return(&mut self, expr: &syn::Expr, inner: &ValueType) -> Option<Expr> {
        let span = span_at(expr);
        let parts = self.option_parts_of(expr, Some(inner.clone()))?;
        let mut parts = self.settle(parts, span);
        // What computes it runs before the `return` (or the tail): the returned tuple
        // stays the plain `(a, b)` a function returning a tuple returns.
        self.pending.append(&mut parts.prelude);
        let value = parts.value.unwrap_or_else(|| zero_of(inner, span));
        Some(Expr {
            kind: ExprKind::Tuple(vec![parts.present, value]),
            span,
        })
    }

    /// An `Option` argument of a call: its two halves (as an `Option<T>` parameter is
    /// declared); what computes them goes to `prelude`.
    pub(super) fn option_argument(
        &mut self,
        arg: &syn::Expr,
        prelude: &mut Vec<Stmt>,
    ) -> Option<Vec<Expr>> {
        let span = span_at(arg);
        let parts = self.option_parts(arg)?;
        let mut parts = self.settle(parts, span);
        prelude.append(&mut parts.prelude);
        Some(vec![
            parts.present,
            parts.value.unwrap_or_else(|| any_zero(span)),
        ])
    }

    /// `let [mut] o[: Option<T>] = option;`: the `Option` local `o`. `None` when the
    /// statement is not about options.
    pub(super) fn option_let(&mut self, local: &syn::Local, span: Span) -> Option<Option<Stmt>> {
        let (pat, ty) = match &local.pat {
            syn::Pat::Type(typed) => (&*typed.pat, Some(&*typed.ty)),
            other => (other, None),
        };
        let syn::Pat::Ident(ident) = pat else {
            return None;
        };
        if ident.by_ref.is_some() || ident.subpat.is_some() {
            return None;
        }
        let annotated = ty.and_then(option_inner);
        let init = local.init.as_ref().map(|init| &*init.expr);
        if annotated.is_none() && !init.is_some_and(|init| self.is_option_value(init)) {
            return None;
        }
        let inner = match annotated {
            Some(inner) => match super::signature::value_type(inner, &self.generics) {
                Some(value) => Some(value),
                None => {
                    self.errors.at(
                        inner,
                        "an `Option` in a kernel holds a scalar (or a generic scalar type)",
                    );
                    return Some(None);
                }
            },
            None => None,
        };
        let parts = match init {
            Some(init) => self.option_parts_of(init, inner.clone()),
            None => Some(OptionParts {
                prelude: Vec::new(),
                present: bool_lit(false, span),
                value: None,
            }),
        };
        let name = ident.ident.to_string();
        let Some(parts) = parts else {
            self.bind_option_name(&name);
            return Some(None);
        };
        let stmts = self.store_option(&name, parts, inner, span);
        self.bind_option_name(&name);
        Some(self.emit(stmts))
    }

    /// `o = option;` of an `Option` local. `None` when `left` is not one.
    pub(super) fn option_assign(
        &mut self,
        left: &syn::Expr,
        right: &syn::Expr,
        span: Span,
    ) -> Option<Option<Stmt>> {
        let syn::Expr::Path(path) = left else {
            return None;
        };
        let name = path.path.get_ident()?.to_string();
        if !self.is_option_local(&name) {
            return None;
        }
        let Some(parts) = self.option_parts(right) else {
            return Some(None);
        };
        let stmts = self.assign_option(&name, parts, span);
        Some(Some(Stmt::Block(stmt_block(stmts, span))))
    }
}

/// Rewrites the values `expr`'s branches end in into assignments `target = value;` (a
/// branch that leaves, with `return`, `break`, `continue` or a panic, stays).
fn assign_tails(expr: &mut syn::Expr, target: &syn::Ident) {
    fn leaves(expr: &syn::Expr) -> bool {
        match expr {
            syn::Expr::Return(_) | syn::Expr::Break(_) | syn::Expr::Continue(_) => true,
            syn::Expr::Macro(mac) => ["panic", "unreachable", "todo", "unimplemented"]
                .iter()
                .any(|name| mac.mac.path.is_ident(name)),
            _ => false,
        }
    }
    fn in_block(block: &mut syn::Block, target: &syn::Ident) {
        if let Some(syn::Stmt::Expr(tail, semi @ None)) = block.stmts.last_mut() {
            match tail {
                syn::Expr::If(_) | syn::Expr::Match(_) => assign_tails(tail, target),
                syn::Expr::Block(inner) if inner.label.is_none() => {
                    in_block(&mut inner.block, target)
                }
                other if leaves(other) => {}
                other => {
                    let value = other.clone();
                    *other = syn::parse_quote!(#target = #value);
                }
            }
            *semi = Some(Default::default());
        }
    }
    match expr {
        syn::Expr::If(expr_if) => {
            in_block(&mut expr_if.then_branch, target);
            if let Some((_, otherwise)) = &mut expr_if.else_branch {
                match &mut **otherwise {
                    syn::Expr::Block(block) => in_block(&mut block.block, target),
                    nested => assign_tails(nested, target),
                }
            }
        }
        syn::Expr::Match(expr_match) => {
            for arm in &mut expr_match.arms {
                match &mut *arm.body {
                    syn::Expr::Block(block) if block.label.is_none() => {
                        in_block(&mut block.block, target)
                    }
                    syn::Expr::If(_) | syn::Expr::Match(_) => assign_tails(&mut arm.body, target),
                    other if leaves(other) => {}
                    other => {
                        let value = other.clone();
                        *other = syn::parse_quote!({ #target = #value; });
                    }
                }
            }
        }
        syn::Expr::Block(block) => in_block(&mut block.block, target),
        _ => {}
    }
}

/// `match` on an `Option`: the scrutinee is whether a value is present, `Some(..)` arms
/// match `true` (and bind the value), `None` arms `false`.
impl Parser<'_> {
    /// Whether `expr` matches an `Option`.
    pub(super) fn is_option_match(&self, expr: &syn::ExprMatch) -> bool {
        self.is_option_value(&expr.expr) || expr.arms.iter().any(|arm| is_option_pattern(&arm.pat))
    }

    /// What computes the scrutinee, whether it holds a value, and the value.
    pub(super) fn option_scrutinee(
        &mut self,
        expr: &syn::ExprMatch,
    ) -> Option<(Vec<Stmt>, Expr, Expr)> {
        let span = span_at(&expr.expr);
        let parts = self.option_parts(&expr.expr)?;
        let parts = self.settle(parts, span);
        let value = parts.value.unwrap_or_else(|| any_zero(span));
        Some((parts.prelude, parts.present, value))
    }

    /// The patterns of an arm of a `match` on an `Option`.
    pub(super) fn option_patterns(
        &mut self,
        pat: &syn::Pat,
    ) -> Option<Vec<cudajit_core::ast::Pattern>> {
        use cudajit_core::ast::Pattern;
        match pat {
            syn::Pat::Wild(_) => Some(vec![Pattern::Wildcard]),
            syn::Pat::Paren(paren) => self.option_patterns(&paren.pat),
            syn::Pat::TupleStruct(some)
                if some.qself.is_none() && some.path.is_ident("Some") && some.elems.len() == 1 =>
            {
                Some(vec![Pattern::Literal(Literal::Bool(true))])
            }
            _ if is_option_pattern(pat) && !matches!(pat, syn::Pat::Or(_)) => {
                Some(vec![Pattern::Literal(Literal::Bool(false))])
            }
            other => {
                self.errors.at(
                    other,
                    "an `Option` is matched in a kernel with `Some(v)`, `Some(_)`, `None` and `_` (test the value with a guard: `Some(v) if v > 0`)",
                );
                None
            }
        }
    }

    /// Binds the name of an arm's `Some(v)` to `value` (in the arm's scope): `v` reads it,
    /// `mut v` is a copy (the statement returned).
    pub(super) fn bind_option_arm(&mut self, pat: &syn::Pat, value: &Expr) -> Option<Vec<Stmt>> {
        match pat {
            syn::Pat::Paren(paren) => self.bind_option_arm(&paren.pat, value),
            syn::Pat::TupleStruct(some) if some.elems.len() == 1 => {
                self.bind_some(&some.elems[0], value.clone())
            }
            _ => Some(Vec::new()),
        }
    }
}
