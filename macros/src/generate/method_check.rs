//! The compile-time check of method calls on values whose type the macro cannot see.
//!
//! `v.length()` in a body is captured without the type of `v`; lowering finds the
//! `#[device]` method of `v`'s struct. So that a method that is not device code (of a
//! plain impl block, or a scalar method outside the language, `x.to_degrees()`) is a
//! compile error at the call rather than a JIT error, the macro emits a copy of the
//! function, never called and exempt from lints, in which each such call first calls
//! `(&v).__cudajit_device_method_length()`: the `#[device]` impl block defines that
//! inherent method (`generate/impl_block.rs`), a `#[device]` trait a provided one for
//! each of its methods (`generate/trait_item.rs`); for any other type the call resolves to
//! the default of a local trait whose `where Self: ..` bound fails with cudajit's message.
//! A real device method always wins: the check calls the marker on `&(receiver)`, which
//! finds a marker's `&self` at the step of the receiver's own type, and the fallback is
//! implemented for `&T` taking `&mut self`, which Rust's method lookup reaches only after
//! that step (a trait's marker and the fallback both taking `&self` of the struct would be
//! ambiguous, rustc's E0034).

use std::collections::BTreeSet;

use proc_macro2::TokenStream;
use quote::{format_ident, quote, quote_spanned};
use syn::visit_mut::VisitMut;

use super::Paths;
use crate::parse::Parsed;

/// The marker method of the device method `method`.
pub(super) fn device_method_marker(method: &syn::Ident) -> syn::Ident {
    format_ident!("__cudajit_device_method_{}", method, span = method.span())
}

/// `block` with each method call the parser captured as a struct method checked first,
/// and the traits those checks fall back to in front. `None` when there is none.
pub(super) fn checked_block(
    block: &syn::Block,
    parsed: &Parsed,
    paths: &Paths,
) -> Option<syn::Block> {
    let mut rewrite = Rewrite {
        sites: &parsed.method_sites,
        methods: BTreeSet::new(),
        private: paths.private(),
        prints: 0,
    };
    let mut block = block.clone();
    rewrite.visit_block_mut(&mut block);
    if rewrite.methods.is_empty() && rewrite.prints == 0 {
        return None;
    }
    let fallbacks = rewrite.methods.iter().map(|name| fallback(name, paths));
    let items: syn::Block = syn::parse2(quote!({ #(#fallbacks)* })).ok()?;
    let mut stmts = items.stmts;
    stmts.append(&mut block.stmts);
    block.stmts = stmts;
    Some(block)
}

/// The attributes of the checked copy: never called, not the user's code to lint.
pub(super) fn copy_attributes() -> TokenStream {
    quote! {
        #[allow(warnings, clippy::all, dead_code, unused)]
        #[doc(hidden)]
    }
}

struct Rewrite<'a> {
    sites: &'a [(usize, usize)],
    methods: BTreeSet<String>,
    /// `cudajit::__private`, where `printable` is.
    private: TokenStream,
    /// How many `print!`/`println!` calls were given checks.
    prints: usize,
}

impl VisitMut for Rewrite<'_> {
    fn visit_stmt_mut(&mut self, stmt: &mut syn::Stmt) {
        syn::visit_mut::visit_stmt_mut(self, stmt);
        if let syn::Stmt::Macro(statement) = stmt {
            if let Some(checked) = self.print_call(&statement.mac) {
                *stmt = syn::Stmt::Expr(checked, statement.semi_token);
            }
        }
    }

    fn visit_expr_mut(&mut self, expr: &mut syn::Expr) {
        syn::visit_mut::visit_expr_mut(self, expr);
        if let syn::Expr::Macro(call) = expr {
            if let Some(checked) = self.print_call(&call.mac) {
                *expr = checked;
            }
            return;
        }
        if let syn::Expr::Call(call) = expr {
            if let Some(checked) = self.path_call(call) {
                *expr = checked;
            }
            return;
        }
        let syn::Expr::MethodCall(call) = expr else {
            return;
        };
        let start = call.method.span().start();
        if !self.sites.contains(&(start.line, start.column)) {
            return;
        }
        self.methods.insert(call.method.to_string());
        let marker = device_method_marker(&call.method);
        let receiver = &call.receiver;
        let span = call.method.span();
        let check = quote_spanned!(span=> (&(#receiver)).#marker());
        let original = &*call;
        if let Ok(checked) = syn::parse2(quote!({ #check; #original })) {
            *expr = checked;
        }
    }
}

impl Rewrite<'_> {
    /// `println!("..", a, b)` as `{ printable(&(a)); printable(&(b)); println!("..", a, b) }`:
    /// each argument a scalar, checked by rustc at the argument (a slice or a struct is a
    /// build error naming the fix rather than a JIT error at the first launch).
    fn print_call(&mut self, mac: &syn::Macro) -> Option<syn::Expr> {
        let name = mac.path.segments.last()?.ident.to_string();
        if !matches!(name.as_str(), "print" | "println") {
            return None;
        }
        let parser = syn::punctuated::Punctuated::<syn::Expr, syn::Token![,]>::parse_terminated;
        let args = syn::parse::Parser::parse2(parser, mac.tokens.clone()).ok()?;
        let private = &self.private;
        let checks: Vec<TokenStream> = args
            .iter()
            .skip(1)
            .map(|arg| match arg {
                // `name = value`: the value is the argument.
                syn::Expr::Assign(assign) => &*assign.right,
                arg => arg,
            })
            .map(|arg| {
                let span = syn::spanned::Spanned::span(arg);
                quote_spanned!(span=> #private::printable(&(#arg));)
            })
            .collect();
        if checks.is_empty() {
            return None;
        }
        self.prints += 1;
        syn::parse2(quote!({ #(#checks)* #mac })).ok()
    }

    /// A method called by path (`Shape::area(&c)`, `<S as Shape>::area(s)`): checked on
    /// its first argument, the receiver, as `c.area()` would be.
    fn path_call(&mut self, call: &syn::ExprCall) -> Option<syn::Expr> {
        let syn::Expr::Path(path) = &*call.func else {
            return None;
        };
        let function = path.path.segments.last()?.ident.clone();
        let start = function.span().start();
        let receiver = call.args.first()?;
        if !self.sites.contains(&(start.line, start.column)) {
            return None;
        }
        self.methods.insert(function.to_string());
        let marker = device_method_marker(&function);
        let span = function.span();
        let check = quote_spanned!(span=> (&(#receiver)).#marker());
        syn::parse2(quote!({ #check; #call })).ok()
    }
}

/// The trait a call of `method` on a type without a `#[device]` method of that name
/// resolves to, and the bound that fails with the message.
fn fallback(method: &str, paths: &Paths) -> TokenStream {
    let private = paths.private();
    let marker = format_ident!("__cudajit_device_method_{method}");
    let is_device = format_ident!("__cudajit_is_device_method_{method}");
    let fallback = format_ident!("__cudajit_no_device_method_{method}");
    // A method of Rust's scalar types outside the language is most likely called on a
    // scalar: the message says what kernels call instead (the struct case stays open: a
    // `#[device]` method of that name wins over this fallback).
    let message = if let Some((_, instead)) =
        STANDARD_METHODS.iter().find(|(name, _)| *name == method)
    {
        // A standard method of slices, `bool` or the scalars: what kernels write for it,
        // and, should the receiver be a struct, how its own method becomes device code.
        // The message is a format string of `on_unimplemented`: its braces are doubled.
        let instead = instead.replace('{', "{{").replace('}', "}}");
        format!("method `{method}` of `{{Self}}` is not supported in kernels: write instead {instead} (a struct's own `{method}` needs `#[device]` on its impl block)")
    } else if STANDARD_SCALAR_METHODS.contains(&method) {
        format!("method `{method}` of `{{Self}}` is not supported in kernels: kernels call `slice.len()`, `(a..b).step_by(n)` in `for`, and the scalar methods of the kernel language (`sqrt`, `abs`, `min`, `mul_add`, ..., all listed in its reference, docs/language.md)")
    } else {
        format!(
            "`{method}` is not a device method of `{{Self}}`: add `#[device]` to its impl block"
        )
    };
    let note = format!(
        "kernels call the scalar methods of the kernel language (docs/language.md) and the methods of `#[device]` impl blocks of `DeviceCopy` structs; `{method}` is neither"
    );
    quote! {
        #[diagnostic::on_unimplemented(message = #message, label = "not a device method", note = #note)]
        trait #is_device {}
        trait #fallback {
            /// The receiver's own type, which the message names.
            type Receiver: ?Sized;
            fn #marker(&mut self)
            where
                Self::Receiver: #is_device,
            {
            }
        }
        impl<T: ?Sized + #private::MethodReceiver> #fallback for &T {
            type Receiver = T;
        }
    }
}

/// Standard methods of slices, arrays and `bool` that kernels do not have, with what to
/// write instead.
const STANDARD_METHODS: &[(&str, &str)] = &[
    (
        "map",
        "a loop writing a new array, `let mut b = [0.0f32; N]; for k in 0..N { b[k] = f(a[k]); }` (an `Option`'s `map` is supported)",
    ),
    ("then_some", "`if b { Some(v) } else { None }`"),
    ("then", "`if b { Some(v) } else { None }`"),
    ("is_empty", "`x.len() == 0`"),
    ("contains", "`x.iter().any(|&v| v == w)`"),
    ("swap", "`let t = y[a]; y[a] = y[b]; y[b] = t;`"),
    ("fill", "`for v in y.iter_mut() { *v = w; }`"),
    (
        "copy_from_slice",
        "`for (o, v) in y.iter_mut().zip(x.iter()) { *o = *v; }`",
    ),
    (
        "clone_from_slice",
        "`for (o, v) in y.iter_mut().zip(x.iter()) { *o = *v; }`",
    ),
    ("first", "`x.get(0)`"),
    ("last", "`x.get(x.len() - 1)`"),
    ("split_first", "`x.get(0)` and the sub-slice `&x[1..]`"),
    (
        "split_last",
        "`x.get(x.len() - 1)` and the sub-slice `&x[..x.len() - 1]`",
    ),
    ("into", "a cast, `x as f64`"),
    ("try_into", "a cast, `x as u32`, after checking the range"),
    (
        "reverse",
        "a loop swapping `y[k]` and `y[n - 1 - k]` for `k` in `0..n / 2`",
    ),
    ("sort", "a loop (an insertion sort over the indices)"),
    (
        "sort_unstable",
        "a loop (an insertion sort over the indices)",
    ),
    (
        "to_vec",
        "a local array filled by a loop (kernels cannot allocate)",
    ),
    ("is_lt", "the comparison itself, `a < b`"),
    ("is_le", "the comparison itself, `a <= b`"),
    ("is_gt", "the comparison itself, `a > b`"),
    ("is_ge", "the comparison itself, `a >= b`"),
    ("is_eq", "the comparison itself, `a == b`"),
    ("is_ne", "the comparison itself, `a != b`"),
    ("partial_cmp", "the comparison operators, `a < b`"),
    ("cmp", "the comparison operators, `a < b`"),
];

/// Methods of Rust's integer and float types that the kernel language does not have
/// (those it has are parsed as scalar methods and never reach this check).
const STANDARD_SCALAR_METHODS: &[&str] = &[
    "to_degrees",
    "to_radians",
    "is_finite",
    "is_infinite",
    "is_normal",
    "is_subnormal",
    "is_sign_positive",
    "is_sign_negative",
    "classify",
    "total_cmp",
    "sin_cos",
    "log",
    "exp10",
    "round_ties_even",
    "abs_sub",
    "maximum",
    "minimum",
    "midpoint",
    "next_up",
    "next_down",
    "to_int_unchecked",
    "checked_add",
    "checked_sub",
    "checked_mul",
    "checked_div",
    "checked_rem",
    "checked_neg",
    "checked_shl",
    "checked_shr",
    "checked_pow",
    "checked_abs",
    "overflowing_add",
    "overflowing_sub",
    "overflowing_mul",
    "overflowing_neg",
    "overflowing_shl",
    "overflowing_shr",
    "overflowing_pow",
    "wrapping_div",
    "wrapping_rem",
    "wrapping_pow",
    "wrapping_abs",
    "saturating_pow",
    "saturating_div",
    "saturating_neg",
    "saturating_abs",
    "leading_ones",
    "trailing_ones",
    "count_zeros",
    "is_power_of_two",
    "next_power_of_two",
    "checked_next_power_of_two",
    "ilog",
    "ilog2",
    "ilog10",
    "isqrt",
    "div_floor",
    "is_multiple_of",
    "next_multiple_of",
    "unsigned_abs",
    "is_positive",
    "is_negative",
    "to_be",
    "to_le",
    "to_be_bytes",
    "to_le_bytes",
    "to_ne_bytes",
    "cast_signed",
    "cast_unsigned",
    "to_string",
];
