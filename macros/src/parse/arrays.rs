//! Local arrays written as Rust writes them: literals `[a, b, c]`, annotations
//! `let acc: [f32; 4] = [0.0; 4];`, patterns `let [a, b] = v;` and whole-array assignment
//! `v = [x, y];`.
//!
//! All of them are spelled with what the lowering already knows, a local array made by
//! `[value; len]` and its elements, as CUDA C++ writes `float w[3] = {a, b, c};`: the
//! elements are evaluated first, in order, into hidden locals (so `let v = [v[1], v[0]];`
//! reads the old `v`), then stored. With constant indices every element stays in a
//! register.

use cudajit_core::ast::{BinaryOp, Expr, ExprKind, Literal, Stmt, ValueType};
use cudajit_core::{Scalar, Span};

use super::parser::Parser;
use super::signature::value_type;
use super::span_at;

/// The most elements a literal or pattern may have (the lowering's limit for arrays).
const MAX_ELEMENTS: usize = 4096;

impl Parser<'_> {
    /// The element type of an annotation `[T; N]` on a local array; `Err` after an error.
    pub(super) fn array_annotation(&mut self, ty: &syn::TypeArray) -> Result<ValueType, ()> {
        // `[[T; M]; N]`: an array of arrays of `T` (one level of nesting).
        let elem = match &*ty.elem {
            syn::Type::Array(rows) if matches!(&*rows.elem, syn::Type::Array(_)) => {
                self.errors.at(
                    ty,
                    "arrays of arrays of arrays are not supported in kernels: use `[[T; M]; N]` of `N * K` columns, indexed `a[r][c * K + k]`",
                );
                return Err(());
            }
            syn::Type::Array(rows) => &rows.elem,
            elem => elem,
        };
        match value_type(elem, &self.generics) {
            Some(ValueType::Scalar(scalar)) => Ok(ValueType::Scalar(scalar)),
            Some(generic @ ValueType::Generic(_)) => Ok(generic),
            _ => {
                self.errors.at(
                    &ty.elem,
                    "a local array holds scalars (`bool`, integers, floats) or a generic scalar type",
                );
                Err(())
            }
        }
    }

    /// The elements of `[a, b, ..]`, each evaluated into a hidden local (in `stmts`), in
    /// order: the names of those locals.
    fn array_elements(
        &mut self,
        array: &syn::ExprArray,
        stmts: &mut Vec<Stmt>,
    ) -> Option<Vec<(String, Span)>> {
        if array.elems.is_empty() || array.elems.len() > MAX_ELEMENTS {
            self.errors.at(
                array,
                format!("a local array holds 1 to {MAX_ELEMENTS} elements"),
            );
            return None;
        }
        let mut names = Vec::new();
        let mut complete = true;
        for element in &array.elems {
            if let syn::Expr::Array(_) | syn::Expr::Repeat(_) = element {
                self.errors.at(
                    element,
                    "a literal of arrays of arrays is the value of a `let` (`let m = [[a, b], [c, d]];`); to change one, assign its rows or elements (`m[1] = r;`, `m[1][0] = x;`)",
                );
                complete = false;
                continue;
            }
            let Some(value) = self.expr(element) else {
                complete = false;
                continue;
            };
            let name = self.fresh_name("element");
            let span = value.span;
            stmts.push(Stmt::Let {
                name: name.clone(),
                mutable: false,
                ty: None,
                init: Some(value),
                span,
            });
            names.push((name, span));
        }
        complete.then_some(names)
    }

    /// `let [mut] name[: [T; N]] = [a, b, ..];`
    pub(super) fn array_literal_let(
        &mut self,
        name: String,
        mutable: bool,
        ty: Option<ValueType>,
        array: &syn::ExprArray,
        span: Span,
    ) -> Option<Stmt> {
        if array.elems.iter().any(|e| matches!(e, syn::Expr::Array(_))) {
            return self.rows_literal_let(name, mutable, ty, array, span);
        }
        let mut stmts = Vec::new();
        let elements = self.array_elements(array, &mut stmts)?;
        let array_span = span_at(array);
        let (first, first_span) = elements[0].clone();
        stmts.push(Stmt::Let {
            name: name.clone(),
            mutable,
            ty,
            init: Some(Expr {
                kind: ExprKind::Repeat {
                    value: Box::new(var(&first, first_span)),
                    len: Box::new(usize_literal(elements.len() as u64, array_span)),
                },
                span: array_span,
            }),
            span,
        });
        stores(&name, &elements[1..], 1, &mut stmts);
        self.bind(&name);
        self.emit(stmts)
    }

    /// `let [mut] name = [[a, b], [c, d]];`: an array of arrays (rows of equal length),
    /// spelled `[[a; M]; N]` then the other elements stored, every element evaluated first,
    /// in order, as for a flat literal.
    fn rows_literal_let(
        &mut self,
        name: String,
        mutable: bool,
        ty: Option<ValueType>,
        array: &syn::ExprArray,
        span: Span,
    ) -> Option<Stmt> {
        let mut stmts = Vec::new();
        let mut rows = Vec::new();
        for row in &array.elems {
            let syn::Expr::Array(row) = row else {
                self.errors.at(
                    row,
                    "every row of an array-of-arrays literal is written `[a, b, ..]`: `[[a, b], [c, d]]`",
                );
                return None;
            };
            if row
                .elems
                .iter()
                .any(|e| matches!(e, syn::Expr::Array(_) | syn::Expr::Repeat(_)))
            {
                self.errors.at(
                    row,
                    "arrays of arrays of arrays are not supported in kernels: use `[[T; M]; N]` of `N * K` columns, indexed `a[r][c * K + k]`",
                );
                return None;
            }
            rows.push(self.array_elements(row, &mut stmts)?);
        }
        let columns = rows[0].len();
        if rows.iter().any(|row| row.len() != columns) {
            // rustc reports the mismatched lengths at the rows.
            return None;
        }
        let array_span = span_at(array);
        let (first, first_span) = rows[0][0].clone();
        let row_value = Expr {
            kind: ExprKind::Repeat {
                value: Box::new(var(&first, first_span)),
                len: Box::new(usize_literal(columns as u64, array_span)),
            },
            span: array_span,
        };
        stmts.push(Stmt::Let {
            name: name.clone(),
            mutable,
            ty,
            init: Some(Expr {
                kind: ExprKind::Repeat {
                    value: Box::new(row_value),
                    len: Box::new(usize_literal(rows.len() as u64, array_span)),
                },
                span: array_span,
            }),
            span,
        });
        for (r, row) in rows.iter().enumerate() {
            let row_place = index(
                &var(&name, array_span),
                usize_literal(r as u64, array_span),
                array_span,
            );
            for (c, (element, element_span)) in row.iter().enumerate().skip(usize::from(r == 0)) {
                stmts.push(Stmt::Assign {
                    place: index(
                        &row_place,
                        usize_literal(c as u64, *element_span),
                        *element_span,
                    ),
                    op: None,
                    value: var(element, *element_span),
                    span: *element_span,
                });
            }
        }
        self.bind(&name);
        self.emit(stmts)
    }

    /// `name = [a, b, ..];` of a local array: every element, read before any is written.
    pub(super) fn array_assign(
        &mut self,
        place: &syn::Expr,
        array: &syn::ExprArray,
    ) -> Option<Stmt> {
        let target = match place {
            syn::Expr::Path(path) if path.path.get_ident().is_some() => self.place(place)?,
            other => {
                self.errors.at(
                    other,
                    "an array literal is assigned to a local array by its name: `acc = [0.0, 1.0];`",
                );
                return None;
            }
        };
        let ExprKind::Var(name) = target.kind else {
            self.errors
                .at(place, "an array literal is assigned to a local array");
            return None;
        };
        let mut stmts = Vec::new();
        let elements = self.array_elements(array, &mut stmts)?;
        stores(&name, &elements, 0, &mut stmts);
        self.emit(stmts)
    }

    /// `let [a, mut b, _, .., z] = value;` of a local array (or slice) by name, or of an
    /// array literal.
    pub(super) fn array_pattern_let(
        &mut self,
        pattern: &syn::PatSlice,
        local: &syn::Local,
    ) -> Option<Stmt> {
        let Some(init) = &local.init else {
            self.errors
                .at(pattern, "an array pattern needs a value: `let [a, b] = v;`");
            return None;
        };
        let span = span_at(pattern);
        let mut stmts = Vec::new();
        // The array: a name, or the hidden locals of a literal's elements.
        enum Source {
            Named(Expr),
            Literal(Vec<(String, Span)>),
        }
        let source = match &*init.expr {
            syn::Expr::Path(path) if path.path.get_ident().is_some() => {
                Source::Named(self.expr(&init.expr)?)
            }
            syn::Expr::Array(array) => Source::Literal(self.array_elements(array, &mut stmts)?),
            other => {
                self.errors.at(
                    other,
                    "an array pattern takes apart a local array by its name or an array literal: `let [a, b] = v;`",
                );
                return None;
            }
        };
        let rest = pattern
            .elems
            .iter()
            .position(|p| matches!(p, syn::Pat::Rest(_)));
        let count = pattern.elems.len();
        // Each bound name with the element it takes: position `k` from the front, or from
        // the back after `..`.
        let mut bound = Vec::new();
        for (k, element) in pattern.elems.iter().enumerate() {
            let from_back = rest.is_some_and(|r| k > r).then(|| count - k);
            let (name, mutable) = match element {
                syn::Pat::Wild(_) | syn::Pat::Rest(_) => continue,
                syn::Pat::Ident(ident) if ident.by_ref.is_none() && ident.subpat.is_none() => {
                    (ident.ident.to_string(), ident.mutability.is_some())
                }
                other => {
                    self.errors.at(
                        other,
                        "an array pattern in a kernel binds names, `_` and `..`: `let [a, mut b, _, ..] = v;`",
                    );
                    return None;
                }
            };
            let value = match (&source, from_back) {
                (Source::Named(base), None) => index(base, usize_literal(k as u64, span), span),
                (Source::Named(base), Some(back)) => {
                    let len = Expr {
                        kind: ExprKind::Len(Box::new(base.clone())),
                        span,
                    };
                    let position = Expr {
                        kind: ExprKind::Binary {
                            op: BinaryOp::Sub,
                            left: Box::new(len),
                            right: Box::new(usize_literal(back as u64, span)),
                        },
                        span,
                    };
                    index(base, position, span)
                }
                (Source::Literal(elements), back) => {
                    let position = match back {
                        None => k,
                        Some(back) => elements.len().checked_sub(back)?,
                    };
                    let (element, element_span) = elements.get(position)?;
                    var(element, *element_span)
                }
            };
            bound.push((name, mutable, value));
        }
        // Every element is read before a name is bound: `let [v, w] = v;` reads the old `v`.
        let shadows = |source: &Source| match source {
            Source::Named(base) => bound
                .iter()
                .any(|(name, _, _)| matches!(&base.kind, ExprKind::Var(b) if b == name)),
            Source::Literal(_) => false,
        };
        let reads_first = shadows(&source);
        let mut bindings = Vec::new();
        for (name, mutable, value) in bound {
            let value = if reads_first {
                let hidden = self.fresh_name("element");
                let value_span = value.span;
                stmts.push(Stmt::Let {
                    name: hidden.clone(),
                    mutable: false,
                    ty: None,
                    init: Some(value),
                    span,
                });
                var(&hidden, value_span)
            } else {
                value
            };
            bindings.push(Stmt::Let {
                name: name.clone(),
                mutable,
                ty: None,
                init: Some(value),
                span,
            });
            self.bind(&name);
        }
        stmts.append(&mut bindings);
        if stmts.is_empty() {
            return None;
        }
        self.emit(stmts)
    }
}

/// `name[first + k] = element_k;` for each element.
fn stores(name: &str, elements: &[(String, Span)], first: usize, stmts: &mut Vec<Stmt>) {
    for (k, (element, span)) in elements.iter().enumerate() {
        stmts.push(Stmt::Assign {
            place: index(
                &var(name, *span),
                usize_literal((first + k) as u64, *span),
                *span,
            ),
            op: None,
            value: var(element, *span),
            span: *span,
        });
    }
}

fn index(base: &Expr, position: Expr, span: Span) -> Expr {
    Expr {
        kind: ExprKind::Index {
            base: Box::new(base.clone()),
            index: Box::new(position),
        },
        span,
    }
}

fn var(name: &str, span: Span) -> Expr {
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
