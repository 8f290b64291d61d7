//! Paths of the facade crate that generated code names, in one place.
//!
//! Every item named here is the runtime's (`cudajit-runtime`), re-exported unchanged at the
//! facade's root, so `::cudajit` reaches the runtime from any program that depends on the
//! facade; cudajit's own crates built on the runtime below the facade (the tensor layer,
//! NCCL's device API, MoE, the CLI) name the runtime `cudajit` at their root
//! (`extern crate cudajit_runtime as cudajit;`), as the runtime names itself.
//!
//! Every item the expansions refer to in `cudajit` is reached through [`Paths`], made once
//! per expansion from the macro's `crate = path` argument (`::cudajit` without one), so
//! the crate's path is chosen here and nowhere else. Paths into the standard library
//! (`::core::..`) are absolute and stay where they are used.

use proc_macro2::TokenStream;
use quote::{quote, ToTokens};

/// Where generated code finds the facade crate: `::cudajit`, or the path of a
/// `crate = path` argument when the crate is renamed or re-exported.
pub(crate) struct Paths {
    cudajit: TokenStream,
}

impl Paths {
    /// `crate_path` from a `crate = path` argument, if the user gave one.
    pub(crate) fn new(crate_path: Option<&syn::Path>) -> Self {
        let cudajit = match crate_path {
            Some(path) => path.to_token_stream(),
            None => quote!(::cudajit),
        };
        Paths { cudajit }
    }

    /// The facade crate.
    pub(crate) fn cudajit(&self) -> TokenStream {
        self.cudajit.clone()
    }

    /// The facade's items for generated code only (`cudajit::__private`).
    pub(crate) fn private(&self) -> TokenStream {
        let cudajit = &self.cudajit;
        quote!(#cudajit::__private)
    }

    /// The language crate's scalar types (`cudajit::core::Scalar`).
    pub(crate) fn scalar(&self) -> TokenStream {
        let cudajit = &self.cudajit;
        quote!(#cudajit::core::Scalar)
    }

    /// A launch argument of the CPU simulator (`cudajit::simulator::SimArg`).
    pub(crate) fn sim_arg(&self) -> TokenStream {
        let cudajit = &self.cudajit;
        quote!(#cudajit::simulator::SimArg)
    }

    /// The kernel argument ABI (`cudajit::core::abi`).
    pub(crate) fn abi(&self) -> TokenStream {
        let cudajit = &self.cudajit;
        quote!(#cudajit::core::abi)
    }
}
