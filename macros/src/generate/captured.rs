//! The `CapturedFunction` value of a kernel or device function.

use proc_macro2::TokenStream;
use quote::quote;
use sha2::{Digest, Sha256};

use super::paths;
use crate::parse::Parsed;

/// `CapturedFunction { name, source, source_hash, file, callees }` for `parsed`.
pub(super) fn captured_function(parsed: &Parsed) -> TokenStream {
    let cudajit = paths::cudajit();
    let private = quote!(#cudajit::__private);
    let json = parsed.source.to_json();
    let hash = hex(&Sha256::digest(json.as_bytes()));
    let name = &parsed.source.name;
    let callees = &parsed.callees;
    let callees_fn = if callees.is_empty() {
        quote!(#private::CapturedFunction::no_callees)
    } else {
        quote!({
            fn callees() -> &'static [&'static #private::CapturedFunction] {
                const CALLEES: &[&#private::CapturedFunction] =
                    &[#(&<#callees as #private::DeviceFunction>::CAPTURED),*];
                CALLEES
            }
            callees
        })
    };
    let structs_fn = structs_fn(&parsed.structs);
    quote! {
        #private::CapturedFunction {
            name: #name,
            source: #json,
            source_hash: #hash,
            file: ::core::file!(),
            callees: #callees_fn,
            structs: #structs_fn,
            library: ::core::option::Option::None,
        }
    }
}

/// The `structs` field of a `CapturedFunction`: the layouts of the structs and enums a
/// function names, taken from their `DeviceStruct` impls.
pub(crate) fn structs_fn(structs: &[syn::Path]) -> TokenStream {
    let cudajit = paths::cudajit();
    let private = quote!(#cudajit::__private);
    if structs.is_empty() {
        return quote!(#private::CapturedFunction::no_structs);
    }
    quote!({
        fn structs() -> &'static [&'static #private::StructLayout] {
            const STRUCTS: &[&#private::StructLayout] =
                &[#(&<#structs as #private::DeviceStruct>::LAYOUT),*];
            STRUCTS
        }
        structs
    })
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
