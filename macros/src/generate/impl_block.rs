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

use super::{captured, kernel_language_lints, Paths};
use crate::parse::DeviceImpl;

pub(crate) fn device_impl(item: &ItemImpl, parsed: &DeviceImpl, paths: &Paths) -> TokenStream {
    let private = paths.private();
    let self_ident = &parsed.self_ident;
    let self_ty = &item.self_ty;
    let slot = format_ident!("{}", parsed.slot, span = self_ident.span());
    let captured = parsed
        .functions
        .iter()
        .map(|function| captured::captured_function(function, None, paths));
    let lints = kernel_language_lints();
    let doc = format!("The captured functions of a `#[device]` impl block of `{self_ident}`.");
    quote! {
        #lints
        #item

        impl #self_ty {
            #[doc = #doc]
            #[doc(hidden)]
            #[allow(non_upper_case_globals)]
            pub const #slot: &'static [&'static #private::CapturedFunction] = &[#(&#captured),*];
        }
    }
}
