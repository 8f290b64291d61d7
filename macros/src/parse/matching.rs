//! `match` on integers and `bool`s: literal, range, `|` and `_` patterns, `if` guards.
//! (A `match` on a struct is the `if` chain of `struct_values.rs`.)

use cudajit_core::ast::{Block, Expr, ExprKind, Literal, MatchArm, Pattern, Stmt};

use super::parser::Parser;
use super::{span_at, span_of};

impl Parser<'_> {
    /// `match` used as a statement: arms produce no value.
    pub(super) fn match_stmt(&mut self, expr: &syn::ExprMatch) -> Option<Stmt> {
        if super::struct_values::is_struct_match(expr) {
            let chain = self.struct_match(expr, false)?;
            return self.expr_stmt(&chain);
        }
        if self.refused_tuple_scrutinee(expr) {
            return None;
        }
        if self.is_option_match(expr) {
            let (prelude, scrutinee, value) = self.option_scrutinee(expr)?;
            let arms = self.arms(expr, false, Some(&value))?;
            let mut stmts = prelude;
            stmts.push(Stmt::Match {
                scrutinee,
                arms,
                span: span_of(expr.match_token.span),
            });
            return Some(Stmt::Block(Block {
                stmts,
                tail: None,
                span: span_of(expr.match_token.span),
            }));
        }
        let scrutinee = self.expr(&expr.expr);
        let arms = self.arms(expr, false, None)?;
        Some(Stmt::Match {
            scrutinee: scrutinee?,
            arms,
            span: span_of(expr.match_token.span),
        })
    }

    /// `match` used as a value: every arm ends in a value.
    pub(super) fn match_value(&mut self, expr: &syn::ExprMatch) -> Option<Expr> {
        if super::struct_values::is_struct_match(expr) {
            let chain = self.struct_match(expr, true)?;
            return self.expr(&chain);
        }
        if self.refused_tuple_scrutinee(expr) {
            return None;
        }
        if self.is_option_match(expr) {
            let span = span_of(expr.match_token.span);
            let (prelude, scrutinee, value) = self.option_scrutinee(expr)?;
            let arms = self.arms(expr, true, Some(&value))?;
            let value = Expr {
                kind: ExprKind::Match {
                    scrutinee: Box::new(scrutinee),
                    arms,
                },
                span,
            };
            return Some(Expr {
                kind: ExprKind::Block(Block {
                    stmts: prelude,
                    tail: Some(Box::new(value)),
                    span,
                }),
                span,
            });
        }
        let scrutinee = self.expr(&expr.expr);
        let arms = self.arms(expr, true, None)?;
        Some(Expr {
            kind: ExprKind::Match {
                scrutinee: Box::new(scrutinee?),
                arms,
            },
            span: span_of(expr.match_token.span),
        })
    }

    /// The arms of `expr`; `option` is the value of an `Option` scrutinee, whose `Some(v)`
    /// arms bind `v` to it (`option_value.rs`).
    fn arms(
        &mut self,
        expr: &syn::ExprMatch,
        values: bool,
        option: Option<&Expr>,
    ) -> Option<Vec<MatchArm>> {
        let mut arms = Vec::new();
        let mut ok = true;
        for arm in &expr.arms {
            let errors_before = self.errors.len();
            let patterns = match option {
                Some(_) => self.option_patterns(&arm.pat),
                None => self.patterns(&arm.pat),
            };
            // A rejected pattern may bind names: declare them for this arm, so their uses
            // add no errors of their own.
            self.push_scope();
            if patterns.is_none() {
                self.bind_pattern_names(&arm.pat);
            }
            let copies = match option {
                Some(value) => self.bind_option_arm(&arm.pat, value),
                None => Some(Vec::new()),
            };
            let guard = arm.guard.as_ref().map(|(_, guard)| self.expr(guard));
            let body = match &*arm.body {
                syn::Expr::Block(block) if block.label.is_none() => self.block(&block.block),
                other if values => {
                    let value = self.expr(other);
                    Block {
                        stmts: Vec::new(),
                        tail: value.map(Box::new),
                        span: span_at(other),
                    }
                }
                other => {
                    let statement = self.arm_statement(other);
                    Block {
                        stmts: statement.into_iter().collect(),
                        tail: None,
                        span: span_at(other),
                    }
                }
            };
            self.pop_scope();
            let mut body = body;
            match copies {
                Some(mut copies) => {
                    copies.append(&mut body.stmts);
                    body.stmts = copies;
                }
                None => ok = false,
            }
            let reported = self.errors.len() > errors_before;
            if values && body.tail.is_none() && !reported {
                self.errors.at(
                    &arm.body,
                    "this `match` is used as a value, so every arm must end in a value",
                );
                ok = false;
            }
            if !values && body.tail.is_some() {
                self.errors.at(
                    &arm.body,
                    "this `match` is a statement, so its arms cannot end in a value: add `;`",
                );
                ok = false;
            }
            match (patterns, guard) {
                (Some(patterns), None) => arms.push(MatchArm {
                    patterns,
                    guard: None,
                    body,
                    span: span_at(arm),
                }),
                (Some(patterns), Some(Some(guard))) => arms.push(MatchArm {
                    patterns,
                    guard: Some(guard),
                    body,
                    span: span_at(arm),
                }),
                _ => ok = false,
            }
        }
        ok.then_some(arms)
    }

    /// An arm written without braces in a statement `match`: `0 => y[i] = 1.0,`.
    fn arm_statement(&mut self, expr: &syn::Expr) -> Option<Stmt> {
        let block: syn::Block = syn::parse_quote!({ #expr; });
        let mut parsed = self.block(&block);
        // A tuple assignment expands to several statements: keep them together.
        if parsed.stmts.len() > 1 {
            return Some(Stmt::Block(parsed));
        }
        parsed.stmts.pop()
    }

    fn patterns(&mut self, pat: &syn::Pat) -> Option<Vec<Pattern>> {
        match pat {
            syn::Pat::Or(or) => {
                let mut all = Vec::new();
                for case in &or.cases {
                    all.extend(self.patterns(case)?);
                }
                Some(all)
            }
            syn::Pat::Wild(_) => Some(vec![Pattern::Wildcard]),
            syn::Pat::Paren(paren) => self.patterns(&paren.pat),
            syn::Pat::Lit(lit) => Some(vec![Pattern::Literal(
                self.pattern_literal(&syn::Expr::Lit(lit.clone()))?,
            )]),
            syn::Pat::Range(range) => {
                let (Some(start), Some(end)) = (&range.start, &range.end) else {
                    self.errors
                        .at(range, "range patterns need both ends in kernels: `a..=b`");
                    return None;
                };
                Some(vec![Pattern::Range {
                    start: self.pattern_literal(start)?,
                    end: self.pattern_literal(end)?,
                    inclusive: matches!(range.limits, syn::RangeLimits::Closed(_)),
                }])
            }
            syn::Pat::Path(path) if path.qself.is_none() => {
                if let Some(literal) = self.ordering_pattern(&path.path) {
                    return Some(vec![Pattern::Literal(literal)]);
                }
                let Some((ty, variant)) = self.enum_variant(&path.path) else {
                    self.errors
                        .at(path, "patterns name enum variants as `Enum::Variant`");
                    return None;
                };
                Some(vec![Pattern::Variant { ty, variant }])
            }
            other => {
                self.errors.at(
                    other,
                    "kernels match on integers, `bool`s and `DeviceCopy` enums with literal, range (`a..=b`), `Enum::Variant`, `|` and `_` patterns",
                );
                None
            }
        }
    }

    /// Refuses `match (a, b) { .. }`, which kernels do not have. True when it did.
    fn refused_tuple_scrutinee(&mut self, expr: &syn::ExprMatch) -> bool {
        if !matches!(&*expr.expr, syn::Expr::Tuple(_)) {
            return false;
        }
        self.errors.at(
            &expr.expr,
            "`match` on a tuple is not supported in kernels: write instead nested `match`es, or a `match` on a combined integer (`match a * 4 + b { .. }`)",
        );
        true
    }

    /// A literal of a pattern, `-` allowed.
    fn pattern_literal(&mut self, expr: &syn::Expr) -> Option<Literal> {
        let parsed = self.expr(expr)?;
        match parsed.kind {
            ExprKind::Lit(literal) => Some(literal),
            ExprKind::Unary {
                op: cudajit_core::ast::UnaryOp::Neg,
                operand,
            } => match operand.kind {
                ExprKind::Lit(Literal::Int { value, suffix }) => Some(Literal::Int {
                    value: value.wrapping_neg(),
                    suffix,
                }),
                _ => {
                    self.errors.at(expr, PATTERN_LITERAL);
                    None
                }
            },
            _ => {
                self.errors.at(expr, PATTERN_LITERAL);
                None
            }
        }
    }
}

/// The error of a pattern bound that is not a literal (`i32::MIN..=-1`).
const PATTERN_LITERAL: &str = "the bounds of a pattern are literals in kernels: write instead the literal (`-2147483648..=-1` for `i32::MIN..=-1`)";
