//! Standard-library methods and paths that kernels refuse, each answered with what was
//! written and what to write instead.
//!
//! Without these, such a call fell through to the general rules and was refused for a
//! cause the user did not write: `opt.take()` as "`opt` is a tuple of 2" (an `Option`
//! local is its two halves), `x.iter().nth(3)` through the method check's generated
//! marker, `Ord::min(a, b)` by rustc on the generated code. The macro knows these calls by
//! their shape (an iterator chain, an `Option` local, a standard trait's path), so it
//! refuses them where they are written.

use super::parser::Parser;

/// The iterator methods kernels do not have, with what to write instead.
const CHAIN_METHODS: &[(&str, &str)] = &[
    (
        "nth",
        "`x.get(n)` on the source, or `.skip(n).find(|_| true)`",
    ),
    ("rposition", "`(0..x.len()).rev().find(|&k| ..)`"),
    ("filter_map", "`filter` then `map`, or a `for` loop"),
    ("flat_map", "a `for` loop nested in a `for` loop"),
    ("flatten", "a `for` loop nested in a `for` loop"),
    (
        "map_while",
        "`take_while` then `map`, or a `for` loop with `break`",
    ),
    ("scan", "a `for` loop that updates a `let mut` state"),
    (
        "inspect",
        "`map` with a block (`.map(|v| { ..; v })`), or a `for` loop",
    ),
    (
        "peekable",
        "a `for` loop over the indices, reading `x[k + 1]`",
    ),
    (
        "for_each",
        "a `for` loop (`for v in x.iter() { .. }`), or `for_each` as a statement of its own",
    ),
    ("try_for_each", "a `for` loop with `break`"),
    ("try_fold", "a `for` loop with `break`"),
    ("partition", "two `for` loops writing two slices"),
    ("unzip", "a `for` loop writing two slices"),
    ("sum_by", "`map` then `sum`"),
    ("cycle", "an index loop with `k % x.len()`"),
    (
        "fuse",
        "the chain without `fuse()`, which changes nothing on slices and ranges",
    ),
];

/// The `Option` methods kernels do not have, with what to write instead.
const OPTION_METHODS: &[(&str, &str)] = &[
    ("take", "`let t = o; o = None;`"),
    ("replace", "`let old = o; o = Some(v);`"),
    ("insert", "`o = Some(v);`, then use `v`"),
    ("get_or_insert", "`if o.is_none() { o = Some(v); }`"),
    (
        "xor",
        "nested `if let`s on the two (`if let Some(v) = a { .. }`)",
    ),
    (
        "zip",
        "nested `if let`s on the two (`if let Some(v) = a { .. }`)",
    ),
    ("ok_or", "`if let Some(v) = o { .. } else { .. }`"),
    ("unwrap_unchecked", "`unwrap()` or `unwrap_or(d)`"),
];

impl Parser<'_> {
    /// Refuses a standard method kernels do not have, if `call` is one: an iterator
    /// chain's, or an `Option` local's. True when it recorded an error.
    pub(super) fn refused_method(&mut self, call: &syn::ExprMethodCall) -> bool {
        // The refused method may be further in (`x.iter().filter_map(..).sum::<f32>()`).
        let mut link = Some(call);
        while let Some(at) = link {
            let method = at.method.to_string();
            if super::iterator_chain::is_iterator(&at.receiver)
                && !matches!(&*at.receiver, syn::Expr::Range(_))
            {
                if let Some((_, instead)) = CHAIN_METHODS.iter().find(|(m, _)| *m == method) {
                    self.errors.at(
                        &at.method,
                        format!("`{method}` is not an iterator method kernels have: write instead {instead}"),
                    );
                    return true;
                }
            }
            link = receiver_call(&at.receiver);
        }
        let method = call.method.to_string();
        if self.is_option_name(&call.receiver) {
            if let Some((_, instead)) = OPTION_METHODS.iter().find(|(m, _)| *m == method) {
                self.errors.at(
                    &call.method,
                    format!(
                        "`Option::{method}` is not supported in kernels: write instead {instead}"
                    ),
                );
                return true;
            }
        }
        false
    }

    /// Refuses `a.map(f)` on a local that is not an `Option`: an array's `map`, which
    /// kernels do not have (an `Option`'s `map` they do). True when it recorded an error.
    pub(super) fn refused_array_map(
        &mut self,
        receiver: &syn::Expr,
        at: impl quote::ToTokens,
    ) -> bool {
        let syn::Expr::Path(path) = receiver else {
            return false;
        };
        let Some(name) = path.path.get_ident().map(|i| i.to_string()) else {
            return false;
        };
        if !self.is_bound(&name)
            || self.is_option_local(&name)
            || self.is_call_result_local(&name)
            || self.alias(&name).is_some()
        {
            return false;
        }
        self.errors.at(
            at,
            format!("`{name}.map(f)` on an array is not supported in kernels (only an `Option`'s `map` is): write instead a loop writing a new array, `let mut b = [0.0f32; N]; for k in 0..N {{ b[k] = f({name}[k]); }}`"),
        );
        true
    }

    /// Whether `expr` names an `Option` local.
    fn is_option_name(&self, expr: &syn::Expr) -> bool {
        match expr {
            syn::Expr::Paren(paren) => self.is_option_name(&paren.expr),
            syn::Expr::Path(path) => path
                .path
                .get_ident()
                .is_some_and(|i| self.is_option_local(&i.to_string())),
            _ => false,
        }
    }
}

/// The method call `expr` is, through parentheses.
fn receiver_call(expr: &syn::Expr) -> Option<&syn::ExprMethodCall> {
    match expr {
        syn::Expr::Paren(paren) => receiver_call(&paren.expr),
        syn::Expr::MethodCall(call) => Some(call),
        _ => None,
    }
}

/// The message for a standard trait's function called by its path (`Ord::min(a, b)`,
/// `Default::default()`), which the generated code would otherwise take for a type.
pub(super) fn standard_trait_call(path: &syn::Path) -> Option<String> {
    let segments: Vec<String> = path.segments.iter().map(|s| s.ident.to_string()).collect();
    let [.., owner, function] = segments.as_slice() else {
        return None;
    };
    let written = segments.join("::");
    let instead = match owner.as_str() {
        "Default" => "the value itself (`0.0`, `Pair { a: 0.0, b: 0 }`), or `T::zero()` for a generic scalar `T`".to_string(),
        "Ord" | "PartialOrd" | "PartialEq" | "Eq" => match function.as_str() {
            "lt" | "le" | "gt" | "ge" | "eq" | "ne" => {
                "the operator (`a < b`, `a == b`)".to_string()
            }
            _ => format!("the method call, `a.{function}(b)`"),
        },
        "From" | "Into" | "TryFrom" | "TryInto" => "a cast, `x as f64`".to_string(),
        "Clone" | "Copy" => "a copy, `let b = a;`".to_string(),
        "Iterator" | "IntoIterator" | "DoubleEndedIterator" => {
            format!("the method on the chain, `x.iter().{function}(..)`")
        }
        _ => return None,
    };
    Some(format!(
        "`{written}` is a standard trait's function called by its path, which kernels do not have: write instead {instead}"
    ))
}

/// Whether `path` names a function of a scalar type (`f32::sqrt`), which as a value is a
/// function item; its constants (`f32::MAX`) are upper case.
pub(super) fn is_function_value(path: &syn::Path) -> bool {
    let [ty, function] = path.segments.iter().collect::<Vec<_>>()[..] else {
        return false;
    };
    cudajit_core::Scalar::from_rust_name(&ty.ident.to_string()).is_some()
        && function
            .ident
            .to_string()
            .starts_with(|c: char| c.is_ascii_lowercase())
}
