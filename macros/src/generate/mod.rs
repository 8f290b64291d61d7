//! Code generation: the module that replaces a `#[kernel]` function.
//!
//! For `fn saxpy(..) { body }` the expansion is
//!
//! ```text
//! mod saxpy {
//!     use super::*;
//!     fn __cudajit_body(..) { body }          // never called: rustc type-checks the body
//!     pub static KERNEL: cudajit::Kernel = .. // the captured syntax and its hash
//!     pub fn launch(stream, config, ..)       // the typed launcher
//!     pub fn compile(context)                 // compile ahead of the first launch
//! }
//! ```

mod launcher;
mod paths;

use cudajit_core::ast::KernelSource;
use proc_macro2::TokenStream;
use quote::{format_ident, quote};
use sha2::{Digest, Sha256};
use syn::ItemFn;

use crate::errors::Errors;
use crate::{check, parse};

/// Expands `#[kernel]`.
pub(crate) fn kernel(attr: TokenStream, item: TokenStream) -> TokenStream {
    let item: ItemFn = match syn::parse2(item.clone()) {
        Ok(item) => item,
        Err(error) => {
            let error = syn::Error::new(error.span(), "`#[kernel]` applies to a function");
            let compile_error = error.to_compile_error();
            return quote!(#compile_error #item);
        }
    };
    let mut errors = Errors::default();
    check::attribute_args(&attr, &mut errors);
    check::signature(&item, &mut errors);
    let source = parse::kernel(&item, &mut errors);
    match source {
        Some(source) if errors.is_empty() => expand(&item, &source),
        _ => {
            // Keep the user's function so the rest of the file still type-checks.
            let compile_errors = errors.into_compile_errors();
            quote!(#compile_errors #item)
        }
    }
}

fn expand(item: &ItemFn, source: &KernelSource) -> TokenStream {
    let cudajit = paths::cudajit();
    let vis = &item.vis;
    let name = &item.sig.ident;
    let inputs = &item.sig.inputs;
    let block = &item.block;
    let (docs, other_attrs): (Vec<_>, Vec<_>) =
        item.attrs.iter().partition(|a| a.path().is_ident("doc"));
    let json = source.to_json();
    let hash = hex(&Sha256::digest(json.as_bytes()));
    let name_str = name.to_string();
    let body_fn = format_ident!("__cudajit_body");
    let launcher = launcher::launch_fn(source);
    let summary = format!(
        "The `#[kernel]` `{name_str}`: launch it with [`launch`], compile it ahead with [`compile`]."
    );

    quote! {
        #(#docs)*
        #[doc = ""]
        #[doc = #summary]
        #[allow(non_snake_case)]
        #vis mod #name {
            #[allow(unused_imports)]
            use super::*;

            /// The kernel body as written, kept so that rustc type-checks it. Never called.
            #[allow(dead_code, unused_variables, unused_mut, unused_assignments, unreachable_code, clippy::all)]
            #(#other_attrs)*
            fn #body_fn(#inputs) #block

            /// The kernel's captured form and its per-process state (compiled code, loaded
            /// modules).
            pub static KERNEL: #cudajit::Kernel = #cudajit::Kernel::new(#cudajit::__private::CapturedKernel {
                name: #name_str,
                source: #json,
                source_hash: #hash,
                file: ::core::file!(),
            });

            /// Compiles the kernel for `context`'s GPU and loads it, ahead of the first
            /// launch (the launch would do it otherwise). Returns the loaded kernel with the
            /// compile report.
            pub fn compile(
                context: &::std::sync::Arc<#cudajit::CudaContext>,
            ) -> ::core::result::Result<&'static #cudajit::LoadedKernel, #cudajit::Error> {
                KERNEL.compile(context)
            }

            #launcher
        }
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
