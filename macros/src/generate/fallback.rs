//! What stands in for an item the macro rejected.
//!
//! Next to the `compile_error!`s the expansion keeps the user's item, so that the rest of
//! the file still type-checks and rustc's own errors on the body still show, and it adds
//! the items that call sites name, as thiserror's `fallback.rs` does: a kernel's
//! `mod name { KERNEL, launch, compile }`, the marker of a device or external function.
//! Their signatures accept any call, so the user sees the real errors and not a cascade of
//! unresolved names at every call site. They never run: the `compile_error!`s stop the
//! build.

use proc_macro2::TokenStream;
use quote::quote;
use syn::{FnArg, ForeignItem, GenericParam, ItemFn, ItemForeignMod};

use super::{captured, extern_device, without_comptime, Paths};
use crate::errors::Errors;
use crate::parse::FnKind;

/// An item that is not what the attribute applies to: the error, and the item as it was.
pub(crate) fn unparsed(error: syn::Error, item: TokenStream) -> TokenStream {
    let compile_error = error.to_compile_error();
    quote!(#compile_error #item)
}

/// A rejected `#[kernel]` or `#[device]` function: the errors, the function as written,
/// and a stand-in for what the macro would have generated.
pub(crate) fn function(kind: FnKind, item: &ItemFn, errors: Errors, paths: &Paths) -> TokenStream {
    let compile_errors = errors.into_compile_errors();
    let function = without_comptime(item);
    let stand_in = match kind {
        FnKind::Kernel => kernel_module(item, paths),
        FnKind::Device => device_marker(&item.vis, &item.sig.ident, paths),
    };
    quote!(#compile_errors #function #stand_in)
}

/// A rejected `#[extern_device]` block: the errors, and for each function its host stub
/// (with the declared signature, so callers keep type-checking) and a stand-in marker.
pub(crate) fn extern_device(block: &ItemForeignMod, errors: Errors, paths: &Paths) -> TokenStream {
    let compile_errors = errors.into_compile_errors();
    let stand_ins = block.items.iter().filter_map(|foreign| match foreign {
        ForeignItem::Fn(function) => {
            let stub = extern_device::host_stub(function, paths);
            let marker = device_marker(&function.vis, &function.sig.ident, paths);
            Some(quote!(#stub #marker))
        }
        _ => None,
    });
    quote!(#compile_errors #(#stand_ins)*)
}

/// The marker type through which kernels find a device function's captured form.
fn device_marker(vis: &syn::Visibility, name: &syn::Ident, paths: &Paths) -> TokenStream {
    let private = paths.private();
    let captured = captured::stand_in(&name.to_string(), paths);
    quote! {
        #[doc(hidden)]
        #[allow(non_camel_case_types, dead_code)]
        #vis struct #name {}

        impl #private::DeviceFunction for #name {
            const CAPTURED: #private::CapturedFunction = #captured;
        }
    }
}

/// `mod name { KERNEL, compile, launch }` whose functions take any arguments: one per
/// parameter of the kernel after the stream and configuration (`launch`) or the context
/// (`compile`, which takes the `#[comptime]` ones), and the kernel's generic parameters
/// without their bounds, so that `launch::<f32>(..)` is accepted too.
fn kernel_module(item: &ItemFn, paths: &Paths) -> TokenStream {
    let cudajit = paths.cudajit();
    let vis = &item.vis;
    let name = &item.sig.ident;
    let generics = &item.sig.generics.params;
    let type_params: Vec<&syn::Ident> = generics
        .iter()
        .filter_map(|param| match param {
            GenericParam::Type(ty) => Some(&ty.ident),
            _ => None,
        })
        .collect();
    let unbounded = generics.iter().map(|param| match param {
        GenericParam::Type(ty) => {
            let ident = &ty.ident;
            quote!(#ident)
        }
        GenericParam::Const(constant) => {
            let ident = &constant.ident;
            let ty = &constant.ty;
            quote!(const #ident: #ty)
        }
        GenericParam::Lifetime(lifetime) => {
            let lifetime = &lifetime.lifetime;
            quote!(#lifetime)
        }
    });
    let generics = quote!(<#(#unbounded),*>);
    let any = quote!(impl ::core::marker::Sized);
    let mut launch_params = vec![quote!(_: #any), quote!(_: #any)];
    let mut compile_params = vec![quote!(_: #any)];
    for input in &item.sig.inputs {
        let FnArg::Typed(typed) = input else {
            continue;
        };
        let ty = stand_in_type(&typed.ty, &type_params, paths);
        if typed.attrs.iter().any(|a| a.path().is_ident("comptime")) {
            compile_params.push(quote!(_: #ty));
        }
        launch_params.push(quote!(_: #ty));
    }
    let captured = captured::stand_in(&name.to_string(), paths);
    let message = format!("the `#[kernel]` `{name}` did not compile");
    quote! {
        #[allow(non_snake_case, dead_code, clippy::too_many_arguments)]
        #vis mod #name {
            pub static KERNEL: #cudajit::Kernel =
                #cudajit::Kernel::new(#captured, cfg!(debug_assertions));

            pub fn compile #generics (
                #(#compile_params),*
            ) -> ::core::result::Result<&'static #cudajit::LoadedKernel, #cudajit::Error> {
                ::core::unreachable!(#message)
            }

            pub fn launch #generics (
                #(#launch_params),*
            ) -> ::core::result::Result<(), #cudajit::Error> {
                ::core::unreachable!(#message)
            }
        }
    }
}

/// The stand-in launcher's type for a parameter written `ty`: anything, except where the
/// type names a generic type parameter the call must let rustc infer (`a: T`, `x: &[T]`).
fn stand_in_type(ty: &syn::Type, type_params: &[&syn::Ident], paths: &Paths) -> TokenStream {
    let cudajit = paths.cudajit();
    let generic = |ty: &syn::Type| match ty {
        syn::Type::Path(path) if path.qself.is_none() => path
            .path
            .get_ident()
            .filter(|ident| type_params.contains(ident))
            .cloned(),
        _ => None,
    };
    if let Some(param) = generic(ty) {
        return quote!(#param);
    }
    if let syn::Type::Reference(reference) = ty {
        if let syn::Type::Slice(slice) = &*reference.elem {
            if let Some(elem) = generic(&slice.elem) {
                return match reference.mutability {
                    Some(_) => quote!(&mut impl #cudajit::KernelSliceMut<#elem>),
                    None => quote!(&impl #cudajit::KernelSlice<#elem>),
                };
            }
        }
    }
    quote!(impl ::core::marker::Sized)
}
