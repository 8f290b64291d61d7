//! What a `#[device]` impl block becomes: the block as written (ordinary Rust, so rustc
//! type-checks every call and the host can call the methods), and beside it the block's
//! slot, an inherent constant of the struct listing the captured functions, which the
//! struct's `DeviceCopy` layout reads (see `cudajit_core::methods`):
//!
//! ```text
//! impl Add for Vec3 { .. }
//! impl Vec3 {
//!     pub const __cudajit_impl_Add_Self: &[&CapturedFunction] = &[&CapturedFunction { .. }];
//! }
//! ```

use proc_macro2::TokenStream;
use quote::{format_ident, quote};
use syn::ItemImpl;

use super::{captured, kernel_language_lints, method_check, Paths};
use crate::parse::DeviceImpl;

pub(crate) fn device_impl(item: &ItemImpl, parsed: &DeviceImpl, paths: &Paths) -> TokenStream {
    let private = paths.private();
    let self_ident = &parsed.self_ident;
    // The struct the slot belongs to: the block's own, or for `impl Mul<Vec3> for f32`
    // the struct on the right.
    let owner = &parsed.owner;
    let slot = format_ident!("{}", parsed.slot, span = self_ident.span());
    let captured = parsed
        .functions
        .iter()
        .map(|function| captured::captured_function(function, None, paths));
    let checks = parsed.functions.iter().map(captured::associated_checks);
    // An inherent block's functions can be called by path (`Vec3::new`): their markers.
    let markers = parsed
        .inherent
        .then_some(parsed.function_names.iter())
        .into_iter()
        .flatten()
        .map(|function| {
            let marker = captured::device_fn_marker(function);
            quote! {
                #[doc(hidden)]
                #[allow(non_upper_case_globals)]
                pub const #marker: () = ();
            }
        });
    // Their methods can be called with `.` (`v.length()`): the markers the checked
    // copies of kernel bodies call (`method_check.rs`).
    let method_markers = parsed
        .inherent
        .then_some(item.items.iter())
        .into_iter()
        .flatten()
        .filter_map(|impl_item| match impl_item {
            syn::ImplItem::Fn(method) if method.sig.receiver().is_some() => {
                let marker = method_check::device_method_marker(&method.sig.ident);
                Some(quote! {
                    #[doc(hidden)]
                    #[allow(dead_code)]
                    #[inline(always)]
                    pub fn #marker(&self) {}
                })
            }
            _ => None,
        });
    // The functions whose own method calls are checked, each a copy in `impl Vec3`.
    let methods = item.items.iter().filter_map(|impl_item| match impl_item {
        syn::ImplItem::Fn(method) => Some(method),
        _ => None,
    });
    let checked_copies = methods
        .zip(&parsed.functions)
        .filter_map(|(method, function)| {
            let block = method_check::checked_block(&method.block, function, paths)?;
            let mut copy = method.clone();
            copy.attrs.clear();
            copy.vis = syn::Visibility::Inherited;
            copy.defaultness = None;
            copy.sig.ident = format_ident!("__cudajit_method_check_{}", method.sig.ident);
            copy.block = block;
            let attributes = method_check::copy_attributes();
            Some(quote!(#attributes #copy))
        });
    let lints = kernel_language_lints();
    let doc = format!("The captured functions of a `#[device]` impl block of `{self_ident}`.");
    quote! {
        #lints
        #item

        impl #owner {
            #[doc = #doc]
            #[doc(hidden)]
            #[allow(non_upper_case_globals)]
            pub const #slot: &'static [&'static #private::CapturedFunction] = &[#(&#captured),*];
            #(#markers)*
            #(#method_markers)*
            #(#checked_copies)*
        }

        #(#checks)*
    }
}
