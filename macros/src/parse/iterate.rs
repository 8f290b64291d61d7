//! `for` loops over iterators: ranges with `.rev()` and `.step_by(s)`, and slices and
//! arrays through `iter()`, `iter_mut()`, `&x`, `&mut x` or by value, with `enumerate()`,
//! `zip(..)`, `copied()`/`cloned()`.
//!
//! Each becomes what a CUDA C++ programmer writes for it: a loop over an index range
//! (`for (size_t i = 0; i < min(n, m); ++i)`) whose body first binds the pattern's names:
//! a value to a local (`let v = x[$i]`), a reference to the element itself (`*y = v`
//! assigns `y[$i]`, read and written where the body does, as through a reference), the
//! index of `enumerate()` to the loop counter, or to a counter of its own where the
//! iteration order is not the index order. No iterator object exists at run time.

use cudajit_core::ast::{Block, Expr, ExprKind, Literal, RangeExpr, Stmt};
use cudajit_core::math::MathFunction;
use cudajit_core::{Scalar, Span};

use super::parser::Parser;
use super::stmt::label_name;
use super::{span_at, span_of};

const SUPPORTED: &str = "a `for` loop in a kernel iterates over a range (`a..b`, `a..=b`, with `.rev()` and `.step_by(s)`) or over a slice or array (`x`, `&x`, `x.iter()`, `x.iter_mut()`), with `.enumerate()`, `.zip(..)`, `.copied()`";

/// How an element of a slice or array is bound.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Access {
    /// By value: a copy (`for v in arr`, `.copied()`).
    Value,
    /// By reference: `&x[$i]` or `&mut x[$i]`, the element itself.
    Reference,
}

/// What one iteration yields.
#[derive(Clone, Debug)]
enum Lane {
    /// The value of a range: the loop variable.
    RangeValue,
    /// The loop variable as the index `enumerate()` gives, when they agree.
    Index,
    /// The iteration count, for an `enumerate()` whose index is not the loop variable.
    Counter,
    /// Element `$i` of a slice or array named `base`.
    Item { base: Expr, access: Access },
    /// `(a, b)`: `enumerate()` and `zip(..)`.
    Pair(Box<Lane>, Box<Lane>),
}

/// An iterator chain: the range its loop walks and what each step yields.
struct Chain {
    range: RangeExpr,
    lane: Lane,
    /// The range is `0..len` over the elements of slices or arrays.
    indexed: bool,
    /// Whether `enumerate()` needs a counter of its own.
    counter: bool,
    /// A by-value walk of the array named here (a copy in Rust).
    copied: Option<String>,
}

impl Parser<'_> {
    pub(super) fn for_loop(&mut self, for_loop: &syn::ExprForLoop) -> Option<Stmt> {
        // `for w in [a, b, c]` walks a hidden local bound to the literal before the loop, as
        // Rust evaluates the iterated value once, first.
        if matches!(&*for_loop.expr, syn::Expr::Array(_) | syn::Expr::Repeat(_)) {
            let mut walked = for_loop.clone();
            *walked.expr = self.bind_array_literal(&for_loop.expr)?;
            // The `let` stays out of the body, whose first statement would take it.
            let binding = std::mem::take(&mut self.pending);
            let stmt = self.for_loop(&walked);
            let mut during = std::mem::replace(&mut self.pending, binding);
            self.pending.append(&mut during);
            return stmt;
        }
        if super::iterator_chain::needs_pipeline(&for_loop.expr) {
            return self.for_chain(for_loop);
        }
        self.for_loop_with(for_loop, |parser| Some(parser.block(&for_loop.body)))
    }

    /// The loop `for_loop` writes, with the body `body` makes once the pattern's names are
    /// bound (the user's block, or an iterator chain's stages).
    pub(super) fn for_loop_with(
        &mut self,
        for_loop: &syn::ExprForLoop,
        body: impl FnOnce(&mut Self) -> Option<Block>,
    ) -> Option<Stmt> {
        let label = label_name(&for_loop.label);
        let span = span_of(for_loop.for_token.span);
        let chain = self.chain(&for_loop.expr)?;
        // A plain range keeps the user's name for its variable.
        let (var, direct) = match (&chain.lane, &*for_loop.pat) {
            (Lane::RangeValue, syn::Pat::Ident(ident))
                if ident.by_ref.is_none() && ident.subpat.is_none() =>
            {
                (ident.ident.to_string(), true)
            }
            (Lane::RangeValue, syn::Pat::Wild(_)) => ("_".to_owned(), true),
            _ => (self.fresh_name("index"), false),
        };
        let counter = chain.counter.then(|| self.fresh_name("count"));
        self.push_scope();
        self.bind(&var);
        let mut prelude = Vec::new();
        let bound = direct
            || self.bind_lane(
                &for_loop.pat,
                &chain.lane,
                &var,
                counter.as_deref(),
                &mut prelude,
            );
        if let Some(counter) = &counter {
            prelude.push(Stmt::Assign {
                place: var_expr(counter, span),
                op: Some(cudajit_core::ast::BinaryOp::Add),
                value: usize_literal(1, span),
                span,
            });
        }
        let written_before = self.written.len();
        self.loops.push((label.clone(), None));
        let body = body(self);
        self.loops.pop();
        self.pop_scope();
        if let Some(array) = &chain.copied {
            if self.written[written_before..].iter().any(|w| w == array) {
                self.errors.at(
                    &for_loop.expr,
                    format!("this loop walks a copy of `{array}` (arrays are iterated by value in Rust) while its body writes `{array}`, and kernels do not copy arrays: iterate over `{array}.iter_mut()` to change the elements, or over indices (`for k in 0..{array}.len()`)"),
                );
                return None;
            }
        }
        let (true, Some(body)) = (bound, body) else {
            return None;
        };
        let mut body = self.no_tail_in(body, &for_loop.body);
        prelude.append(&mut body.stmts);
        body.stmts = prelude;
        let stmt = Stmt::For {
            label,
            var,
            range: Box::new(chain.range),
            body,
            span,
        };
        match counter {
            Some(counter) => self.emit(vec![
                Stmt::Let {
                    name: counter,
                    mutable: true,
                    ty: None,
                    init: Some(usize_literal(0, span)),
                    span,
                },
                stmt,
            ]),
            None => Some(stmt),
        }
    }

    /// Binds the names of `pat` to what `lane` yields at loop variable `var`: locals set
    /// by `prelude`, or aliases of elements.
    fn bind_lane(
        &mut self,
        pat: &syn::Pat,
        lane: &Lane,
        var: &str,
        counter: Option<&str>,
        prelude: &mut Vec<Stmt>,
    ) -> bool {
        let span = span_at(pat);
        if let syn::Pat::Wild(_) = pat {
            return true;
        }
        if let syn::Pat::Paren(paren) = pat {
            return self.bind_lane(&paren.pat, lane, var, counter, prelude);
        }
        let value = match lane {
            Lane::Pair(first, second) => {
                let syn::Pat::Tuple(tuple) = pat else {
                    self.errors.at(
                        pat,
                        "this loop yields pairs: bind them with a tuple pattern, `for (i, v) in ..`",
                    );
                    return false;
                };
                let [a, b] = [tuple.elems.first(), tuple.elems.get(1)];
                let (Some(a), Some(b), 2) = (a, b, tuple.elems.len()) else {
                    self.errors.at(pat, "this loop yields pairs: `(a, b)`");
                    return false;
                };
                let first = self.bind_lane(a, first, var, counter, prelude);
                let second = self.bind_lane(b, second, var, counter, prelude);
                return first && second;
            }
            Lane::RangeValue | Lane::Index => var_expr(var, span),
            Lane::Counter => var_expr(counter.unwrap_or_default(), span),
            Lane::Item { base, access } => {
                let element = Expr {
                    kind: ExprKind::Index {
                        base: Box::new(base.clone()),
                        index: Box::new(var_expr(var, span)),
                    },
                    span,
                };
                match (access, pat) {
                    // `for &v in x.iter()`: a copy.
                    (Access::Reference, syn::Pat::Reference(reference)) => {
                        return self.bind_value(&reference.pat, element, prelude);
                    }
                    (Access::Reference, syn::Pat::Ident(ident))
                        if ident.by_ref.is_none() && ident.subpat.is_none() =>
                    {
                        // `for mut v in arr`: a copy the body may change.
                        if ident.mutability.is_some() {
                            return self.bind_value(pat, element, prelude);
                        }
                        self.bind_alias(&ident.ident.to_string(), element);
                        return true;
                    }
                    (Access::Reference, _) => {
                        self.errors.at(
                            pat,
                            "an element reference binds a name (`for y in x.iter_mut()`) or its value (`for &v in x.iter()`)",
                        );
                        return false;
                    }
                    (Access::Value, _) => element,
                }
            }
        };
        self.bind_value(pat, value, prelude)
    }

    /// `let [mut] name = value;` for a pattern that binds one name by value.
    fn bind_value(&mut self, pat: &syn::Pat, value: Expr, prelude: &mut Vec<Stmt>) -> bool {
        match pat {
            syn::Pat::Wild(_) => true,
            syn::Pat::Ident(ident) if ident.by_ref.is_none() && ident.subpat.is_none() => {
                let name = ident.ident.to_string();
                prelude.push(Stmt::Let {
                    name: name.clone(),
                    mutable: ident.mutability.is_some(),
                    ty: None,
                    span: value.span,
                    init: Some(value),
                });
                self.bind(&name);
                true
            }
            other => {
                self.errors.at(
                    other,
                    "a `for` loop binds names, `_`, `&v` and pairs `(i, v)` here",
                );
                false
            }
        }
    }

    /// The chain of iterator adapters `expr` writes.
    fn chain(&mut self, expr: &syn::Expr) -> Option<Chain> {
        let span = span_at(expr);
        match expr {
            syn::Expr::Paren(paren) => self.chain(&paren.expr),
            syn::Expr::Group(group) => self.chain(&group.expr),
            syn::Expr::Range(range) => {
                let (Some(start), Some(end)) = (&range.start, &range.end) else {
                    self.errors
                        .at(range, "a kernel range needs both ends: `a..b` or `a..=b`");
                    return None;
                };
                let start = self.expr(start);
                let end = self.expr(end);
                Some(Chain {
                    range: RangeExpr {
                        start: start?,
                        end: end?,
                        inclusive: matches!(range.limits, syn::RangeLimits::Closed(_)),
                        step: None,
                        reverse: false,
                        span,
                    },
                    lane: Lane::RangeValue,
                    indexed: false,
                    counter: false,
                    copied: None,
                })
            }
            syn::Expr::Reference(reference) => {
                let base = self.iterated(&reference.expr)?;
                Some(items(base, Access::Reference, span))
            }
            // By value: an array's elements are copies in Rust, a slice's references.
            // Both read the element where the body uses it, which is the copy's value as
            // long as the body does not write the array (checked after the body).
            syn::Expr::Path(_) => {
                let base = self.iterated(expr)?;
                let mut chain = items(base, Access::Reference, span);
                chain.copied = super::stmt::place_root(match &chain.lane {
                    Lane::Item { base, .. } => base,
                    _ => return Some(chain),
                })
                .map(str::to_owned);
                Some(chain)
            }
            syn::Expr::MethodCall(call) => self.adapter(call, span),
            other => {
                self.errors.at(other, SUPPORTED);
                None
            }
        }
    }

    /// `receiver.method(..)` of an iterator chain.
    fn adapter(&mut self, call: &syn::ExprMethodCall, span: Span) -> Option<Chain> {
        let method = call.method.to_string();
        let arguments = call.args.len();
        match (method.as_str(), arguments) {
            ("iter" | "iter_mut", 0) => {
                let base = self.iterated(&call.receiver)?;
                return Some(items(base, Access::Reference, span));
            }
            ("into_iter", 0) => return self.chain(&call.receiver),
            _ => {}
        }
        let mut chain = self.chain(&call.receiver)?;
        let order_fixed = chain.range.reverse || chain.range.step.is_some();
        match (method.as_str(), arguments) {
            ("step_by", 1) => {
                if chain.range.step.is_some() {
                    self.errors
                        .at(&call.method, "`step_by` can be applied once");
                    return None;
                }
                if chain.counter {
                    self.errors.at(&call.method, "`step_by` after `enumerate()` is not supported in kernels: step first, `(a..b).step_by(s).enumerate()`");
                    return None;
                }
                chain.range.step = Some(self.expr(&call.args[0])?);
            }
            ("rev", 0) => {
                if chain.range.step.is_some() {
                    self.errors.at(&call.method, "`.step_by(s).rev()` is not supported in kernels (it starts at the last element the steps reach): write `.rev().step_by(s)`, which starts at the last element of the range, or compute the first value");
                    return None;
                }
                if chain.counter || chain.range.reverse {
                    self.errors.at(&call.method, "`.rev()` applies once, before `enumerate()` of a range: `(a..b).rev().enumerate()`");
                    return None;
                }
                chain.range.reverse = true;
            }
            ("enumerate", 0) => {
                if chain.counter {
                    self.errors
                        .at(&call.method, "`enumerate()` applies once in a kernel loop");
                    return None;
                }
                // Over elements in index order the index is the loop variable itself.
                let index = if chain.indexed && !order_fixed {
                    Lane::Index
                } else {
                    chain.counter = true;
                    Lane::Counter
                };
                chain.lane = Lane::Pair(Box::new(index), Box::new(chain.lane));
            }
            ("zip", 1) => {
                let other = self.chain(&call.args[0])?;
                let plain = |c: &Chain| {
                    c.indexed && !c.counter && !c.range.reverse && c.range.step.is_none()
                };
                if !plain(&chain) || !plain(&other) {
                    self.errors.at(call, "`zip` in a kernel pairs slices and arrays walked in order, `x.iter().zip(y.iter_mut())` (with `.enumerate()` and `.rev()` after it, not before)");
                    return None;
                }
                let len = Expr {
                    kind: ExprKind::Math {
                        function: MathFunction::Min,
                        receiver: Box::new(chain.range.end),
                        args: vec![other.range.end],
                    },
                    span,
                };
                chain.range.end = len;
                chain.lane = Lane::Pair(Box::new(chain.lane), Box::new(other.lane));
                chain.copied = chain.copied.or(other.copied);
            }
            ("copied" | "cloned", 0) => match &mut chain.lane {
                Lane::Item { access, .. } => *access = Access::Value,
                _ => {
                    self.errors.at(&call.method, format!("`{method}()` applies to the elements of a slice or array: `x.iter().{method}()`"));
                    return None;
                }
            },
            _ => {
                self.errors.at(&call.method, SUPPORTED);
                return None;
            }
        }
        Some(chain)
    }

    /// The slice or array a loop walks: a name (a parameter, a local array, a shared
    /// array), so indexing it in every iteration reads the same memory.
    fn iterated(&mut self, expr: &syn::Expr) -> Option<Expr> {
        match expr {
            syn::Expr::Paren(paren) => self.iterated(&paren.expr),
            syn::Expr::Path(path) if path.path.get_ident().is_some() => self.expr(expr),
            other => {
                self.errors.at(
                    other,
                    "a kernel loop walks a slice or array by its name (`x.iter()`, `&mut y`): bind other values with `let` first",
                );
                None
            }
        }
    }
}

/// A chain over the elements of `base`, `0..base.len()`.
fn items(base: Expr, access: Access, span: Span) -> Chain {
    let len = Expr {
        kind: ExprKind::Len(Box::new(base.clone())),
        span,
    };
    Chain {
        range: RangeExpr {
            start: usize_literal(0, span),
            end: len,
            inclusive: false,
            step: None,
            reverse: false,
            span,
        },
        lane: Lane::Item { base, access },
        indexed: true,
        counter: false,
        copied: None,
    }
}

fn var_expr(name: &str, span: Span) -> Expr {
    Expr {
        kind: ExprKind::Var(name.to_owned()),
        span,
    }
}

fn usize_literal(value: u64, span: Span) -> Expr {
    Expr {
        kind: ExprKind::Lit(Literal::Int {
            value,
            suffix: Some(Scalar::Usize),
        }),
        span,
    }
}
