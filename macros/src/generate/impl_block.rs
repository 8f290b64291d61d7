//! What a `#[device]` impl block becomes: the block as written (ordinary Rust, so rustc
//! type-checks every call and the host can call the methods), and beside it where the
//! struct's `DeviceCopy` layout finds its captured functions (see `cudajit_core::methods`):
//! for an operator, the block's slot, an inherent constant of the struct,
//!
//! ```text
//! impl Add for Vec3 { .. }
//! impl Vec3 {
//!     pub const __cudajit_impl_Add_Self: &[&CapturedFunction] = &[&CapturedFunction { .. }];
//! }
//! ```
//!
//! and for an inherent block or a user trait's impl, a row of `DEVICE_IMPL_BLOCKS`:
//!
//! ```text
//! impl Shape for Circle { .. }
//! const _: () = {
//!     #[distributed_slice(DEVICE_IMPL_BLOCKS)]
//!     static BLOCK: DeviceImplBlock = DeviceImplBlock { owner: "Circle", .. };
//! };
//! ```

use proc_macro2::TokenStream;
use quote::{format_ident, quote};
use syn::ItemImpl;

use super::{captured, kernel_language_lints, method_check, trait_item, Paths};
use crate::parse::DeviceImpl;

pub(crate) fn device_impl(item: &ItemImpl, parsed: &DeviceImpl, paths: &Paths) -> TokenStream {
    let private = paths.private();
    let self_ident = &parsed.self_ident;
    // The struct the slot belongs to: the block's own, or for `impl Mul<Vec3> for f32`
    // the struct on the right.
    let owner = &parsed.owner;
    let captured: Vec<TokenStream> = parsed
        .functions
        .iter()
        .map(|function| captured::captured_function(function, None, paths))
        .collect();
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
    // copies of kernel bodies call (`method_check.rs`). A user trait's methods, its
    // default methods too, have theirs in the trait (`trait_item.rs`), which the check
    // finds before its fallback: none here, where an inherent method of the same name
    // would have the same marker.
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
    // The functions whose own method calls are checked, each a copy in `impl Vec3` (named
    // for the trait too, so two traits' methods of one name do not collide).
    let copy_prefix = match &parsed.user_trait {
        Some(path) => format!(
            "__cudajit_method_check_{}_",
            path.segments
                .last()
                .map(|s| s.ident.to_string())
                .unwrap_or_default()
        ),
        None => "__cudajit_method_check_".to_owned(),
    };
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
            copy.sig.ident = format_ident!("{copy_prefix}{}", method.sig.ident);
            copy.block = block;
            let attributes = method_check::copy_attributes();
            Some(quote!(#attributes #copy))
        });
    // A generic block's markers of associated functions are on the struct's reserved
    // instance (`Pair<GenericArgument>`), where a path without arguments finds them
    // (`Pair::new`, `cudajit_core::layout::probe`); its methods' on the block's own type.
    let (marker_impl, block_impl) = match &parsed.generic {
        Some(generic) => {
            let reserved = generic.reserved_args.iter().map(|slot| match slot {
                crate::parse::GenericSlot::Type => quote!(#private::GenericArgument),
                crate::parse::GenericSlot::Const => quote!(0),
            });
            let generics = &generic.generics;
            let self_ty = &generic.self_ty;
            (
                quote!(impl #owner<#(#reserved),*>),
                quote!(impl #generics #self_ty),
            )
        }
        None => (quote!(impl #owner), quote!(impl #owner)),
    };
    let lints = kernel_language_lints();
    let doc = format!("The captured functions of a `#[device]` impl block of `{self_ident}`.");
    let slot = match &parsed.slot {
        Some(slot) => {
            let slot = format_ident!("{}", slot, span = self_ident.span());
            quote! {
                #[doc = #doc]
                #[doc(hidden)]
                #[allow(non_upper_case_globals)]
                pub const #slot: &'static [&'static #private::CapturedFunction] = &[#(&#captured),*];
            }
        }
        None => TokenStream::new(),
    };
    let row = match &parsed.slot {
        Some(_) => TokenStream::new(),
        None => block_row(parsed, &captured, paths),
    };
    quote! {
        #lints
        #item

        #marker_impl {
            #slot
            #(#markers)*
        }

        #block_impl {
            #(#method_markers)*
            #(#checked_copies)*
        }

        #row

        #(#checks)*
    }
}

/// The block's row of `DEVICE_IMPL_BLOCKS`: its struct, its trait, its captured functions,
/// its constants as rustc evaluates them and its associated types as written; for a trait's
/// impl, the check that the trait is a `#[device]` one.
fn block_row(parsed: &DeviceImpl, captured: &[TokenStream], paths: &Paths) -> TokenStream {
    let private = paths.private();
    let owner = &parsed.owner;
    let owner_name = owner.to_string();
    let (trait_name, trait_check) = match &parsed.user_trait {
        Some(path) => {
            let name = path
                .segments
                .last()
                .map(|s| s.ident.to_string())
                .unwrap_or_default();
            let check = trait_item::device_trait_check(path, paths);
            (quote!(::core::option::Option::Some(#name)), check)
        }
        None => (quote!(::core::option::Option::None), TokenStream::new()),
    };
    let constants = parsed.constants.iter().map(|(name, ident)| {
        let value = match &parsed.user_trait {
            Some(path) => quote!(<#owner as #path>::#ident),
            None => quote!(#owner::#ident),
        };
        quote!(#private::ConstantValue::of(#name, &#value))
    });
    let types = parsed.types.iter().map(|(ident, ty)| {
        let name = ident.to_string();
        let written = crate::parse::written_type(ty);
        quote!(#private::AssociatedType { name: #name, written: #written })
    });
    quote! {
        #trait_check
        const _: () = {
            #[#private::linkme::distributed_slice(#private::DEVICE_IMPL_BLOCKS)]
            #[linkme(crate = #private::linkme)]
            static BLOCK: #private::DeviceImplBlock = #private::DeviceImplBlock {
                owner: #owner_name,
                trait_name: #trait_name,
                functions: &[#(&#captured),*],
                constants: &[#(#constants),*],
                types: &[#(#types),*],
            };
        };
    }
}
