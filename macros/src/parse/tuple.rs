//! Tuples, resolved at capture time: a tuple is a group of scalar locals, one per element,
//! named `t.0`, `t.1`, ... (a `.` cannot appear in a Rust name, so they never collide with
//! the user's). The lowering and the GPU never see a tuple, which keeps every element in a
//! register, as nvcc keeps the fields of a small struct.
//!
//! Supported: `let t = (a, b);`, `t.0` as a value and as a place, `let (x, mut y) = t;`,
//! `let (x, y) = (a, b);`, `let t: (f32, u32) = ..`, `let v = vload4(..)` then `v.2`,
//! `(x, y) = (y, x);`, `t = (a, b);`, `let u = t;`, and `if`/`match`/blocks whose branches
//! end in tuples. A statement that expands to several is
//! returned first-to-last through [`Parser::pending`](super::parser::Parser).

use cudajit_core::ast::{Expr, ExprKind, Stmt, ValueType};
use cudajit_core::intrinsics::Intrinsic;
use cudajit_core::Span;

use super::parser::Parser;
use super::signature::value_type;
use super::span_at;
use super::tuple_branches::{assign_tails, tail_tuple_arity};

/// What a tuple `let` or assignment takes its elements from.
enum Source {
    /// `(a, b)`: parsed element expressions.
    Elements(Vec<Expr>),
    /// A tuple local: the names of its elements.
    Local(Vec<String>),
}

/// The name of element `index` of tuple local `tuple`.
pub(super) fn element_name(tuple: &str, index: usize) -> String {
    format!("{tuple}.{index}")
}

fn var(name: String, span: Span) -> Expr {
    Expr {
        kind: ExprKind::Var(name),
        span,
    }
}

impl Parser<'_> {
    /// `let <pattern> = <init>;` when the pattern or the value is a tuple. `None` when the
    /// statement is not about tuples (the caller parses it as a plain `let`).
    pub(super) fn tuple_let(&mut self, local: &syn::Local, span: Span) -> Option<Option<Stmt>> {
        let (pat, ty) = match &local.pat {
            syn::Pat::Type(typed) => (&*typed.pat, Some(&*typed.ty)),
            other => (other, None),
        };
        let init = local.init.as_ref().map(|init| &*init.expr);
        let is_tuple_init = init.is_some_and(|init| self.is_tuple_value(init));
        let tuple_ty = match ty {
            Some(syn::Type::Tuple(tuple)) => Some(tuple),
            _ => None,
        };
        // A `#[device]` function's tuple: `let (a, b) = f(x);` is the caller's tuple `let`;
        // `let t: (f32, u32) = f(x);` binds `t` as a tuple local of the elements.
        if let Some(call @ syn::Expr::Call(_)) = init {
            match (pat, tuple_ty) {
                (syn::Pat::Tuple(_), _) => return None,
                (syn::Pat::Ident(ident), Some(tuple)) if ident.subpat.is_none() => {
                    let name = ident.ident.to_string();
                    let value = self.expr(call)?;
                    let arity = tuple.elems.len();
                    let mutable = ident.mutability.is_some();
                    let names = (0..arity)
                        .map(|i| (element_name(&name, i), mutable))
                        .collect();
                    self.bind(&name);
                    self.bind_tuple_name(&name, arity);
                    return Some(Some(Stmt::LetTuple {
                        names,
                        init: value,
                        span,
                    }));
                }
                _ => {}
            }
        }
        match pat {
            syn::Pat::Tuple(pattern) if is_tuple_init || tuple_ty.is_some() => {
                Some(self.destructure(pattern, tuple_ty, init, span))
            }
            syn::Pat::Ident(ident)
                if ident.by_ref.is_none()
                    && ident.subpat.is_none()
                    && (is_tuple_init || tuple_ty.is_some()) =>
            {
                let name = ident.ident.to_string();
                Some(self.bind_tuple(&name, ident.mutability.is_some(), tuple_ty, init, span))
            }
            _ => None,
        }
    }

    /// Whether `expr` is a tuple value: `(a, b)` or a tuple local.
    pub(super) fn is_tuple_value(&self, expr: &syn::Expr) -> bool {
        match expr {
            syn::Expr::Tuple(tuple) => !tuple.elems.is_empty(),
            syn::Expr::Paren(paren) => self.is_tuple_value(&paren.expr),
            syn::Expr::Path(path) => path
                .path
                .get_ident()
                .is_some_and(|ident| self.tuple_arity(&ident.to_string()).is_some()),
            syn::Expr::If(_) | syn::Expr::Match(_) | syn::Expr::Block(_) => {
                tail_tuple_arity(expr).is_some()
            }
            _ => false,
        }
    }

    /// What a `#[device]` function returns: in one returning a tuple, a tuple value
    /// (`(a, b)`, a tuple local, branches ending in tuples) becomes `(a, b)` of its
    /// elements, which the lowering builds the returned tuple from.
    pub(super) fn return_value(&mut self, expr: &syn::Expr) -> Option<Expr> {
        if let Some(inner) = self.returns_option.clone() {
            return self.option_return(expr, &inner);
        }
        if self.returns_array && matches!(expr, syn::Expr::Array(_) | syn::Expr::Repeat(_)) {
            let local = self.bind_array_literal(expr)?;
            return self.expr(&local);
        }
        if !(self.returns_tuple && self.is_tuple_value(expr)) {
            return self.expr(expr);
        }
        let elements = self.tuple_elements(expr)?;
        Some(Expr {
            kind: ExprKind::Tuple(elements),
            span: span_at(expr),
        })
    }

    /// The elements of the tuple value `expr` as expressions; `None` if it is not one (or
    /// after reporting an error).
    pub(super) fn tuple_elements(&mut self, expr: &syn::Expr) -> Option<Vec<Expr>> {
        if !self.is_tuple_value(expr) {
            return None;
        }
        let span = span_at(expr);
        Some(match self.tuple_source(expr)? {
            Source::Elements(elements) => elements,
            Source::Local(names) => names.into_iter().map(|name| var(name, span)).collect(),
        })
    }

    /// The elements of a tuple value, parsed; or `None` after reporting why it is not one.
    fn tuple_source(&mut self, expr: &syn::Expr) -> Option<Source> {
        match expr {
            syn::Expr::Paren(paren) => self.tuple_source(&paren.expr),
            syn::Expr::Tuple(tuple) => {
                let elements: Vec<Option<Expr>> = tuple
                    .elems
                    .iter()
                    .map(|element| {
                        if matches!(element, syn::Expr::Tuple(_)) {
                            self.errors.at(
                                element,
                                "tuples in kernels hold scalars; nested tuples are not supported",
                            );
                            return None;
                        }
                        self.expr(element)
                    })
                    .collect();
                Some(Source::Elements(
                    elements.into_iter().collect::<Option<_>>()?,
                ))
            }
            syn::Expr::Path(path) => {
                let name = path.path.get_ident()?.to_string();
                let arity = self.tuple_arity(&name)?;
                Some(Source::Local(
                    (0..arity).map(|i| element_name(&name, i)).collect(),
                ))
            }
            syn::Expr::If(_) | syn::Expr::Match(_) | syn::Expr::Block(_)
                if tail_tuple_arity(expr).is_some() =>
            {
                self.branch_tuple(expr)
            }
            syn::Expr::If(_) | syn::Expr::Match(_) | syn::Expr::Block(_) => {
                self.errors.at(expr, super::tuple_branches::BRANCH_CALL);
                None
            }
            other => {
                self.errors.at(
                    other,
                    "a tuple comes from a tuple expression `(a, b)`, a tuple local, an `if`/`match`/block whose branches end in tuples, or a `#[device]` function returning one (`let (a, b) = f(x);`)",
                );
                None
            }
        }
    }

    /// `if c { (a, b) } else { (b, a) }` as a tuple: one uninitialised temporary per element,
    /// assigned at the end of every branch, then read like a tuple local. The declarations
    /// and the rewritten `if`/`match` wait in `pending`, before the statement being parsed.
    fn branch_tuple(&mut self, expr: &syn::Expr) -> Option<Source> {
        let arity = tail_tuple_arity(expr)?;
        let temp = self.fresh_temp().replace('$', "__cudajit_");
        let names: Vec<syn::Ident> = (0..arity)
            .map(|i| syn::Ident::new(&format!("{temp}_{i}"), proc_macro2::Span::call_site()))
            .collect();
        let rewritten = assign_tails(expr, &names, &mut *self.errors)?;
        let span = span_at(expr);
        let mut stmts: Vec<Stmt> = names
            .iter()
            .map(|name| Stmt::Let {
                name: name.to_string(),
                mutable: true,
                ty: None,
                init: None,
                span,
            })
            .collect();
        for name in &names {
            self.bind(&name.to_string());
        }
        let statement = syn::Stmt::Expr(rewritten, None);
        let block: syn::Block = syn::parse_quote!({ #statement });
        let parsed = self.block(&block);
        stmts.push(Stmt::Block(parsed));
        self.pending.extend(stmts);
        Some(Source::Local(names.iter().map(|n| n.to_string()).collect()))
    }

    /// `let t = (a, b);`, `let t: (f32, u32) = ..;`, `let u = t;`, `let v = vload4(x, i);`
    fn bind_tuple(
        &mut self,
        name: &str,
        mutable: bool,
        ty: Option<&syn::TypeTuple>,
        init: Option<&syn::Expr>,
        span: Span,
    ) -> Option<Stmt> {
        let Some(init) = init else {
            self.errors
                .at(name, "a tuple `let` needs a value: `let t = (a, b);`");
            return None;
        };
        let source = self.tuple_source(init)?;
        let arity = source.len();
        let targets: Vec<Option<(String, bool)>> = (0..arity)
            .map(|i| Some((element_name(name, i), mutable)))
            .collect();
        let stmts = self.let_elements(targets, ty, source, init, span)?;
        self.bind_tuple_name(name, arity);
        self.emit(stmts)
    }

    /// `let (x, mut y, _) = <tuple>;` and `let (a, b, c, d) = vload4(x, i);`.
    fn destructure(
        &mut self,
        pattern: &syn::PatTuple,
        ty: Option<&syn::TypeTuple>,
        init: Option<&syn::Expr>,
        span: Span,
    ) -> Option<Stmt> {
        let mut targets = Vec::new();
        for element in &pattern.elems {
            match element {
                syn::Pat::Ident(ident) if ident.by_ref.is_none() && ident.subpat.is_none() => {
                    targets.push(Some((ident.ident.to_string(), ident.mutability.is_some())))
                }
                syn::Pat::Wild(_) => targets.push(None),
                other => {
                    self.errors.at(
                        other,
                        "a tuple `let` binds plain names or `_`: `let (a, mut b, _) = t;`",
                    );
                    return None;
                }
            }
        }
        let Some(init) = init else {
            self.errors.at(
                pattern,
                "a tuple `let` needs a value: `let (a, b) = (x, y);`",
            );
            return None;
        };
        let source = self.tuple_source(init)?;
        let stmts = self.let_elements(targets.clone(), ty, source, init, span)?;
        for (name, _) in targets.iter().flatten() {
            self.bind(name);
        }
        self.emit(stmts)
    }

    /// One `let` per element: all values are evaluated before any name is bound, as Rust
    /// does (`let (a, b) = (b, a);` swaps). Elements bound to `_` are still evaluated.
    fn let_elements(
        &mut self,
        targets: Vec<Option<(String, bool)>>,
        ty: Option<&syn::TypeTuple>,
        source: Source,
        init: &syn::Expr,
        span: Span,
    ) -> Option<Vec<Stmt>> {
        let len = source.len();
        if targets.len() != len {
            self.errors.at(
                init,
                format!(
                    "this tuple has {len} elements, the pattern {}",
                    targets.len()
                ),
            );
            return None;
        }
        let types = self.element_types(ty, len)?;
        let (temp, mut stmts) = self.temporaries(source, types, span);
        for (index, target) in targets.into_iter().enumerate() {
            if let Some((name, mutable)) = target {
                stmts.push(Stmt::Let {
                    name,
                    mutable,
                    ty: None,
                    init: Some(var(element_name(&temp, index), span)),
                    span,
                });
            }
        }
        Some(stmts)
    }

    /// One temporary per element of `source` (typed by `types`), so that every value is
    /// read before any name or place changes. Returns the temporaries' tuple name.
    fn temporaries(
        &mut self,
        source: Source,
        types: Vec<Option<ValueType>>,
        span: Span,
    ) -> (String, Vec<Stmt>) {
        let values: Vec<Expr> = match source {
            Source::Elements(values) => values,
            Source::Local(names) => names.into_iter().map(|n| var(n, span)).collect(),
        };
        let temp = self.fresh_temp();
        let stmts = values
            .into_iter()
            .zip(types)
            .enumerate()
            .map(|(index, (value, ty))| Stmt::Let {
                name: element_name(&temp, index),
                mutable: false,
                ty,
                init: Some(value),
                span,
            })
            .collect();
        (temp, stmts)
    }

    /// The element types of `let t: (f32, u32)`, or no annotation for each.
    fn element_types(
        &mut self,
        ty: Option<&syn::TypeTuple>,
        len: usize,
    ) -> Option<Vec<Option<ValueType>>> {
        let Some(ty) = ty else {
            return Some(vec![None; len]);
        };
        if ty.elems.len() != len {
            self.errors.at(
                ty,
                format!("the type has {} elements, the value {len}", ty.elems.len()),
            );
            return None;
        }
        ty.elems
            .iter()
            .map(|element| match value_type(element, &self.generics) {
                Some(value) => Some(Some(value)),
                None => {
                    self.errors.at(
                        element,
                        "tuple elements in kernels are scalars or `DeviceCopy` types",
                    );
                    None
                }
            })
            .collect()
    }

    /// `(x, y) = (y, x);` and `t = (a, b);`: `None` when `left` is not a tuple.
    pub(super) fn tuple_assign(
        &mut self,
        left: &syn::Expr,
        right: &syn::Expr,
        span: Span,
    ) -> Option<Option<Stmt>> {
        let places: Vec<Option<&syn::Expr>> = match left {
            syn::Expr::Tuple(tuple) => tuple
                .elems
                .iter()
                .map(|e| (!matches!(e, syn::Expr::Infer(_))).then_some(e))
                .collect(),
            syn::Expr::Path(path) => {
                let name = path.path.get_ident()?.to_string();
                let arity = self.tuple_arity(&name)?;
                return Some(self.assign_tuple_local(&name, arity, right, span));
            }
            _ => return None,
        };
        let Some(source) = self.tuple_source(right) else {
            return Some(None);
        };
        if places.len() != source.len() {
            self.errors.at(
                right,
                format!(
                    "this tuple has {} elements, the left side {}",
                    source.len(),
                    places.len()
                ),
            );
            return Some(None);
        }
        let mut parsed_places = Vec::new();
        for place in &places {
            parsed_places.push(match place {
                Some(place) => match self.place(place) {
                    Some(p) => Some(p),
                    None => return Some(None),
                },
                None => None,
            });
        }
        Some(self.assign_elements(parsed_places, source, span))
    }

    fn assign_tuple_local(
        &mut self,
        name: &str,
        arity: usize,
        right: &syn::Expr,
        span: Span,
    ) -> Option<Stmt> {
        let source = self.tuple_source(right)?;
        if source.len() != arity {
            self.errors.at(
                right,
                format!("`{name}` has {arity} elements, this tuple {}", source.len()),
            );
            return None;
        }
        let places = (0..arity)
            .map(|i| Some(var(element_name(name, i), span)))
            .collect();
        self.assign_elements(places, source, span)
    }

    /// Values into temporaries, then temporaries into places: `(a, b) = (b, a)` swaps.
    fn assign_elements(
        &mut self,
        places: Vec<Option<Expr>>,
        source: Source,
        span: Span,
    ) -> Option<Stmt> {
        let types = vec![None; source.len()];
        let (temp, mut stmts) = self.temporaries(source, types, span);
        for (index, place) in places.into_iter().enumerate() {
            if let Some(place) = place {
                stmts.push(Stmt::Assign {
                    place,
                    op: None,
                    value: var(element_name(&temp, index), span),
                    span,
                });
            }
        }
        self.emit(stmts)
    }

    /// `t.0` of a tuple local, as the element's variable; `None` when `field` is not that.
    pub(super) fn tuple_field(&mut self, field: &syn::ExprField) -> Option<Option<Expr>> {
        let syn::Member::Unnamed(index) = &field.member else {
            return None;
        };
        let syn::Expr::Path(path) = &*field.base else {
            return None;
        };
        let name = path.path.get_ident()?.to_string();
        let arity = self.tuple_arity(&name)?;
        let index = index.index as usize;
        if index >= arity {
            self.errors.at(
                field,
                format!("`{name}` has {arity} elements: `.0` to `.{}`", arity - 1),
            );
            return Some(None);
        }
        Some(Some(var(element_name(&name, index), span_at(field))))
    }
}

impl Parser<'_> {
    /// `let v = vload4(x, i);`: the vector load, its elements bound as a tuple.
    pub(super) fn vector_tuple_let(&mut self, name: &str, value: Expr, span: Span) -> Stmt {
        let arity = match &value.kind {
            ExprKind::Intrinsic {
                intrinsic: Intrinsic::VectorLoad(n),
                ..
            } => usize::from(*n),
            _ => 0,
        };
        let names = (0..arity).map(|i| (element_name(name, i), false)).collect();
        self.bind_tuple_name(name, arity);
        Stmt::LetTuple {
            names,
            init: value,
            span,
        }
    }
}

impl Source {
    fn len(&self) -> usize {
        match self {
            Source::Elements(values) => values.len(),
            Source::Local(names) => names.len(),
        }
    }
}
