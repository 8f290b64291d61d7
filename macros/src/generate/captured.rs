//! The `CapturedFunction` value of a kernel or device function.

use proc_macro2::TokenStream;
use quote::quote;
use sha2::{Digest, Sha256};

use super::paths;
use crate::parse::Parsed;

/// `CapturedFunction { name, source, source_hash, file, callees }` for `parsed`.
pub(super) fn captured_function(parsed: &Parsed) -> TokenStream {
    let private = paths::private();
    let json = parsed.source.to_json();
    let hash = sha256_hex(&json);
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
pub(super) fn structs_fn(structs: &[syn::Path]) -> TokenStream {
    let private = paths::private();
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

/// A stand-in `CapturedFunction` for a function the macro rejected: it lets the code that
/// names the function's captured form type-check, so that only the real errors show. The
/// `compile_error!` beside it stops the build, so it never reaches the JIT.
pub(super) fn stand_in(name: &str) -> TokenStream {
    let private = paths::private();
    quote! {
        #private::CapturedFunction {
            name: #name,
            source: "",
            source_hash: "",
            file: ::core::file!(),
            callees: #private::CapturedFunction::no_callees,
            structs: #private::CapturedFunction::no_structs,
            library: ::core::option::Option::None,
        }
    }
}

/// Lowercase hex SHA-256 of `text`, the `source_hash` of its captured form.
pub(super) fn sha256_hex(text: &str) -> String {
    Sha256::digest(text.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}
