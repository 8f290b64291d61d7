//! `#[derive(DeviceCopy)]`: a `#[repr(C)]` struct of scalars, or a fieldless enum with an
//! integer `#[repr]`, that kernels take by value and in slices.

use proc_macro2::TokenStream;
use quote::quote;
use syn::{Data, DeriveInput, Fields};

use crate::errors::Errors;
use crate::parse::scalar_type;
use cudajit_core::Scalar;

/// Expands `#[derive(DeviceCopy)]`.
pub(crate) fn device_copy(input: TokenStream) -> TokenStream {
    let input: DeriveInput = match syn::parse2(input) {
        Ok(input) => input,
        Err(error) => return error.to_compile_error(),
    };
    if let Data::Enum(data) = &input.data {
        return device_enum(&input, data);
    }
    let mut errors = Errors::default();
    let repr_c = reprs(&input).iter().any(|i| i == "C");
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
    let drop_hook = device_drop(&input, &mut errors);
    if !errors.is_empty() {
        return errors.into_compile_errors();
    }
    let ident = &input.ident;
    let name = ident.to_string();
    let private = quote!(::cudajit::__private);
    let drop = match drop_hook {
        Some(path) => quote!(::core::option::Option::Some(#private::DropHook({
            fn hook() -> &'static #private::CapturedFunction {
                const HOOK: &#private::CapturedFunction =
                    &<#path as #private::DeviceFunction>::CAPTURED;
                HOOK
            }
            hook
        }))),
        None => quote!(::core::option::Option::None),
    };
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
        // Not listed in rustc's "other types implement" notes: the fix is the derive.
        #[diagnostic::do_not_recommend]
        unsafe impl #private::DeviceStruct for #ident {
            const LAYOUT: #private::StructLayout = #private::StructLayout {
                name: #name,
                fields: &[#(#layouts),*],
                size: ::core::mem::size_of::<#ident>(),
                align: ::core::mem::align_of::<#ident>(),
                enum_repr: ::core::option::Option::None,
                variants: &[],
                drop: #drop,
            };
        }
        // No launch check: only hand-written impls (`DevComm`'s) have one.
        impl #private::LaunchArgument for #ident {}
    }
}

/// `#[device_drop(f)]`: the `#[extern_device]` function taking `&mut Self` that kernels
/// call on a local of the type at the end of its scope.
fn device_drop(input: &DeriveInput, errors: &mut Errors) -> Option<syn::Path> {
    let mut hooks = input
        .attrs
        .iter()
        .filter(|a| a.path().is_ident("device_drop"));
    let attr = hooks.next()?;
    if let Some(second) = hooks.next() {
        errors.at(second, "one `#[device_drop(f)]` per type");
    }
    match attr.parse_args::<syn::Path>() {
        Ok(path) => Some(path),
        Err(_) => {
            errors.at(
                attr,
                "write the function the device calls at the end of a local's scope: `#[device_drop(end_session)]`",
            );
            None
        }
    }
}

/// The idents of the type's `#[repr(..)]` attributes.
fn reprs(input: &DeriveInput) -> Vec<syn::Ident> {
    let mut idents = Vec::new();
    for attr in input
        .attrs
        .iter()
        .filter(|attr| attr.path().is_ident("repr"))
    {
        // `C`, `u8`, ... and `align(16)` (its value is rustc's to check).
        let _ = attr.parse_nested_meta(|meta| {
            if let Some(ident) = meta.path.get_ident() {
                idents.push(ident.clone());
            }
            if meta.input.peek(syn::token::Paren) {
                let content;
                syn::parenthesized!(content in meta.input);
                let _: proc_macro2::TokenStream = content.parse()?;
            }
            Ok(())
        });
    }
    idents
}

/// A fieldless enum: kernels see it as its integer representation, so every discriminant
/// must be known and every bit pattern the device writes must be checked by the host
/// (enums are not `ValidAsZeroBits` unless a variant is 0, and never `DeviceRepr`-writable).
fn device_enum(input: &DeriveInput, data: &syn::DataEnum) -> TokenStream {
    let mut errors = Errors::default();
    let repr = reprs(input).iter().find_map(|ident| {
        Scalar::from_rust_name(&ident.to_string())
            .filter(|s| s.is_integer() && !matches!(s, Scalar::Usize | Scalar::Isize))
    });
    let Some(repr) = repr else {
        return syn::Error::new_spanned(
            &input.ident,
            "`DeviceCopy` enums need an integer representation, such as `#[repr(u32)]`: kernels see the enum as that integer",
        )
        .to_compile_error();
    };
    if !input.generics.params.is_empty() {
        errors.at(&input.generics, "`DeviceCopy` enums cannot be generic");
    }
    if data.variants.is_empty() {
        errors.at(&input.ident, "`DeviceCopy` enums need at least one variant");
    }
    for variant in &data.variants {
        if !matches!(variant.fields, Fields::Unit) {
            errors.at(
                &variant.fields,
                "`DeviceCopy` enums are fieldless: kernels see them as integers",
            );
        }
    }
    if !errors.is_empty() {
        return errors.into_compile_errors();
    }
    let ident = &input.ident;
    let name = ident.to_string();
    let private = quote!(::cudajit::__private);
    let repr_variant = syn::Ident::new(&format!("{repr:?}"), proc_macro2::Span::call_site());
    let variants = data.variants.iter().map(|variant| {
        let variant_ident = &variant.ident;
        let variant_name = variant_ident.to_string();
        quote! {
            #private::VariantLayout {
                name: #variant_name,
                value: #ident::#variant_ident as i64,
            }
        }
    });
    quote! {
        // SAFETY: a fieldless enum with an integer `repr` is passed as that integer. Kernels
        // only read enums (a write of an arbitrary integer could make an invalid value), which
        // the lowering enforces by treating enum slices as read-only.
        unsafe impl #private::DeviceRepr for #ident {}
        // SAFETY: the layout is computed by rustc (`size_of`, `align_of`, `as` casts).
        #[diagnostic::do_not_recommend]
        unsafe impl #private::DeviceStruct for #ident {
            const LAYOUT: #private::StructLayout = #private::StructLayout {
                name: #name,
                fields: &[],
                size: ::core::mem::size_of::<#ident>(),
                align: ::core::mem::align_of::<#ident>(),
                enum_repr: ::core::option::Option::Some(::cudajit::core::Scalar::#repr_variant),
                variants: &[#(#variants),*],
                drop: ::core::option::Option::None,
            };
        }
        impl #private::LaunchArgument for #ident {}
    }
}
