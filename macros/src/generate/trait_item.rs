//! What a `#[device]` trait becomes: the trait as written, with a hidden provided method
//! per method taking `self` (the marker the checked copies of bodies call,
//! `method_check.rs`, so `s.area()` on any implementor, a generic `S: Shape` too, passes
//! the compile-time check), and beside it the trait's default methods captured, which
//! every `#[device]` impl of the trait lists (`impl_block.rs`):
//!
//! ```text
//! trait Shape { fn area(&self) -> f32; fn __cudajit_device_method_area(&self) {} }
//! pub const __cudajit_trait_defaults_Shape: &[&CapturedFunction] = &[..];
//! ```

use proc_macro2::TokenStream;
use quote::{format_ident, quote};
use syn::ItemTrait;

use super::{captured, method_check, Paths};
use crate::parse::DeviceTrait;

pub(crate) fn device_trait(item: &ItemTrait, parsed: &DeviceTrait, paths: &Paths) -> TokenStream {
    let private = paths.private();
    let mut item = item.clone();
    for method in &parsed.methods {
        let marker = method_check::device_method_marker(method);
        item.items.push(syn::parse_quote! {
            #[doc(hidden)]
            #[allow(dead_code)]
            #[inline(always)]
            fn #marker(&self) {}
        });
    }
    let vis = &item.vis;
    let defaults = defaults_ident(&item.ident);
    let captured = parsed
        .defaults
        .iter()
        .map(|function| captured::captured_function(function, None, paths));
    let doc = format!(
        "The default methods of the `#[device]` trait `{}`, captured.",
        item.ident
    );
    quote! {
        #item

        #[doc = #doc]
        #[doc(hidden)]
        #[allow(non_upper_case_globals)]
        #vis const #defaults: &[&#private::CapturedFunction] = &[#(&#captured),*];
    }
}

/// The constant that holds a trait's captured default methods.
fn defaults_ident(trait_ident: &syn::Ident) -> syn::Ident {
    format_ident!("__cudajit_trait_defaults_{}", trait_ident, span = trait_ident.span())
}

/// The path of the defaults constant of the trait `path` names: beside the trait.
pub(super) fn defaults_path(path: &syn::Path) -> syn::Path {
    let mut path = path.clone();
    if let Some(last) = path.segments.last_mut() {
        last.ident = defaults_ident(&last.ident);
        last.arguments = syn::PathArguments::None;
    }
    path
}
