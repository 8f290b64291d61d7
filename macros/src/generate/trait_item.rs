//! What a `#[device]` trait becomes: the trait as written, with a marker per method
//! taking `self` (the marker the checked copies of bodies call, `method_check.rs`, so
//! `s.area()` on a generic `S: Shape` passes the compile-time check) and the supertrait
//! `DeviceTraitImplementor`; its default methods captured, as a row of
//! `DEVICE_TRAIT_DEFAULTS` that lowering finds by the trait's name:
//!
//! ```text
//! trait Shape: DeviceTraitImplementor {
//!     fn area(&self) -> f32;
//!     fn __cudajit_device_method_area(&self) {}
//! }
//! static DEFAULTS: DeviceTraitDefaults = DeviceTraitDefaults { trait_name: "Shape", .. };
//! ```

use proc_macro2::TokenStream;
use quote::quote;
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
    // Its implementors are types kernels hold; the supertrait also lets a `#[device]` impl
    // check that its trait is a `#[device]` one (`impl_block.rs`).
    item.supertraits
        .push(syn::parse_quote!(#private::DeviceTraitImplementor));
    if item.colon_token.is_none() {
        item.colon_token = Some(Default::default());
    }
    let trait_name = item.ident.to_string();
    quote! {
        #item

        const _: () = {
            #[#private::linkme::distributed_slice(#private::DEVICE_TRAIT_DEFAULTS)]
            #[linkme(crate = #private::linkme)]
            static DEFAULTS: #private::DeviceTraitDefaults = #private::DeviceTraitDefaults {
                trait_name: #trait_name,
                functions: &[#(&#captured),*],
            };
        };
    }
}

/// What a `#[device]` impl of `path` adds so that an impl of a trait without `#[device]`
/// is an error naming the fix: in a function generic over `T: Trait`, only the
/// supertrait that `#[device]` adds proves `T: DeviceTraitImplementor`.
pub(super) fn device_trait_check(path: &syn::Path, paths: &Paths) -> TokenStream {
    let private = paths.private();
    let name = path
        .segments
        .last()
        .map(|s| s.ident.to_string())
        .unwrap_or_default();
    let message = format!("`{name}` is not a `#[device]` trait");
    let label = format!("add `#[device]` to `trait {name}`");
    let note = format!(
        "a `#[device]` impl implements a trait whose definition is marked `#[device]` too (`#[device] trait {name} {{ .. }}`), so kernels reach its default methods"
    );
    // The error at the impl's trait; the rest spanned where rustc suggests no edit of
    // the generated generics (a mixed-site span).
    let span = syn::spanned::Spanned::span(path);
    let call = quote::quote_spanned!(span=> are_device_types::<T>());
    let check = respanned(
        quote! {
            #[diagnostic::on_unimplemented(message = #message, label = #label, note = #note)]
            trait DeviceTrait {}
            #[diagnostic::do_not_recommend]
            impl<T: ?Sized + #private::DeviceTraitImplementor> DeviceTrait for T {}
            fn are_device_types<U: ?Sized + DeviceTrait>() {}
            fn implementors_of_the_trait<T: ?Sized + #path>()
        },
        proc_macro2::Span::mixed_site(),
    );
    quote! {
        #[allow(dead_code)]
        const _: () = {
            #check {
                #call
            }
        };
    }
}

/// `tokens` with every span `span`.
fn respanned(tokens: TokenStream, span: proc_macro2::Span) -> TokenStream {
    tokens
        .into_iter()
        .map(|mut token| {
            if let proc_macro2::TokenTree::Group(group) = &token {
                let mut inner =
                    proc_macro2::Group::new(group.delimiter(), respanned(group.stream(), span));
                inner.set_span(span);
                token = proc_macro2::TokenTree::Group(inner);
            }
            token.set_span(span);
            token
        })
        .collect()
}
