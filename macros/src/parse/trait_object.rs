//! `&dyn Trait` where the concrete type is known at the call: static dispatch, as for a
//! generic `S: Shape`.
//!
//! A `s: &dyn Shape` parameter of a `#[device]` function (and `s: impl Shape`, `s: &impl
//! Shape`) is a hidden type parameter bound by `Shape` (named [`hidden_parameter`]), so
//! each call site's struct gets its own instance (`lower/generic_structs.rs`), as rustc
//! would monomorphise `s: &S`; the host keeps the trait object, with the same methods. `let s: &dyn Shape = &c;` names one
//! value the function already has: the local is a copy of it (a shared borrow keeps `c`
//! unchanged while `s` is used, so the copy reads what the reference would), and passing
//! `s` on passes `&s`. What needs a vtable at run time (a trait object chosen by a branch,
//! boxed, or stored in a slice or an array) is refused with the alternative named.

use quote::ToTokens;
use syn::{Type, TypeParamBound};

/// A parameter typed by a user trait rather than a struct: `&dyn Shape`, `&mut dyn Shape`,
/// `impl Shape`, `&impl Shape`, `&mut impl Shape`.
pub(super) struct TraitParameter<'t> {
    /// The trait.
    pub path: &'t syn::Path,
    /// `dyn` or `impl`, as written.
    pub keyword: &'static str,
    /// For a reference, whether it is `&mut`; `None` for `impl Shape` by value.
    pub reference: Option<bool>,
}

/// The parameter's trait when `ty` is one of [`TraitParameter`]'s forms; `None` for other
/// types and for closures (`dyn Fn(..)`, `impl Fn(..)`), which `closure.rs` answers.
pub(super) fn trait_parameter(ty: &Type) -> Option<TraitParameter<'_>> {
    match ty {
        Type::Reference(reference) => {
            let (path, keyword) = user_trait_of(&reference.elem)?;
            Some(TraitParameter {
                path,
                keyword,
                reference: Some(reference.mutability.is_some()),
            })
        }
        Type::ImplTrait(_) => user_trait_of(ty).map(|(path, keyword)| TraitParameter {
            path,
            keyword,
            reference: None,
        }),
        Type::Paren(inner) => trait_parameter(&inner.elem),
        Type::Group(inner) => trait_parameter(&inner.elem),
        _ => None,
    }
}

/// The one user trait of `dyn Trait` or `impl Trait` (other bounds may be the marker
/// traits `Copy`, `Clone`, `Send`, `Sync`, `Sized`, `'a`), with the keyword.
fn user_trait_of(ty: &Type) -> Option<(&syn::Path, &'static str)> {
    let (bounds, keyword) = match ty {
        Type::TraitObject(object) => (&object.bounds, "dyn"),
        Type::ImplTrait(implemented) => (&implemented.bounds, "impl"),
        _ => return None,
    };
    let mut user = Vec::new();
    for bound in bounds {
        let TypeParamBound::Trait(t) = bound else {
            continue;
        };
        let name = t.path.segments.last()?.ident.to_string();
        match name.as_str() {
            "Fn" | "FnMut" | "FnOnce" => return None,
            "Copy" | "Clone" | "Send" | "Sync" | "Sized" => {}
            _ => user.push(&t.path),
        }
    }
    match user.as_slice() {
        [path] => Some((path, keyword)),
        _ => None,
    }
}

/// `&dyn Trait` or `&mut dyn Trait`: the trait's path and whether the reference is `mut`.
pub(super) fn dyn_reference(ty: &Type) -> Option<(&syn::Path, bool)> {
    trait_parameter(ty).and_then(|p| match (p.keyword, p.reference) {
        ("dyn", Some(mutable)) => Some((p.path, mutable)),
        _ => None,
    })
}

/// The trait's name as a bound (its last segment, as the impl rows name traits).
pub(super) fn trait_name(path: &syn::Path) -> String {
    path.segments
        .last()
        .map(|last| last.ident.to_string())
        .unwrap_or_default()
}

/// The hidden type parameter that stands for the struct behind the parameter `param` of
/// a user trait (`dyn Shape`, `impl Shape`): a name no Rust type parameter can have,
/// which says what it is in a message.
pub(super) fn hidden_parameter(parameter: &TraitParameter, param: &str) -> String {
    format!(
        "{} {} of `{param}`",
        parameter.keyword,
        trait_name(parameter.path)
    )
}

/// Whether `ty` mentions a user trait object anywhere (`Box<dyn Shape>`, `&[&dyn Shape]`,
/// `[&dyn Shape; 2]`, `Option<&dyn Shape>`): the types refused with [`refused_message`].
pub(super) fn mentions_trait_object(ty: &Type) -> bool {
    let tokens: Vec<String> = ty.to_token_stream().into_iter().flat_map(flatten).collect();
    tokens
        .windows(2)
        .any(|pair| pair[0] == "dyn" && !matches!(pair[1].as_str(), "Fn" | "FnMut" | "FnOnce"))
}

fn flatten(token: proc_macro2::TokenTree) -> Vec<String> {
    match token {
        proc_macro2::TokenTree::Group(group) => {
            group.stream().into_iter().flat_map(flatten).collect()
        }
        other => vec![other.to_string()],
    }
}

/// The message for a trait object that would need dynamic dispatch: what was written and
/// what a kernel writes instead.
pub(super) fn refused_message(ty: &Type) -> String {
    let written = written(ty);
    format!(
        "`{written}` needs dynamic dispatch (a vtable read at run time), which kernels do not have; a device function takes `s: &dyn Trait` (or `s: &S` with `S: Trait`) and each call passes one known struct; for values of several structs use an enum and a `match`, or a slice of one struct type per call (`&[Circle]`)"
    )
}

/// `ty` as a user writes it (`&[&dyn Shape]`, not syn's spaced `& [& dyn Shape]`).
fn written(ty: &Type) -> String {
    let spaced = ty.to_token_stream().to_string();
    [
        ("& ", "&"),
        (" <", "<"),
        ("< ", "<"),
        (" >", ">"),
        ("' ", "'"),
        (" ,", ","),
    ]
    .iter()
    .fold(spaced, |text, (from, to)| text.replace(from, to))
}

/// The message for a kernel parameter of a trait: a kernel is launched with the host's
/// bytes of one type, not generic over a trait.
pub(super) fn kernel_parameter(parameter: &TraitParameter) -> String {
    let trait_name = trait_name(parameter.path);
    match parameter.keyword {
        "dyn" => format!("kernels cannot take a trait object (`&dyn {trait_name}`: the host has no device vtable to pass): take the struct itself (`s: Circle`) or a slice of one struct type (`&[Circle]`), and call a `#[device]` function taking `&dyn {trait_name}` from the kernel"),
        _ => format!("kernels are not generic over traits (`impl {trait_name}`): take the struct itself (`s: Circle`) or a slice of one struct type (`&[Circle]`), and call a `#[device]` function taking `impl {trait_name}` from the kernel"),
    }
}

/// The message for a `&dyn Trait` local whose value is chosen at run time.
pub(super) fn chosen_at_run_time(trait_name: &str) -> String {
    format!(
        "this `&dyn {trait_name}` is chosen at run time, which needs dynamic dispatch (kernels have none): a `&dyn {trait_name}` local refers to one value (`let s: &dyn {trait_name} = &c;`); call a generic function `fn f<S: {trait_name}>(s: &S)` (or one taking `&dyn {trait_name}`) in each branch, or make the alternatives one enum and `match` on it"
    )
}

/// The message for a `&mut dyn Trait` local.
pub(super) fn mutable_local(trait_name: &str) -> String {
    format!(
        "a `&mut dyn {trait_name}` local is not supported: call the methods on the value itself (`c.grow(k)`), or pass `&mut c` to a device function taking `s: &mut dyn {trait_name}`"
    )
}

impl super::Parser<'_> {
    /// `let s: &dyn Shape = &c;` (or `= t;` of another `&dyn Shape`): `s` is a copy of
    /// `c`, marked so that passing `s` passes `&s`. `None` when the annotation is no
    /// trait object; `Some(None)` when the `let` was refused.
    pub(super) fn dyn_let(
        &mut self,
        name: &str,
        mutable: bool,
        ty: &Type,
        local: &syn::Local,
    ) -> Option<Option<cudajit_core::ast::Stmt>> {
        let Some((path, mutable_target)) = dyn_reference(ty) else {
            if mentions_trait_object(ty) {
                self.errors.at(ty, refused_message(ty));
                return Some(None);
            }
            return None;
        };
        let trait_name = trait_name(path);
        if mutable_target {
            self.errors.at(ty, mutable_local(&trait_name));
            return Some(None);
        }
        let Some(init) = local.init.as_ref().map(|init| &*init.expr) else {
            self.errors.at(
                ty,
                format!("a `&dyn {trait_name}` local is given its value where it is declared: `let s: &dyn {trait_name} = &c;`"),
            );
            return Some(None);
        };
        let place = match strip_parens(init) {
            syn::Expr::Reference(reference)
                if reference.mutability.is_none() && is_place(&reference.expr) =>
            {
                &*reference.expr
            }
            path @ syn::Expr::Path(_) => path,
            other => {
                self.errors.at(other, chosen_at_run_time(&trait_name));
                return Some(None);
            }
        };
        let value = self.expr(place);
        // Bound after the initialiser, as any `let`: `let s: &dyn Shape = s;` reads the
        // outer `s`.
        self.bind(name);
        self.bind(&dyn_marker(name));
        Some(value.map(|init| cudajit_core::ast::Stmt::Let {
            name: name.to_owned(),
            mutable,
            ty: None,
            init: Some(init),
            span: super::span_of(local.let_token.span),
        }))
    }

    /// Whether the innermost binding of `name` is a `&dyn Trait` local.
    pub(super) fn is_dyn_local(&self, name: &str) -> bool {
        self.innermost_is(name, &dyn_marker(name))
    }

    /// A `&dyn Trait` local passed as an argument: a reference to the copy it is.
    pub(super) fn dyn_local_argument(
        &mut self,
        arg: &syn::Expr,
    ) -> Option<Option<cudajit_core::ast::Expr>> {
        let syn::Expr::Path(path) = arg else {
            return None;
        };
        let ident = path.path.get_ident()?;
        if !self.is_dyn_local(&ident.to_string()) {
            return None;
        }
        let span = super::span_at(arg);
        Some(self.expr(arg).map(|place| cudajit_core::ast::Expr {
            span,
            kind: cudajit_core::ast::ExprKind::Reference {
                mutable: false,
                place: Box::new(place),
            },
        }))
    }
}

/// The scope entry that marks `name` as a `&dyn Trait` local (a `.` cannot be in a name).
fn dyn_marker(name: &str) -> String {
    format!("{name}.&dyn")
}

fn strip_parens(expr: &syn::Expr) -> &syn::Expr {
    match expr {
        syn::Expr::Paren(inner) => strip_parens(&inner.expr),
        syn::Expr::Group(inner) => strip_parens(&inner.expr),
        other => other,
    }
}

/// A place a reference can name: a local, a field, a slice or array element.
fn is_place(expr: &syn::Expr) -> bool {
    match strip_parens(expr) {
        syn::Expr::Path(_) => true,
        syn::Expr::Field(field) => is_place(&field.base),
        syn::Expr::Index(index) => is_place(&index.expr),
        _ => false,
    }
}
