//! `core::cmp::Ordering` in kernels: an `i8` holding `-1`, `0` or `1` (what Rust's
//! `Ordering` is, `#[repr(i8)]`), resolved when the kernel is captured.
//!
//! What gives one: `Ordering::Less`/`Equal`/`Greater`, `a.cmp(&b)`, `a.total_cmp(&b)`,
//! `a.partial_cmp(&b)` (an `Option<Ordering>`, `None` when either is NaN), `o.reverse()`,
//! `o.then(p)`, `o.then_with(|| ..)`. What takes one: `o.is_lt()` and the other tests,
//! `==`/`!=`, `match` arms `Ordering::Less => ..`, and the iterator consumers `min_by`/
//! `max_by`, whose comparator returns one. Each is written here as the Rust that computes
//! the same `i8`, and parsed as any other kernel code.

use cudajit_core::ast::{Expr, Literal};
use quote::quote_spanned;
use syn::spanned::Spanned;

use super::option_value::OptionParts;
use super::parser::Parser;

/// `Ordering::Less` (and `cmp::Ordering::..`, `core::cmp::Ordering::..`,
/// `std::cmp::Ordering::..`) as its `i8`.
pub(super) fn ordering_constant(path: &syn::Path) -> Option<i8> {
    let names: Vec<String> = path.segments.iter().map(|s| s.ident.to_string()).collect();
    let (variant, prefix) = names.split_last()?;
    let value = match variant.as_str() {
        "Less" => -1,
        "Equal" => 0,
        "Greater" => 1,
        _ => return None,
    };
    let prefix: Vec<&str> = prefix.iter().map(String::as_str).collect();
    matches!(
        prefix.as_slice(),
        ["Ordering"] | ["cmp", "Ordering"] | ["core" | "std", "cmp", "Ordering"]
    )
    .then_some(value)
}

/// Whether `ty` names `Ordering`, which kernels hold as an `i8`.
pub(super) fn is_ordering_type(ty: &syn::Type) -> bool {
    let syn::Type::Path(path) = ty else {
        return false;
    };
    let names: Vec<String> = path
        .path
        .segments
        .iter()
        .map(|s| s.ident.to_string())
        .collect();
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    path.qself.is_none()
        && matches!(
            names.as_slice(),
            ["Ordering"] | ["cmp", "Ordering"] | ["core" | "std", "cmp", "Ordering"]
        )
}

/// `&b` of a comparison's argument, as the value.
fn value_of(arg: &syn::Expr) -> &syn::Expr {
    match arg {
        syn::Expr::Reference(reference) => &reference.expr,
        syn::Expr::Paren(paren) => value_of(&paren.expr),
        other => other,
    }
}

impl Parser<'_> {
    /// Fresh names for hidden locals, as Rust identifiers.
    fn hidden_ident(&mut self, span: proc_macro2::Span) -> syn::Ident {
        syn::Ident::new(&self.fresh_temp().replace('$', "__cudajit_"), span)
    }

    /// The `Ordering` methods of a method call, if it is one: `Some(None)` after an error.
    pub(super) fn ordering_method(&mut self, call: &syn::ExprMethodCall) -> Option<Option<Expr>> {
        let method = call.method.to_string();
        let args: Vec<&syn::Expr> = call.args.iter().collect();
        let receiver = &call.receiver;
        let at = call.span();
        let rust: syn::Expr = match (method.as_str(), args.as_slice()) {
            ("cmp", [other]) => {
                let (a, b) = (self.hidden_ident(at), self.hidden_ident(at));
                let other = value_of(other);
                syn::parse_quote_spanned!(at=> {
                    let #a = #receiver;
                    let #b = #other;
                    (#a > #b) as i8 - (#a < #b) as i8
                })
            }
            // IEEE 754's total order, as Rust's `total_cmp` computes it: the bits as
            // integers, negative values' bits inverted so that they order downwards.
            ("total_cmp", [other]) => {
                let (a, b) = (self.hidden_ident(at), self.hidden_ident(at));
                let other = value_of(other);
                let key = |x: &syn::Ident| -> proc_macro2::TokenStream {
                    quote_spanned!(at=> {
                        let bits = #x.to_bits();
                        if bits & !(!0 >> 1) != 0 { !bits } else { bits | !(!0 >> 1) }
                    })
                };
                let (ka, kb) = (key(&a), key(&b));
                let (key_a, key_b) = (self.hidden_ident(at), self.hidden_ident(at));
                let same = self.hidden_ident(at);
                // `#same` gives `b` the type of `a` (`x.total_cmp(&0.5)`) before `to_bits`
                // needs it, as `total_cmp(&self, other: &Self)` does; it is never read.
                syn::parse_quote_spanned!(at=> {
                    let #a = #receiver;
                    let #b = #other;
                    let #same = #a == #b;
                    let #key_a = #ka;
                    let #key_b = #kb;
                    (#key_a > #key_b) as i8 - (#key_a < #key_b) as i8
                })
            }
            // Slices and arrays have a `reverse` of their own (in place), which kernels
            // refuse with what to write (`generate/method_check.rs`).
            ("reverse", []) if !self.is_sequence(receiver) => {
                syn::parse_quote_spanned!(at=> (-(#receiver)))
            }
            ("then", [other]) if !matches!(other, syn::Expr::Closure(_)) => {
                let (a, b) = (self.hidden_ident(at), self.hidden_ident(at));
                syn::parse_quote_spanned!(at=> {
                    let #a = #receiver;
                    let #b = #other;
                    if #a != 0 { #a } else { #b }
                })
            }
            ("then_with", [syn::Expr::Closure(closure)]) if closure.inputs.is_empty() => {
                let a = self.hidden_ident(at);
                let body = &closure.body;
                syn::parse_quote_spanned!(at=> {
                    let #a = #receiver;
                    if #a != 0 { #a } else { #body }
                })
            }
            (test @ ("is_lt" | "is_le" | "is_gt" | "is_ge" | "is_eq" | "is_ne"), []) => {
                let op = match test {
                    "is_lt" => quote::quote!(<),
                    "is_le" => quote::quote!(<=),
                    "is_gt" => quote::quote!(>),
                    "is_ge" => quote::quote!(>=),
                    "is_eq" => quote::quote!(==),
                    _ => quote::quote!(!=),
                };
                syn::parse_quote_spanned!(at=> ((#receiver) #op 0i8))
            }
            _ => return None,
        };
        Some(self.expr(&rust))
    }

    /// `a.partial_cmp(&b)`: an `Option<Ordering>`, `None` when either is NaN (an integer
    /// equals itself, so for integers it is always present).
    pub(super) fn partial_cmp_parts(
        &mut self,
        call: &syn::ExprMethodCall,
    ) -> Option<Option<OptionParts>> {
        let [other] = call.args.iter().collect::<Vec<_>>()[..] else {
            return None;
        };
        if call.method != "partial_cmp" {
            return None;
        }
        let at = call.span();
        let receiver = &call.receiver;
        let other = value_of(other);
        let (a, b) = (self.hidden_ident(at), self.hidden_ident(at));
        let bindings: [syn::Stmt; 2] = [
            syn::parse_quote_spanned!(at=> let #a = #receiver;),
            syn::parse_quote_spanned!(at=> let #b = #other;),
        ];
        let mut prelude = Vec::new();
        for binding in &bindings {
            prelude.push(self.stmt(binding)?);
        }
        let present: syn::Expr = syn::parse_quote_spanned!(at=> #a == #a && #b == #b);
        let value: syn::Expr = syn::parse_quote_spanned!(at=> (#a > #b) as i8 - (#a < #b) as i8);
        Some(Some(OptionParts {
            prelude,
            present: self.expr(&present)?,
            value: Some(self.expr(&value)?),
        }))
    }

    /// Declares `name` a slice or an array (a parameter, a `let` of an array literal).
    pub(super) fn bind_sequence_name(&mut self, name: &str) {
        self.bind(&format!("{name}.[]"));
    }

    /// Whether `expr` is a slice or an array as written: a name declared one, an element
    /// or field (which may hold one), or a sub-slice.
    fn is_sequence(&self, expr: &syn::Expr) -> bool {
        match expr {
            syn::Expr::Paren(paren) => self.is_sequence(&paren.expr),
            syn::Expr::Path(path) => path
                .path
                .get_ident()
                .is_some_and(|name| self.innermost_is(&name.to_string(), &format!("{name}.[]"))),
            syn::Expr::Index(_) | syn::Expr::Field(_) | syn::Expr::Reference(_) => true,
            syn::Expr::Array(_) | syn::Expr::Repeat(_) => true,
            _ => false,
        }
    }

    /// `Ordering::Less` as a `match` pattern's literal.
    pub(super) fn ordering_pattern(&mut self, path: &syn::Path) -> Option<Literal> {
        let value = ordering_constant(path)?;
        Some(Literal::Int {
            value: i64::from(value) as u64,
            suffix: Some(cudajit_core::Scalar::I8),
        })
    }
}
