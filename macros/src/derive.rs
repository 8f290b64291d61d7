//! `#[derive(DeviceCopy)]`: a `#[repr(C)]` struct of scalars that kernels take by value and
//! in slices.

use proc_macro2::TokenStream;
use quote::quote;
use syn::{Data, DeriveInput, Fields};

use crate::errors::Errors;
use crate::parse::scalar_type;

/// Expands `#[derive(DeviceCopy)]`.
pub(crate) fn device_copy(input: TokenStream) -> TokenStream {
    let input: DeriveInput = match syn::parse2(input) {
        Ok(input) => input,
        Err(error) => return error.to_compile_error(),
    };
    let mut errors = Errors::default();
    let repr_c = input.attrs.iter().any(|attr| {
        attr.path().is_ident("repr")
            && attr
                .parse_args_with(
                    syn::punctuated::Punctuated::<syn::Ident, syn::Token![,]>::parse_terminated,
                )
                .is_ok_and(|list| list.iter().any(|i| i == "C"))
    });
    if !repr_c {
        errors.at(
            &input.ident,
            "`DeviceCopy` needs `#[repr(C)]`: the device must see the fields where the host put them",
        );
    }
    if !input.generics.params.is_empty() {
        errors.at(
            &input.generics,
            "`DeviceCopy` structs cannot be generic yet",
        );
    }
    let mut fields = Vec::new();
    match &input.data {
        Data::Struct(data) => match &data.fields {
            Fields::Named(named) => {
                for field in &named.named {
                    match (&field.ident, scalar_type(&field.ty)) {
                        (Some(name), Some(scalar)) => fields.push((name.clone(), scalar)),
                        _ => errors.at(
                            &field.ty,
                            "`DeviceCopy` fields are scalars (`bool`, integers, `f32`, `f64`)",
                        ),
                    }
                }
            }
            other => errors.at(other, "`DeviceCopy` applies to structs with named fields"),
        },
        _ => errors.at(&input.ident, "`DeviceCopy` applies to structs"),
    }
    if !errors.is_empty() {
        return errors.into_compile_errors();
    }
    let ident = &input.ident;
    let name = ident.to_string();
    let private = quote!(::cudajit::__private);
    let layouts = fields.iter().map(|(field, scalar)| {
        let field_name = field.to_string();
        let variant = syn::Ident::new(&format!("{scalar:?}"), proc_macro2::Span::call_site());
        quote! {
            #private::FieldLayout {
                name: #field_name,
                ty: ::cudajit::core::Scalar::#variant,
                offset: ::core::mem::offset_of!(#ident, #field),
            }
        }
    });
    quote! {
        // SAFETY: a `#[repr(C)]` struct of scalars (checked above) has no padding-dependent
        // invariants: any bytes the device writes into its fields are valid scalars.
        unsafe impl #private::DeviceRepr for #ident {}
        // SAFETY: all-zero bytes are a valid value of every scalar field.
        unsafe impl #private::ValidAsZeroBits for #ident {}
        // SAFETY: the layout is computed by rustc (`offset_of!`, `size_of`, `align_of`).
        unsafe impl #private::DeviceStruct for #ident {
            const LAYOUT: #private::StructLayout = #private::StructLayout {
                name: #name,
                fields: &[#(#layouts),*],
                size: ::core::mem::size_of::<#ident>(),
                align: ::core::mem::align_of::<#ident>(),
            };
        }
    }
}
