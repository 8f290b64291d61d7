//! Paths that generated code uses, in one place.

use proc_macro2::TokenStream;
use quote::quote;

/// The facade crate.
pub(super) fn cudajit() -> TokenStream {
    quote!(::cudajit)
}
