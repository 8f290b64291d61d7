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
        self.record_struct(&path.path);
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
        self.record_struct(&path.path);
        Some(Expr {
            kind: ExprKind::StructLiteral {
                ty: ident.to_string(),
                fields: Vec::new(),
            },
            span: span_at(path),
        })
    }

    /// The fields a tuple struct pattern names, with their indices: those before a `..`,
    /// which comes last (rustc checks the count). `None` after an error.
    fn tuple_fields<'p>(
        &mut self,
        tuple: &'p syn::PatTupleStruct,
    ) -> Option<Vec<(usize, &'p syn::Pat)>> {
        let mut fields = Vec::new();
        for (index, element) in tuple.elems.iter().enumerate() {
            if matches!(element, syn::Pat::Rest(_)) {
                if index + 1 != tuple.elems.len() {
                    self.errors.at(
                        element,
                        "`..` in a tuple struct pattern comes last in kernels: `Triple(a, ..)`, or read the field, `t.2`",
                    );
                    return None;
                }
                break;
            }
            fields.push((index, element));
        }
        Some(fields)
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
                match self.tuple_fields(tuple) {
                    Some(fields) => fields
                        .into_iter()
                        .map(|(index, pat)| (index.to_string(), pat))
                        .collect(),
                    None => return Some(None),
                }
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

/// Whether a `match` destructures a struct: an arm with a tuple struct (`Pair(a, 0)`) or
/// struct (`Vec3 { x, .. }`) pattern, `Option`'s aside.
pub(super) fn is_struct_match(expr: &syn::ExprMatch) -> bool {
    fn destructures(pat: &syn::Pat) -> bool {
        match pat {
            syn::Pat::TupleStruct(tuple) => {
                tuple.path.segments.last().is_some_and(|last| {
                    !PRELUDE_VARIANTS.contains(&last.ident.to_string().as_str())
                })
            }
            syn::Pat::Struct(_) => true,
            // A unit struct's name (`Double => ..`).
            syn::Pat::Ident(ident) => ident.subpat.is_none() && type_like(&ident.ident),
            syn::Pat::Path(path) => {
                path.qself.is_none() && path.path.get_ident().is_some_and(type_like)
            }
            syn::Pat::Or(or) => or.cases.iter().any(destructures),
            syn::Pat::Paren(paren) => destructures(&paren.pat),
            _ => false,
        }
    }
    expr.arms.iter().any(|arm| destructures(&arm.pat))
}

/// What an arm's pattern asks of the value and binds from it.
#[derive(Default)]
struct ArmTest {
    /// Conditions that all hold when the pattern matches.
    conditions: Vec<syn::Expr>,
    /// `let` statements binding the pattern's names.
    bindings: Vec<syn::Stmt>,
}

impl Parser<'_> {
    /// A `match` on a struct as the `if` chain it means: the value into a hidden local,
    /// each arm's literal and range fields compared, its guard evaluated with its names
    /// bound, the last arm the `else` (rustc has checked that the arms are exhaustive).
    /// `value`: whether the `match` gives a value.
    pub(super) fn struct_match(&mut self, expr: &syn::ExprMatch, value: bool) -> Option<syn::Expr> {
        self.temps += 1;
        let matched = syn::Ident::new(
            &format!("__cudajit_matched{}", self.temps),
            proc_macro2::Span::call_site(),
        );
        let access: syn::Expr = syn::parse_quote!(#matched);
        let mut arms = Vec::new();
        let mut complete = true;
        for arm in &expr.arms {
            let mut test = ArmTest::default();
            if self.arm_test(&arm.pat, &access, &mut test).is_none() {
                complete = false;
                continue;
            }
            arms.push((arm, test));
        }
        if !complete {
            return None;
        }
        // Built from the last arm up; an arm that always matches ends the chain.
        let mut chain: Option<syn::Expr> = None;
        for (arm, test) in arms.into_iter().rev() {
            let ArmTest {
                mut conditions,
                bindings,
            } = test;
            let body = &arm.body;
            let then: syn::Expr = if value {
                syn::parse_quote!({ #(#bindings)* #body })
            } else {
                syn::parse_quote!({ #(#bindings)* #body; })
            };
            if let Some((_, guard)) = &arm.guard {
                conditions.push(syn::parse_quote!({ #(#bindings)* #guard }));
            }
            chain = Some(match chain {
                Some(otherwise) if !conditions.is_empty() => {
                    syn::parse_quote!(if #(#conditions)&&* #then else #otherwise)
                }
                _ => then,
            });
        }
        let chain = chain?;
        let scrutinee = &expr.expr;
        Some(if value {
            syn::parse_quote!({ let #matched = #scrutinee; #chain })
        } else {
            syn::parse_quote!({ let #matched = #scrutinee; #chain; })
        })
    }

    /// The conditions and bindings of `pat` matched against `access`. `None` after an
    /// error.
    fn arm_test(&mut self, pat: &syn::Pat, access: &syn::Expr, test: &mut ArmTest) -> Option<()> {
        match pat {
            syn::Pat::Wild(_) | syn::Pat::Rest(_) => {}
            syn::Pat::Paren(paren) => self.arm_test(&paren.pat, access, test)?,
            syn::Pat::Ident(ident) if ident.by_ref.is_none() && ident.subpat.is_none() => {
                // A unit struct's name matches its only value.
                if !type_like(&ident.ident) {
                    let (name, mutability) = (&ident.ident, &ident.mutability);
                    test.bindings
                        .push(syn::parse_quote!(let #mutability #name = #access;));
                }
            }
            syn::Pat::Path(path)
                if path.qself.is_none() && path.path.get_ident().is_some_and(type_like) => {}
            syn::Pat::Lit(lit) => test.conditions.push(syn::parse_quote!(#access == #lit)),
            syn::Pat::Range(range) => {
                if let Some(start) = &range.start {
                    test.conditions.push(syn::parse_quote!(#access >= #start));
                }
                match (&range.end, &range.limits) {
                    (Some(end), syn::RangeLimits::Closed(_)) => {
                        test.conditions.push(syn::parse_quote!(#access <= #end))
                    }
                    (Some(end), syn::RangeLimits::HalfOpen(_)) => {
                        test.conditions.push(syn::parse_quote!(#access < #end))
                    }
                    (None, _) => {}
                }
            }
            syn::Pat::Or(or) => {
                let mut cases: Vec<syn::Expr> = Vec::new();
                for case in &or.cases {
                    let mut inner = ArmTest::default();
                    self.arm_test(case, access, &mut inner)?;
                    if !inner.bindings.is_empty() {
                        self.errors.at(
                            case,
                            "the cases of a `|` pattern on a struct's fields bind no names in kernels: bind the field in its own arm (`Pair(a, _) if a == 1 || a == 2 => ..`)",
                        );
                        return None;
                    }
                    let conditions = inner.conditions;
                    cases.push(match conditions.is_empty() {
                        true => syn::parse_quote!(true),
                        false => syn::parse_quote!((#(#conditions)&&*)),
                    });
                }
                test.conditions.push(syn::parse_quote!((#(#cases)||*)));
            }
            syn::Pat::TupleStruct(tuple) if tuple.qself.is_none() => {
                for (index, element) in self.tuple_fields(tuple)? {
                    let member = syn::Index::from(index);
                    let field: syn::Expr = syn::parse_quote!(#access.#member);
                    self.arm_test(element, &field, test)?;
                }
            }
            // `[_, 4]` of an array field, every element named.
            syn::Pat::Slice(slice)
                if !slice.elems.iter().any(|e| matches!(e, syn::Pat::Rest(_))) =>
            {
                for (index, element) in slice.elems.iter().enumerate() {
                    let element_access: syn::Expr = syn::parse_quote!(#access[#index]);
                    self.arm_test(element, &element_access, test)?;
                }
            }
            syn::Pat::Struct(named) if named.qself.is_none() => {
                for field in &named.fields {
                    let member = &field.member;
                    let access: syn::Expr = syn::parse_quote!(#access.#member);
                    self.arm_test(&field.pat, &access, test)?;
                }
            }
            other => {
                self.errors.at(
                    other,
                    "a `match` on a struct in a kernel takes tuple struct, struct and array (`[a, _]`) patterns whose fields are names, `_`, literals, ranges (`a..=b`) and `|` of them; bind a field with a name and test it in a guard (`Pair(_, k) if k >= 1 && k <= 3 => ..`), and match an enum field in a `match` of its own (`let Pair(kind, v) = p; match kind { .. }`)",
                );
                return None;
            }
        }
        Some(())
    }
}
