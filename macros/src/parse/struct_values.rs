//! Tuple and unit structs as values: `Pair(a, b)` and `Double` build a
//! `#[derive(DeviceCopy)]` struct (a tuple struct's fields are `0`, `1`, .. in its
//! layout), and `let Pair(a, b) = p;` / `let Vec3 { x, y, .. } = v;` read its fields into
//! names.
//!
//! The macro sees only the function, so it tells a struct from a function or a constant by
//! Rust's naming convention, as rustc's own lints expect it: `Pair(..)` (a capitalised
//! callee) is a tuple struct's constructor, `Double` (a capitalised name with lowercase
//! letters, not bound locally) a unit struct, `TILE` (all capitals) a constant. The
//! generated code takes the struct's layout from its `DeviceStruct` impl, so a name that is
//! not a `DeviceCopy` struct is reported by rustc at the name.

use cudajit_core::ast::{Expr, ExprKind, Stmt};
use cudajit_core::Span;

use super::parser::Parser;
use super::span_at;

/// Names of Rust's prelude that are called like constructors but are not structs.
const PRELUDE_VARIANTS: [&str; 4] = ["Some", "None", "Ok", "Err"];

/// Whether `ident` is written like a type (`Pair`, `Double`) rather than a constant
/// (`TILE`, `N`): a capital first, and a lowercase letter somewhere.
fn type_like(ident: &syn::Ident) -> bool {
    let text = ident.to_string();
    text.starts_with(|c: char| c.is_ascii_uppercase())
        && text.chars().any(|c| c.is_ascii_lowercase())
        && !PRELUDE_VARIANTS.contains(&text.as_str())
}

/// The struct a path names, if its last segment is written like a type and no segment
/// takes generic arguments (`Pair`, `units::Meters`); `Enum::Variant` paths, whose second
/// last segment is type-like too, are the enums'.
fn struct_path(path: &syn::ExprPath) -> Option<&syn::Ident> {
    if path.qself.is_some() || path.path.segments.iter().any(|s| !s.arguments.is_none()) {
        return None;
    }
    let segments = &path.path.segments;
    let last = &segments.last()?.ident;
    let enum_like = segments.len() >= 2 && type_like(&segments[segments.len() - 2].ident);
    (type_like(last) && !enum_like).then_some(last)
}

impl Parser<'_> {
    /// `Pair(a, b)`: a tuple struct built from its fields in order. `None` when the
    /// callee is not written like a struct; `Some(None)` after an error.
    pub(super) fn tuple_struct_literal(&mut self, call: &syn::ExprCall) -> Option<Option<Expr>> {
        let syn::Expr::Path(path) = &*call.func else {
            return None;
        };
        let ident = struct_path(path)?.clone();
        let mut fields = Vec::new();
        for (index, arg) in call.args.iter().enumerate() {
            let value = match arg {
                // `Window([0.5; 4])`: an array field's value.
                syn::Expr::Repeat(repeat) => Expr {
                    kind: ExprKind::Repeat {
                        value: Box::new(self.expr(&repeat.expr)?),
                        len: Box::new(self.expr(&repeat.len)?),
                    },
                    span: span_at(repeat),
                },
                other => match self.expr(other) {
                    Some(value) => value,
                    None => return Some(None),
                },
            };
            fields.push((index.to_string(), value));
        }
        self.record_type(&path.path);
        Some(Some(Expr {
            kind: ExprKind::StructLiteral {
                ty: ident.to_string(),
                fields,
            },
            span: span_at(call),
        }))
    }

    /// `Double`: a unit struct's value, if `path` names one (and no local of that name).
    pub(super) fn unit_struct_value(&mut self, path: &syn::ExprPath) -> Option<Expr> {
        let ident = struct_path(path)?.clone();
        if path.path.segments.len() == 1 && self.is_bound(&ident.to_string()) {
            return None;
        }
        self.record_type(&path.path);
        Some(Expr {
            kind: ExprKind::StructLiteral {
                ty: ident.to_string(),
                fields: Vec::new(),
            },
            span: span_at(path),
        })
    }

    /// `let Pair(a, mut b) = value;` or `let Vec3 { x, y: up, .. } = value;`: the value
    /// into a hidden local (evaluated once, before the names it binds shadow anything),
    /// then one `let` per named field. `None` for other patterns.
    pub(super) fn struct_pattern_let(&mut self, local: &syn::Local) -> Option<Option<Stmt>> {
        let pat = match &local.pat {
            syn::Pat::Type(typed) => &*typed.pat,
            other => other,
        };
        let fields: Vec<(String, &syn::Pat)> = match pat {
            syn::Pat::TupleStruct(tuple) if tuple.qself.is_none() => {
                let last = tuple.path.segments.last()?;
                if PRELUDE_VARIANTS.contains(&last.ident.to_string().as_str()) {
                    return None;
                }
                let mut fields = Vec::new();
                for (index, element) in tuple.elems.iter().enumerate() {
                    if matches!(element, syn::Pat::Rest(_)) {
                        // `Pair(a, ..)`: the fields before it (rustc checks the rest).
                        if index + 1 != tuple.elems.len() {
                            self.errors.at(
                                element,
                                "`..` in a tuple struct pattern comes last in kernels: `let Triple(a, ..) = t;`, or read the field, `let c = t.2;`",
                            );
                            return Some(None);
                        }
                        break;
                    }
                    fields.push((index.to_string(), element));
                }
                fields
            }
            syn::Pat::Struct(named) if named.qself.is_none() => {
                let mut fields = Vec::new();
                for field in &named.fields {
                    let syn::Member::Named(name) = &field.member else {
                        self.errors.at(
                            field,
                            "name the fields of a struct pattern: `let Vec3 { x, y, .. } = v;`",
                        );
                        return Some(None);
                    };
                    fields.push((name.to_string(), &*field.pat));
                }
                fields
            }
            _ => return None,
        };
        let span = span_of_local(local);
        let Some(init) = &local.init else {
            self.errors.at(
                pat,
                "a struct pattern's `let` needs a value: `let Pair(a, b) = p;`",
            );
            return Some(None);
        };
        let Some(value) = self.expr(&init.expr) else {
            return Some(None);
        };
        let source = self.fresh_name("struct");
        let mut stmts = vec![Stmt::Let {
            name: source.clone(),
            mutable: false,
            ty: None,
            init: Some(value),
            span,
        }];
        for (field, element) in fields {
            let (name, mutable) = match element {
                syn::Pat::Ident(ident) if ident.by_ref.is_none() && ident.subpat.is_none() => {
                    (ident.ident.to_string(), ident.mutability.is_some())
                }
                syn::Pat::Wild(_) => continue,
                other => {
                    self.errors.at(
                        other,
                        "a struct pattern in a kernel's `let` binds plain names or `_` (`let Pair(a, _) = p;`); nested patterns are not supported: bind the field, then destructure it (`let Pair(inner, b) = p; let Meters(m) = inner;`)",
                    );
                    return Some(None);
                }
            };
            stmts.push(Stmt::Let {
                name: name.clone(),
                mutable,
                ty: None,
                init: Some(Expr {
                    kind: ExprKind::Field {
                        base: Box::new(Expr {
                            kind: ExprKind::Var(source.clone()),
                            span,
                        }),
                        field,
                    },
                    span,
                }),
                span,
            });
            self.bind(&name);
        }
        Some(self.emit(stmts))
    }
}

fn span_of_local(local: &syn::Local) -> Span {
    super::span_of(local.let_token.span)
}
