//! Code generation: what replaces a `#[kernel]` or `#[device]` function.
//!
//! For `fn saxpy(..) { body }` marked `#[kernel]` the expansion is
//!
//! ```text
//! mod saxpy {
//!     use super::*;
//!     fn __cudajit_body(..) { body }          // never called: rustc type-checks the body
//!     pub static KERNEL: cudajit::Kernel = .. // the captured syntax, its hash, its callees
//!     pub fn launch(stream, config, ..)       // the typed launcher
//!     pub fn compile(context, ..)             // compile ahead of the first launch
//! }
//! ```
//!
//! For `fn helper(..) -> f32 { body }` marked `#[device]` the function stays as written (it
//! is ordinary Rust, callable on the host too) and a marker type of the same name, in the
//! type namespace, carries its captured form:
//!
//! ```text
//! fn helper(..) -> f32 { body }
//! struct helper {}
//! impl cudajit::DeviceFunction for helper { const CAPTURED: CapturedFunction = .. }
//! ```
//!
//! `#[extern_device]` blocks are generated in `extern_device.rs`, `#[derive(DeviceCopy)]`
//! in `device_copy.rs`, and what stands in for an item the macro rejected in `fallback.rs`.
//! Every path into the facade comes from `paths.rs`, where the `crate = path` argument
//! chooses it.

mod captured;
mod device_copy;
mod extern_device;
pub(crate) mod fallback;
mod impl_block;
mod launcher;
mod method_check;
mod paths;
mod trait_item;

use proc_macro2::TokenStream;
use quote::{format_ident, quote, quote_spanned};
use syn::ItemFn;

use crate::parse::{FnKind, Parsed};
pub(crate) use device_copy::device_copy;
pub(crate) use extern_device::extern_functions;
pub(crate) use impl_block::device_impl;
pub(crate) use paths::Paths;
pub(crate) use trait_item::device_trait;

/// What replaces a `#[kernel]` or `#[device]` function that parsed and passed its checks.
/// `specific_arch` is a kernel's `arch = "sm_XYa"` argument.
pub(crate) fn function(
    kind: FnKind,
    item: &ItemFn,
    parsed: &Parsed,
    specific_arch: Option<(u32, u32)>,
    paths: &Paths,
) -> TokenStream {
    match kind {
        FnKind::Kernel => kernel(item, parsed, specific_arch, paths),
        FnKind::Device => device(item, parsed, paths),
    }
}

/// The function without `#[comptime]` markers, which are cudajit's and not attributes
/// rustc knows.
fn without_comptime(item: &ItemFn) -> ItemFn {
    let mut item = item.clone();
    for input in &mut item.sig.inputs {
        if let syn::FnArg::Typed(typed) = input {
            typed.attrs.retain(|a| !a.path().is_ident("comptime"));
        }
    }
    item
}

fn kernel(
    item: &ItemFn,
    parsed: &Parsed,
    specific_arch: Option<(u32, u32)>,
    paths: &Paths,
) -> TokenStream {
    let cudajit = paths.cudajit();
    let vis = &item.vis;
    let name = &item.sig.ident;
    let clean = without_comptime(item);
    let inputs = &clean.sig.inputs;
    let generics = &clean.sig.generics;
    let block = &item.block;
    let (docs, other_attrs): (Vec<_>, Vec<_>) =
        item.attrs.iter().partition(|a| a.path().is_ident("doc"));
    let body_fn = format_ident!("__cudajit_body");
    let captured = captured::captured_function(parsed, specific_arch, paths);
    let launcher = launcher::launch_fns(&parsed.source, generics, &clean.sig, paths);
    let call_depth = captured::call_depth(parsed, paths);
    let associated_checks = captured::associated_checks(parsed);
    let method_check = checked_copy(
        &clean,
        parsed,
        format_ident!("__cudajit_method_check"),
        paths,
    );
    let kernel_language_lints = kernel_language_lints();
    let summary = format!(
        "The `#[kernel]` `{name}`: launch it with [`launch`], compile it ahead with [`compile`]."
    );

    quote! {
        #(#docs)*
        #[doc = ""]
        #[doc = #summary]
        #[allow(non_snake_case)]
        #vis mod #name {
            #[allow(unused_imports)]
            use super::*;

            /// The kernel body as written, kept so that rustc type-checks it and rustc's
            /// and clippy's lints see the user's code as in any function. Never called.
            #[allow(dead_code)]
            #kernel_language_lints
            #(#other_attrs)*
            fn #body_fn #generics (#inputs) #block

            /// The kernel's captured form and its per-process state (compiled code, loaded
            /// modules).
            pub static KERNEL: #cudajit::Kernel = #cudajit::Kernel::new(#captured, cfg!(debug_assertions));

            // A cycle of calls below the kernel is a build error (`DeviceFunction::CALL_DEPTH`).
            const _: usize = #call_depth;

            #associated_checks
            #method_check

            #launcher
        }
    }
}

/// The clippy lints whose suggestion the kernel language refuses today, allowed on kernel
/// bodies and device functions (only): iterators instead of index loops, `div_ceil`, `is_multiple_of` and
/// `is_empty` are not in the language yet. Remove each when the language gains its
/// rewrite. `unknown_lints`: older clippys lack some of these names.
fn kernel_language_lints() -> TokenStream {
    quote! {
        #[allow(
            unknown_lints,
            clippy::needless_range_loop,
            clippy::manual_div_ceil,
            clippy::manual_is_multiple_of,
            clippy::len_zero
        )]
    }
}

fn device(item: &ItemFn, parsed: &Parsed, paths: &Paths) -> TokenStream {
    let private = paths.private();
    let vis = &item.vis;
    let name = &item.sig.ident;
    let captured = captured::captured_function(parsed, None, paths);
    let associated_checks = captured::associated_checks(parsed);
    let method_check = checked_copy(
        item,
        parsed,
        format_ident!("__cudajit_method_check_{}", name),
        paths,
    );
    let doc = format!("The captured form of the `#[device]` function [`{name}()`].");
    let kernel_language_lints = kernel_language_lints();
    let call_depth = captured::call_depth(parsed, paths);
    // At the function's name, so that rustc's report of a cycle of calls names each one.
    let depth_impl = quote_spanned! {name.span()=>
        impl #private::DeviceFunction for #name {
            const CAPTURED: #private::CapturedFunction = #captured;
            const CALL_DEPTH_RECURSION_IS_NOT_SUPPORTED_WRITE_A_LOOP: usize = #call_depth;
        }
    };
    quote! {
        #kernel_language_lints
        #item

        #[doc = #doc]
        #[doc(hidden)]
        #[allow(non_camel_case_types, dead_code)]
        #vis struct #name {}

        #depth_impl

        // Evaluated here, so that a cycle of calls through this function is a build error.
        const _: usize = <#name as #private::DeviceFunction>::CALL_DEPTH_RECURSION_IS_NOT_SUPPORTED_WRITE_A_LOOP;

        #associated_checks
        #method_check
    }
}

/// The copy of `item`, named `name`, whose struct method calls are checked at compile
/// time (`method_check.rs`); nothing when it calls none.
fn checked_copy(item: &ItemFn, parsed: &Parsed, name: syn::Ident, paths: &Paths) -> TokenStream {
    let Some(block) = method_check::checked_block(&item.block, parsed, paths) else {
        return TokenStream::new();
    };
    let mut copy = item.clone();
    copy.attrs.clear();
    copy.vis = syn::Visibility::Inherited;
    copy.sig.ident = name;
    *copy.block = block;
    let attributes = method_check::copy_attributes();
    quote!(#attributes #copy)
}
