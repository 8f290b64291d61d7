//! What a `#[device]` trait becomes: the trait as written, with hidden provided items: a
//! marker per method taking `self` (the marker the checked copies of bodies call,
//! `method_check.rs`, so `s.area()` on a generic `S: Shape` passes the compile-time
//! check), and a function returning the trait's default methods captured, which every
//! `#[device]` impl of the trait lists (`impl_block.rs`):
//!
//! ```text
//! trait Shape {
//!     fn area(&self) -> f32;
//!     fn __cudajit_device_method_area(&self) {}
//!     fn __cudajit_device_trait_defaults() -> &'static [&'static CapturedFunction] { .. }
//! }
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
    let captured = parsed
        .defaults
        .iter()
        .map(|function| captured::captured_function(function, None, paths));
    let defaults = defaults_fn();
    // A provided function of the trait, so that an impl finds it through the trait's path
    // alone (and an impl of a trait without `#[device]` fails naming the trait); `Self:
    // Sized` keeps the trait dyn-compatible.
    item.items.push(syn::parse_quote! {
        #[doc(hidden)]
        fn #defaults() -> &'static [&'static #private::CapturedFunction]
        where
            Self: Sized,
        {
            const DEFAULTS: &[&#private::CapturedFunction] = &[#(&#captured),*];
            DEFAULTS
        }
    });
    quote!(#item)
}

/// The trait's provided function that returns its captured default methods.
fn defaults_fn() -> syn::Ident {
    format_ident!("__cudajit_device_trait_defaults")
}

/// `<owner as Trait>::__cudajit_device_trait_defaults`, the `defaults` of an impl's row.
pub(super) fn defaults_of(owner: &syn::Ident, path: &syn::Path) -> TokenStream {
    let defaults = defaults_fn();
    quote!(<#owner as #path>::#defaults)
}
