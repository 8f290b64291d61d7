//! Iterator chains with adapters and consumers: `x.iter().map(|v| v * s).sum::<f32>()`,
//! `(0..n).filter(|k| k % 3 == 0).count()`, `a.iter().zip(b).fold(0.0, |acc, (p, q)| ..)`,
//! `x[lo..hi].iter().position(|&v| v < 0.0).unwrap_or(n)`, and `for` loops over chains
//! with `map`, `filter`, `take`, `skip`, `chain`, ...
//!
//! Each becomes the loop a CUDA C++ programmer writes for it, as the plain `for` loops of
//! `iterate.rs` do: one index loop over the chain's source (a range, or slices and arrays
//! with `enumerate`, `zip`, `rev`, `step_by`), whose body runs the adapters in order on
//! the item (a `map` binds its result, a `filter` skips to the next iteration, a `take`
//! counts and leaves the loop) and then the consumer (`sum` adds into an accumulator,
//! `any` sets a flag and leaves). Closures are inlined where they apply: their parameter
//! patterns (`|&v|`, `|(i, v)|`, `|acc, v|`) bind the item's parts, as references (so
//! `*v` and `**v` read them) or, for `mut` names, as copies. No iterator exists at run
//! time, and every adapter is one comparison or one local in the loop.

use cudajit_core::ast::{BinaryOp, Block, Expr, ExprKind, Literal, Stmt, UnaryOp, ValueType};
use cudajit_core::{Scalar, Span};

use super::parser::Parser;
use super::signature::value_type;
use super::span_at;
pub(super) use for_each::is_for_each;

mod consume;
mod for_each;
mod source;
mod stages;

/// What the chain's adapters may be, for the error of any other.
const ADAPTERS: &str = "iterator chains in kernels take the adapters `map`, `filter`, `enumerate`, `zip`, `rev` (on the source), `step_by`, `take`, `skip`, `take_while`, `skip_while`, `chain`, `copied` and `cloned`";

/// The consumers, for the error of any other.
const CONSUMERS: &str = "iterator chains in kernels end in `sum`, `product`, `count`, `fold`, `any`, `all`, `min`, `max`, `min_by_key`, `max_by_key`, `min_by`, `max_by`, `reduce`, `position`, `find` or `last` (the ones giving an `Option`), or are walked by a `for` loop";

/// An item as it moves through the chain: a value or place, or a pair of them
/// (`enumerate`, `zip`).
#[derive(Clone, Debug)]
enum Item {
    One(Expr),
    Pair(Box<Item>, Box<Item>),
}

/// One step of the chain after its source.
#[derive(Clone, Copy)]
enum Stage<'s> {
    Map(&'s syn::Expr),
    Filter(&'s syn::Expr),
    Enumerate,
    Zip(&'s syn::Expr),
    StepBy(&'s syn::Expr),
    Take(&'s syn::Expr),
    Skip(&'s syn::Expr),
    TakeWhile(&'s syn::Expr),
    SkipWhile(&'s syn::Expr),
}

/// What ends the chain.
enum Consumer<'s> {
    Sum(Option<ValueType>),
    Product(Option<ValueType>),
    Count,
    Fold(&'s syn::Expr, &'s syn::Expr),
    Any(&'s syn::Expr),
    All(&'s syn::Expr),
    /// `min`/`max` (`true` for max), `min_by_key`/`max_by_key` with the key function,
    /// `reduce`, `position`, `find`, `last`: an `Option` (`option_value.rs`).
    Optional(Optional<'s>),
    /// A `for` loop's pattern and body.
    For(&'s syn::Pat, &'s syn::Block),
}

enum Optional<'s> {
    Extreme {
        max: bool,
        key: Option<&'s syn::Expr>,
    },
    /// `min_by`/`max_by` (`true` for max) with the comparator, which gives an `Ordering`.
    ExtremeBy {
        max: bool,
        compare: &'s syn::Expr,
    },
    Reduce(&'s syn::Expr),
    Position(&'s syn::Expr),
    Find(&'s syn::Expr),
    Last,
}

/// The parts of a chain: where it starts (one source, or several joined by `chain`) and
/// the stages after that.
struct Parts<'s> {
    sources: Vec<Source<'s>>,
    stages: Vec<Stage<'s>>,
}

/// A source of a chain: a `for` loop's iterator as `iterate.rs` reads it, and the stages
/// only its items go through (those before a `chain`).
struct Source<'s> {
    expr: syn::Expr,
    stages: Vec<Stage<'s>>,
}

/// What a stage keeps across the loop: its counter's name, and for `zip` the slice it
/// pairs with and where in it the pairing starts.
struct StageState {
    counter: String,
    partner: Option<(Expr, Expr)>,
}

/// The method call under `expr`, through parentheses.
fn method_call(expr: &syn::Expr) -> Option<&syn::ExprMethodCall> {
    match expr {
        syn::Expr::Paren(paren) => method_call(&paren.expr),
        syn::Expr::MethodCall(call) => Some(call),
        _ => None,
    }
}

/// Whether `expr` is an iterator: a range, or a chain of adapters over `.iter()`,
/// `.iter_mut()` or `.into_iter()`.
pub(super) fn is_iterator(expr: &syn::Expr) -> bool {
    match expr {
        syn::Expr::Paren(paren) => is_iterator(&paren.expr),
        syn::Expr::Range(_) => true,
        syn::Expr::MethodCall(call) => {
            let method = call.method.to_string();
            matches!(method.as_str(), "iter" | "iter_mut" | "into_iter")
                || (is_adapter(&method) && is_iterator(&call.receiver))
        }
        _ => false,
    }
}

fn is_adapter(method: &str) -> bool {
    matches!(
        method,
        "map"
            | "filter"
            | "enumerate"
            | "zip"
            | "rev"
            | "step_by"
            | "take"
            | "skip"
            | "take_while"
            | "skip_while"
            | "chain"
            | "copied"
            | "cloned"
    )
}

/// Whether a `for` loop over `expr` needs this module: a chain a plain loop of
/// `iterate.rs` does not take, or one walking a slice that is not a name.
pub(super) fn needs_pipeline(expr: &syn::Expr) -> bool {
    source_shape(expr).is_none() || !walks_names(expr)
}

/// How a plain loop (`iterate.rs`) walks `expr`, if it takes it (mirroring its rules): over
/// the elements of slices and arrays (`indexed`) or a range, reversed, stepped, with its
/// own `enumerate` counter.
#[derive(Clone, Copy)]
struct SourceShape {
    indexed: bool,
    reverse: bool,
    step: bool,
    counter: bool,
}

fn source_shape(expr: &syn::Expr) -> Option<SourceShape> {
    let plain = |indexed| SourceShape {
        indexed,
        reverse: false,
        step: false,
        counter: false,
    };
    match expr {
        syn::Expr::Paren(paren) => source_shape(&paren.expr),
        syn::Expr::Range(_) => Some(plain(false)),
        syn::Expr::Path(_) => Some(plain(true)),
        syn::Expr::Reference(reference) => is_name(&reference.expr).then(|| plain(true)),
        syn::Expr::MethodCall(call) => {
            let method = call.method.to_string();
            match (method.as_str(), call.args.len()) {
                ("iter" | "iter_mut", 0) => Some(plain(true)),
                ("into_iter", 0) => source_shape(&call.receiver),
                ("rev", 0) => {
                    let s = source_shape(&call.receiver)?;
                    (!s.step && !s.counter && !s.reverse)
                        .then_some(SourceShape { reverse: true, ..s })
                }
                ("step_by", 1) => {
                    let s = source_shape(&call.receiver)?;
                    (!s.step && !s.counter).then_some(SourceShape { step: true, ..s })
                }
                ("enumerate", 0) => {
                    let s = source_shape(&call.receiver)?;
                    if s.counter {
                        return None;
                    }
                    let counter = !(s.indexed && !s.reverse && !s.step);
                    Some(SourceShape { counter, ..s })
                }
                ("zip", 1) => {
                    let (a, b) = (source_shape(&call.receiver)?, source_shape(&call.args[0])?);
                    let in_order =
                        |s: SourceShape| s.indexed && !s.counter && !s.reverse && !s.step;
                    (in_order(a) && in_order(b)).then_some(a)
                }
                ("copied" | "cloned", 0) => {
                    let s = source_shape(&call.receiver)?;
                    s.indexed.then_some(s)
                }
                _ => None,
            }
        }
        _ => None,
    }
}

/// Whether every slice `expr` walks through `.iter()` is a name (a plain loop's rule).
fn walks_names(expr: &syn::Expr) -> bool {
    match method_call(expr) {
        Some(call) => {
            let method = call.method.to_string();
            if matches!(method.as_str(), "iter" | "iter_mut") {
                return is_name(&call.receiver);
            }
            walks_names(&call.receiver) && call.args.iter().all(walks_names)
        }
        None => true,
    }
}

fn is_name(expr: &syn::Expr) -> bool {
    match expr {
        syn::Expr::Paren(paren) => is_name(&paren.expr),
        syn::Expr::Path(path) => path.path.get_ident().is_some(),
        _ => false,
    }
}

/// Whether a method ends an iterator chain as a value.
pub(super) fn is_consumer(call: &syn::ExprMethodCall) -> bool {
    let method = call.method.to_string();
    let consumer = matches!(
        method.as_str(),
        "sum" | "product" | "count" | "fold" | "any" | "all"
    );
    (consumer || super::option_value::is_optional_consumer(call)) && is_iterator(&call.receiver)
}
impl Parser<'_> {
    /// An iterator chain ending in a consumer, as a value.
    pub(super) fn consume_chain(&mut self, call: &syn::ExprMethodCall) -> Option<Expr> {
        let span = span_at(call);
        let (consumer, chain) = self.consumer(call)?;
        let parts = self.parts(chain)?;
        self.pipeline(parts, consumer, None, span)
    }

    /// `for pat in chain { body }` over a chain with adapters.
    pub(super) fn for_chain(&mut self, for_loop: &syn::ExprForLoop) -> Option<Stmt> {
        let span = span_at(for_loop);
        let label = super::stmt::label_name(&for_loop.label);
        let parts = self.parts(&for_loop.expr)?;
        let consumer = Consumer::For(&for_loop.pat, &for_loop.body);
        let value = self.pipeline(parts, consumer, label, span)?;
        let ExprKind::Block(mut block) = value.kind else {
            return None;
        };
        // A loop gives no value.
        block.tail = None;
        Some(Stmt::Block(block))
    }

    fn consumer<'s>(
        &mut self,
        call: &'s syn::ExprMethodCall,
    ) -> Option<(Consumer<'s>, &'s syn::Expr)> {
        let method = call.method.to_string();
        let args: Vec<&syn::Expr> = call.args.iter().collect();
        let turbofish = |g: &Option<syn::AngleBracketedGenericArguments>| -> Option<ValueType> {
            let arg = g.as_ref()?.args.first()?;
            match arg {
                syn::GenericArgument::Type(ty) => value_type(ty, &self.generics),
                _ => None,
            }
        };
        let consumer = match (method.as_str(), args.as_slice()) {
            ("sum", []) => Consumer::Sum(turbofish(&call.turbofish)),
            ("product", []) => Consumer::Product(turbofish(&call.turbofish)),
            ("count", []) => Consumer::Count,
            ("fold", [init, f]) => Consumer::Fold(init, f),
            ("any", [p]) => Consumer::Any(p),
            ("all", [p]) => Consumer::All(p),
            ("min", []) => Consumer::Optional(Optional::Extreme {
                max: false,
                key: None,
            }),
            ("max", []) => Consumer::Optional(Optional::Extreme {
                max: true,
                key: None,
            }),
            ("min_by_key", [f]) => Consumer::Optional(Optional::Extreme {
                max: false,
                key: Some(f),
            }),
            ("max_by_key", [f]) => Consumer::Optional(Optional::Extreme {
                max: true,
                key: Some(f),
            }),
            ("min_by", [f]) => Consumer::Optional(Optional::ExtremeBy {
                max: false,
                compare: f,
            }),
            ("max_by", [f]) => Consumer::Optional(Optional::ExtremeBy {
                max: true,
                compare: f,
            }),
            ("reduce", [f]) => Consumer::Optional(Optional::Reduce(f)),
            ("position", [p]) => Consumer::Optional(Optional::Position(p)),
            ("find", [p]) => Consumer::Optional(Optional::Find(p)),
            ("last", []) => Consumer::Optional(Optional::Last),
            _ => {
                self.errors.at(call, CONSUMERS);
                return None;
            }
        };
        Some((consumer, &call.receiver))
    }

    /// The chain's sources and stages, innermost first.
    fn parts<'s>(&mut self, chain: &'s syn::Expr) -> Option<Parts<'s>> {
        let mut stages = Vec::new();
        let mut at = chain;
        while let Some(call) = method_call(at) {
            let method = call.method.to_string();
            let args: Vec<&syn::Expr> = call.args.iter().collect();
            // What `iterate.rs` walks itself stays the source, unless a stage of ours
            // came before it (an `enumerate()` after a `filter` counts what passes).
            // What a plain loop walks stays the source (its sub-slices named later).
            if source_shape(at).is_some() {
                break;
            }
            let stage = match (method.as_str(), args.as_slice()) {
                ("iter" | "iter_mut" | "into_iter", []) => break,
                ("map", [f]) => Stage::Map(f),
                ("filter", [p]) => Stage::Filter(p),
                ("enumerate", []) => Stage::Enumerate,
                ("zip", [other]) => Stage::Zip(other),
                ("step_by", [s]) => Stage::StepBy(s),
                ("take", [n]) => Stage::Take(n),
                ("skip", [n]) => Stage::Skip(n),
                ("take_while", [p]) => Stage::TakeWhile(p),
                ("skip_while", [p]) => Stage::SkipWhile(p),
                ("copied" | "cloned", []) => {
                    at = &call.receiver;
                    continue;
                }
                ("chain", [other]) => {
                    // Each side's stages apply to its own items only.
                    let mut sources = Vec::new();
                    for side in [&*call.receiver, *other] {
                        let part = self.parts(side)?;
                        for mut source in part.sources {
                            source.stages.extend(part.stages.iter().copied());
                            sources.push(source);
                        }
                    }
                    stages.reverse();
                    return Some(Parts { sources, stages });
                }
                ("rev", []) => {
                    let after_step =
                        method_call(&call.receiver).is_some_and(|r| r.method == "step_by");
                    let message = if after_step {
                        "`.step_by(s).rev()` is not supported in kernels (it starts at the last element the steps reach): write `.rev().step_by(s)`, which starts at the last element of the range, or compute the first value"
                    } else {
                        "`.rev()` reverses the source of a chain in kernels: write it before `map`, `filter` and the other adapters (`x.iter().rev().map(..)`)"
                    };
                    self.errors.at(&call.method, message);
                    return None;
                }
                ("chunks" | "windows" | "chunks_exact", _) => {
                    self.errors.at(&call.method, format!("`{method}` is not supported in kernels (it yields sub-slices): walk the starts with an index loop, `for k in (0..x.len()).step_by(n)`, and index `x[k + j]`"));
                    return None;
                }
                _ => {
                    self.errors.at(
                        &call.method,
                        format!("`{method}` is not an iterator adapter kernels know: {ADAPTERS}"),
                    );
                    return None;
                }
            };
            stages.push(stage);
            at = &call.receiver;
        }
        stages.reverse();
        Some(Parts {
            sources: vec![Source {
                expr: at.clone(),
                stages: Vec::new(),
            }],
            stages,
        })
    }

    /// The block that runs the chain: counters and the accumulator, the loop (or, for
    /// `chain`, one loop per source in a labelled block), the result.
    fn pipeline(
        &mut self,
        parts: Parts<'_>,
        consumer: Consumer<'_>,
        label: Option<String>,
        span: Span,
    ) -> Option<Expr> {
        let mut stmts = Vec::new();
        if label.is_some() && parts.sources.len() > 1 {
            self.errors.at(&parts.sources[1].expr, "a labelled `for` loop walks one source in kernels: label a loop around it, or join the sources another way");
            return None;
        }
        // One source: its loop is what `break` leaves (with the user's label, so that
        // `continue 'label` goes on with the next item). Two (`chain`): a loop around them.
        let single = parts.sources.len() == 1;
        let exit = match label {
            Some(label) => label,
            None => self.fresh_label("chain"),
        };
        let acc = self.fresh_name("acc");
        let some = self.fresh_name("some");
        self.bind(&acc);
        self.bind(&some);
        self.push_scope();
        let result = self.accumulator(&consumer, &acc, &some, span, &mut stmts);
        let mut state = Vec::new();
        let mut complete = result.is_some();
        let mut loops = Vec::new();
        // What the stages keep, made once before every loop: the shared stages' state
        // runs on across the sources of a `chain`.
        let mut shared = Vec::new();
        for stage in &parts.stages {
            match self.stage_state(stage, span, &mut state) {
                Some(kept) => shared.push(kept),
                None => complete = false,
            }
        }
        let mut own = Vec::new();
        for source in &parts.sources {
            let mut kept = Vec::new();
            for stage in &source.stages {
                match self.stage_state(stage, span, &mut state) {
                    Some(one) => kept.push(one),
                    None => complete = false,
                }
            }
            own.push(kept);
        }
        stmts.append(&mut state);
        if !complete {
            self.pop_scope();
            return None;
        }
        for (source, own) in parts.sources.iter().zip(&own) {
            let inner = if single {
                exit.clone()
            } else {
                self.fresh_label("source")
            };
            let looped = self.source_loop(
                source,
                (&parts.stages, &shared, own),
                &consumer,
                (&acc, &some),
                (&inner, &exit),
                span,
            );
            match looped {
                Some(stmt) => loops.push(stmt),
                None => complete = false,
            }
        }
        self.pop_scope();
        if !complete {
            return None;
        }
        if single {
            stmts.append(&mut loops);
        } else {
            // One labelled loop around the sources, left at its end.
            loops.push(Stmt::Break {
                label: Some(exit.clone()),
                span,
            });
            stmts.push(Stmt::Loop {
                label: Some(exit),
                body: Block {
                    stmts: loops,
                    tail: None,
                    span,
                },
                span,
            });
        }
        Some(Expr {
            kind: ExprKind::Block(Block {
                stmts,
                tail: result.map(Box::new),
                span,
            }),
            span,
        })
    }
}

pub(super) fn var(name: &str, span: Span) -> Expr {
    Expr {
        kind: ExprKind::Var(name.to_owned()),
        span,
    }
}

pub(super) fn usize_literal(value: u64, span: Span) -> Expr {
    Expr {
        kind: ExprKind::Lit(Literal::Int {
            value,
            suffix: Some(Scalar::Usize),
        }),
        span,
    }
}

pub(super) fn bool_literal(value: bool, span: Span) -> Expr {
    Expr {
        kind: ExprKind::Lit(Literal::Bool(value)),
        span,
    }
}

pub(super) fn binary(op: BinaryOp, left: Expr, right: Expr, span: Span) -> Expr {
    Expr {
        kind: ExprKind::Binary {
            op,
            left: Box::new(left),
            right: Box::new(right),
        },
        span,
    }
}

pub(super) fn not(value: Expr, span: Span) -> Expr {
    Expr {
        kind: ExprKind::Unary {
            op: UnaryOp::Not,
            operand: Box::new(value),
        },
        span,
    }
}

pub(super) fn if_then(cond: Expr, stmts: Vec<Stmt>, span: Span) -> Stmt {
    Stmt::If(cudajit_core::ast::IfStmt {
        cond,
        then: Block {
            stmts,
            tail: None,
            span,
        },
        otherwise: None,
        span,
    })
}
