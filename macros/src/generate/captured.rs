//! The `CapturedFunction` value of a kernel or device function.

use proc_macro2::TokenStream;
use quote::{format_ident, quote, quote_spanned};
use syn::spanned::Spanned;

use super::Paths;
use crate::parse::Parsed;

/// `CapturedFunction { name, source, source_hash, file, callees, .. }` for `parsed`, with a
/// kernel's `arch = "sm_XYa"` requirement.
pub(super) fn captured_function(
    parsed: &Parsed,
    specific_arch: Option<(u32, u32)>,
    paths: &Paths,
) -> TokenStream {
    let private = paths.private();
    let json = parsed.source.to_json();
    let hash = source_hash(&json);
    let name = &parsed.source.name;
    let callees = &parsed.callees;
    let callees_fn = if callees.is_empty() {
        quote!(#private::CapturedFunction::no_callees)
    } else {
        let (imports, markers) = callee_markers(callees, paths);
        quote!({
            fn callees() -> &'static [&'static #private::CapturedFunction] {
                #imports
                const CALLEES: &[&#private::CapturedFunction] =
                    &[#(&<#markers as #private::DeviceFunction>::CAPTURED),*];
                CALLEES
            }
            callees
        })
    };
    let structs_fn = structs_fn(&parsed.structs, &parsed.probed, paths);
    let constants_fn = constants_fn(parsed, paths);
    let specific_arch = match specific_arch {
        Some((major, minor)) => quote! {
            ::core::option::Option::Some(#private::SpecificArch { major: #major, minor: #minor })
        },
        None => quote!(::core::option::Option::None),
    };
    quote! {
        #private::CapturedFunction {
            name: #name,
            source: #json,
            source_hash: #hash,
            file: ::core::file!(),
            callees: #callees_fn,
            structs: #structs_fn,
            library: ::core::option::Option::None,
            constants: #constants_fn,
            specific_arch: #specific_arch,
        }
    }
}

/// `1 + max(callee::CALL_DEPTH)`, the `CALL_DEPTH` of a function calling `parsed`'s
/// callees: a cycle of calls makes rustc report the cycle of constants.
pub(super) fn call_depth(parsed: &Parsed, paths: &Paths) -> TokenStream {
    let private = paths.private();
    if parsed.callees.is_empty() {
        return quote!(1usize);
    }
    let (imports, markers) = callee_markers(&parsed.callees, paths);
    quote!({
        #imports
        let depths = [#(<#markers as #private::DeviceFunction>::CALL_DEPTH_RECURSION_IS_NOT_SUPPORTED_WRITE_A_LOOP),*];
        let mut deepest = 0usize;
        let mut index = 0;
        while index < depths.len() {
            if depths[index] > deepest {
                deepest = depths[index];
            }
            index += 1;
        }
        deepest + 1
    })
}

/// The `constants` field of a `CapturedFunction`: the values of the Rust constants the
/// body names, evaluated by rustc in a const context. The body's own `const` items are
/// repeated inside it (they cannot name the function's generics, so they mean the same
/// there); every other name resolves where the function is defined. Each value is
/// written at the name's span, so a constant of a type the kernel cannot take is
/// reported at its use.
fn constants_fn(parsed: &Parsed, paths: &Paths) -> TokenStream {
    let private = paths.private();
    if parsed.constants.is_empty() {
        return quote!(#private::CapturedFunction::no_constants);
    }
    let items = &parsed.const_items;
    let values = parsed.constants.iter().map(|(name, path)| {
        let span = path.span();
        quote_spanned!(span=> #private::ConstantValue::of(#name, &#path))
    });
    quote!({
        fn constants() -> &'static [#private::ConstantValue] {
            #(#items)*
            const CONSTANTS: &[#private::ConstantValue] = &[#(#values),*];
            CONSTANTS
        }
        constants
    })
}

/// The marker types of the functions a function calls, each behind an alias, so that a
/// callee that is not a `#[device]` function gets cudajit's message at the call instead
/// of rustc's "expected type, found function".
///
/// `use path as __cudajit_callee_N;` imports what `path` names in every namespace: for a
/// `#[device]` function its marker type too. For a plain function it imports no type, and
/// the alias then resolves to the type of the same name that the glob import below
/// brings, a stand-in whose captured form is a compile-time panic with the message (glob
/// imports never shadow explicit ones, so a real marker always wins). Returns the
/// imports and the aliases, in the order of `callees`.
fn callee_markers(callees: &[syn::Path], paths: &Paths) -> (TokenStream, Vec<syn::Ident>) {
    let private = paths.private();
    let markers: Vec<syn::Ident> = (0..callees.len())
        .map(|index| format_ident!("__cudajit_callee_{index}"))
        .collect();
    let stand_ins = callees.iter().zip(&markers).map(|(path, marker)| {
        // At the function's name, the last segment of the path.
        let (name, span) = match path.segments.last() {
            Some(segment) => (segment.ident.to_string(), segment.ident.span()),
            None => (String::new(), path.span()),
        };
        let message = format!("`{name}` is not a `#[device]` function: add `#[device]` to it");
        let panic = quote_spanned!(span=> ::core::panic!(#message));
        quote! {
            pub struct #marker;
            impl #private::DeviceFunction for #marker {
                const CAPTURED: #private::CapturedFunction = #panic;
            }
        }
    });
    let imports = quote! {
        #[allow(non_camel_case_types)]
        mod __cudajit_not_device {
            #(#stand_ins)*
        }
        #[allow(unused_imports)]
        use __cudajit_not_device::*;
        #(
            // A callee named `unsafe_*` would trip clippy's `unsafe_removed_from_name` in
            // the user's crate: the alias is ours, not theirs.
            #[allow(unused_imports, clippy::unsafe_removed_from_name)]
            use #callees as #markers;
        )*
    };
    (imports, markers)
}

/// The `structs` field of a `CapturedFunction`: the layouts of the structs and enums a
/// function names, taken from their `DeviceStruct` impls, and those of the structs its body
/// names without arguments (`probed`), found by a probe (`cudajit_core::layout::probe`):
/// a generic struct's base layout, any other struct's own.
pub(super) fn structs_fn(
    structs: &[syn::Path],
    probed: &[syn::Path],
    paths: &Paths,
) -> TokenStream {
    let private = paths.private();
    if structs.is_empty() && probed.is_empty() {
        return quote!(#private::CapturedFunction::no_structs);
    }
    let probes = probed.iter().map(|path| {
        let span = path.span();
        quote_spanned!(span=> #private::probe_layout(&#path::__cudajit_probe))
    });
    quote!({
        fn structs() -> &'static [&'static #private::StructLayout] {
            #[allow(unused_imports)]
            use #private::ProbeFallback as _;
            const STRUCTS: &[&#private::StructLayout] =
                &[#(&<#structs as #private::DeviceStruct>::LAYOUT,)* #(#probes),*];
            STRUCTS
        }
        structs
    })
}

/// A stand-in `CapturedFunction` for a function the macro rejected: it lets the code that
/// names the function's captured form type-check, so that only the real errors show. The
/// `compile_error!` beside it stops the build, so it never reaches the JIT.
pub(super) fn stand_in(name: &str, paths: &Paths) -> TokenStream {
    let private = paths.private();
    quote! {
        #private::CapturedFunction {
            name: #name,
            source: "",
            source_hash: "",
            file: ::core::file!(),
            callees: #private::CapturedFunction::no_callees,
            structs: #private::CapturedFunction::no_structs,
            library: ::core::option::Option::None,
            constants: #private::CapturedFunction::no_constants,
            specific_arch: ::core::option::Option::None,
        }
    }
}

/// Lowercase hex BLAKE3 of `text`, the `source_hash` of its captured form (the hash the
/// cache uses everywhere, so a dependant builds one hash crate, not two).
pub(super) fn source_hash(text: &str) -> String {
    blake3::hash(text.as_bytes()).to_hex().to_string()
}

/// The marker constant a `#[device]` inherent impl block defines for each of its
/// functions, `Vec3::__cudajit_device_fn_new`.
pub(super) fn device_fn_marker(function: &syn::Ident) -> syn::Ident {
    format_ident!("__cudajit_device_fn_{}", function, span = function.span())
}

/// For each associated function the body calls (`Vec3::new`), a constant that names its
/// marker: the `#[device]` impl block's inherent one, or, when the function's impl block
/// is not `#[device]`, the default of a local trait whose value is a compile-time panic
/// with the message, at the call (Rust looks up inherent associated items first).
pub(super) fn associated_checks(parsed: &Parsed) -> TokenStream {
    let checks = parsed.associated.iter().map(|(ty, function)| {
        let marker = device_fn_marker(function);
        // `Pair::<f32>::new`: the marker is on the struct's reserved instance, which a
        // path without arguments finds (`cudajit_core::layout::probe`).
        let mut ty = ty.clone();
        if let Some(last) = ty.segments.last_mut() {
            last.arguments = syn::PathArguments::None;
        }
        let message =
            format!("`{function}` is not a device method: add `#[device]` to its impl block");
        let span = function.span();
        let panic = quote_spanned!(span=> ::core::panic!(#message));
        quote! {
            const _: () = {
                #[allow(non_camel_case_types, non_upper_case_globals, dead_code)]
                trait __cudajit_not_device {
                    const #marker: () = #panic;
                }
                impl<T: ?Sized> __cudajit_not_device for T {}
                #ty::#marker
            };
        }
    });
    quote!(#(#checks)*)
}
