//! Paths of the facade crate that generated code names, in one place.
//!
//! Every item the expansions refer to in `cudajit` is reached through [`cudajit`], so the
//! crate's path (today always `::cudajit`) is chosen here and nowhere else. Paths into the
//! standard library (`::core::..`) are absolute and stay where they are used.

use proc_macro2::TokenStream;
use quote::quote;

/// The facade crate.
pub(crate) fn cudajit() -> TokenStream {
    quote!(::cudajit)
}

/// The facade's items for generated code only (`cudajit::__private`).
pub(crate) fn private() -> TokenStream {
    let cudajit = cudajit();
    quote!(#cudajit::__private)
}

/// The language crate's scalar types (`cudajit::core::Scalar`).
pub(crate) fn scalar() -> TokenStream {
    let cudajit = cudajit();
    quote!(#cudajit::core::Scalar)
}

/// A launch argument of the CPU simulator (`cudajit::simulator::SimArg`).
pub(crate) fn sim_arg() -> TokenStream {
    let cudajit = cudajit();
    quote!(#cudajit::simulator::SimArg)
}

/// The kernel argument ABI (`cudajit::core::abi`).
pub(crate) fn abi() -> TokenStream {
    let cudajit = cudajit();
    quote!(#cudajit::core::abi)
}
