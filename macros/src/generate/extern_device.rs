//! What replaces an `#[extern_device(library = PATH)]` block.
//!
//! For each `fn name(a: f32, b: i32) -> f32;` of the block the expansion is
//!
//! ```text
//! fn name(a: f32, b: i32) -> f32 { .. }   // host stub: panics (device code only)
//! struct name {}                         // marker with the captured declaration
//! impl cudajit::DeviceFunction for name { const CAPTURED = .. library: Some(&PATH) .. }
//! ```
//!
//! so kernels call `name(..)` as ordinary Rust, and find its declaration and library the
//! way they find `#[device]` functions.

use cudajit_core::ast::{FunctionSource, ParamType, ValueType};
use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};
use syn::spanned::Spanned;
use syn::ForeignItemFn;

use super::{captured, Paths};

/// The host stubs and captured declarations of the block's functions, defined by `library`.
pub(crate) fn extern_functions(
    declared: &[(&ForeignItemFn, FunctionSource)],
    library: &syn::Path,
    paths: &Paths,
) -> TokenStream {
    declared
        .iter()
        .map(|(function, declaration)| extern_function(function, declaration, library, paths))
        .collect()
}

/// The host function of the same signature: it panics, as device intrinsics do on the host.
pub(super) fn host_stub(function: &ForeignItemFn, paths: &Paths) -> TokenStream {
    let private = paths.private();
    let name = &function.sig.ident;
    let vis = &function.vis;
    let inputs = &function.sig.inputs;
    let output = &function.sig.output;
    let attrs = function
        .attrs
        .iter()
        .filter(|a| !a.path().is_ident("link_name"));
    let message = name.to_string();
    quote! {
        #(#attrs)*
        #[allow(unused_variables)]
        #vis fn #name(#inputs) #output {
            #private::extern_device_on_host(#message)
        }
    }
}

fn extern_function(
    function: &ForeignItemFn,
    declared: &FunctionSource,
    library: &syn::Path,
    paths: &Paths,
) -> TokenStream {
    let private = paths.private();
    let name = &function.sig.ident;
    let vis = &function.vis;
    let stub = host_stub(function, paths);
    let json = declared.to_json();
    let hash = captured::source_hash(&json);
    let name_text = name.to_string();
    // The structs and enums of the signature, whose layouts the lowering needs.
    let structs: Vec<syn::Path> = declared
        .params
        .iter()
        .filter_map(|param| match &param.ty {
            ParamType::Value(ValueType::Struct(name))
            | ParamType::Reference {
                target: ValueType::Struct(name),
                ..
            } => Some(syn::Path::from(syn::Ident::new(
                name,
                name_span(function, name),
            ))),
            _ => None,
        })
        .collect();
    let structs_fn = captured::structs_fn(&structs, &[], paths);
    let doc = format!("The captured declaration of the `#[extern_device]` function [`{name}()`].");
    // Spanned at the user's path, so a path that is not a `DeviceLibrary` is reported there.
    let library_fn = quote_spanned! {library.span()=>
        {
            fn library() -> &'static #private::DeviceLibrary {
                &#library
            }
            library
        }
    };
    quote! {
        #stub

        #[doc = #doc]
        #[doc(hidden)]
        #[allow(non_camel_case_types, dead_code)]
        #vis struct #name {}

        impl #private::DeviceFunction for #name {
            const CAPTURED: #private::CapturedFunction = #private::CapturedFunction {
                name: #name_text,
                source: #json,
                source_hash: #hash,
                file: ::core::file!(),
                callees: #private::CapturedFunction::no_callees,
                structs: #structs_fn,
                library: ::core::option::Option::Some(#library_fn),
                constants: #private::CapturedFunction::no_constants,
                specific_arch: ::core::option::Option::None,
            };
        }
    }
}

/// The span of the type named `name` in the function's signature (for errors rustc reports
/// on the generated layout reference).
fn name_span(function: &ForeignItemFn, name: &str) -> proc_macro2::Span {
    use quote::ToTokens;
    function
        .sig
        .inputs
        .to_token_stream()
        .into_iter()
        .find(|token| matches!(token, proc_macro2::TokenTree::Ident(i) if i == name))
        .map_or_else(|| function.sig.ident.span(), |token| token.span())
}
