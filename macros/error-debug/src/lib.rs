//! `#[derive(ReadableDebug)]`: `Debug` for cudajit's error types that people can read.
//!
//! `fn main() -> Result<(), cudajit::Error>` and `.unwrap()` print an error with `{:?}`.
//! A derived `Debug` prints the structure on one line (a missing toolchain became ~2000
//! characters of `Compile(Toolchain { kernel: .., source: NotFound { searched: [..] } })`).
//! With this derive, `{:?}` prints what `Display` says, then the causes (`source()`) it
//! does not already contain, one per line, as `anyhow` and `eyre` do; `{:#?}` still prints
//! the structure, exactly as `#[derive(Debug)]` would (for tests and tools).
//!
//! The type must implement `std::error::Error` (cudajit's do, through `thiserror`).
//! A crate of its own because a derive must be a proc-macro crate and `cudajit-core`,
//! which the `#[kernel]` macros depend on, needs it too.

use proc_macro::TokenStream;
use proc_macro2::TokenStream as Tokens;
use quote::{format_ident, quote};
use syn::{parse_macro_input, Data, DeriveInput, Fields};

/// Derives `Debug`: `{:?}` the readable message and its causes, `{:#?}` the structure.
#[proc_macro_derive(ReadableDebug)]
pub fn derive_readable_debug(input: TokenStream) -> TokenStream {
    let input = parse_macro_input!(input as DeriveInput);
    match expand(&input) {
        Ok(tokens) => tokens.into(),
        Err(error) => error.to_compile_error().into(),
    }
}

fn expand(input: &DeriveInput) -> syn::Result<Tokens> {
    let name = &input.ident;
    let (impl_generics, type_generics, where_clause) = input.generics.split_for_impl();
    let structure = match &input.data {
        Data::Struct(data) => {
            let (pattern, body) = fields(&name.to_string(), &data.fields);
            quote! {
                let Self #pattern = self;
                #body
            }
        }
        Data::Enum(data) => {
            let arms = data.variants.iter().map(|variant| {
                let ident = &variant.ident;
                let (pattern, body) = fields(&ident.to_string(), &variant.fields);
                quote! { Self::#ident #pattern => { #body } }
            });
            quote! {
                match self {
                    #(#arms)*
                }
            }
        }
        Data::Union(_) => {
            return Err(syn::Error::new_spanned(
                name,
                "ReadableDebug is for error structs and enums",
            ))
        }
    };
    Ok(quote! {
        impl #impl_generics ::core::fmt::Debug for #name #type_generics #where_clause {
            fn fmt(&self, f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
                /// The message, then each cause it does not already contain.
                fn readable(
                    error: &dyn ::std::error::Error,
                    f: &mut ::core::fmt::Formatter<'_>,
                ) -> ::core::fmt::Result {
                    let mut said = ::std::string::ToString::to_string(error);
                    f.write_str(&said)?;
                    let mut causes = 0usize;
                    let mut source = error.source();
                    while let Some(cause) = source {
                        let text = ::std::string::ToString::to_string(cause);
                        if !said.contains(&text) {
                            if causes == 0 {
                                f.write_str("\n\nCaused by:")?;
                            }
                            causes += 1;
                            ::core::write!(f, "\n    {}", text.replace('\n', "\n    "))?;
                            said.push_str(&text);
                        }
                        source = cause.source();
                    }
                    ::core::result::Result::Ok(())
                }
                if !f.alternate() {
                    return readable(self, f);
                }
                #structure
            }
        }
    })
}

/// The pattern binding a variant's (or struct's) fields and the `Debug` builder over
/// them, as `#[derive(Debug)]` writes it.
fn fields(name: &str, fields: &Fields) -> (Tokens, Tokens) {
    match fields {
        Fields::Named(named) => {
            let idents: Vec<_> = named.named.iter().filter_map(|f| f.ident.clone()).collect();
            let labels = idents.iter().map(|i| i.to_string());
            (
                quote! { { #(#idents),* } },
                quote! {
                    f.debug_struct(#name)
                        #(.field(#labels, #idents))*
                        .finish()
                },
            )
        }
        Fields::Unnamed(unnamed) => {
            let bindings: Vec<_> = (0..unnamed.unnamed.len())
                .map(|i| format_ident!("field_{i}"))
                .collect();
            (
                quote! { ( #(#bindings),* ) },
                quote! {
                    f.debug_tuple(#name)
                        #(.field(#bindings))*
                        .finish()
                },
            )
        }
        Fields::Unit => (quote! {}, quote! { f.write_str(#name) }),
    }
}
