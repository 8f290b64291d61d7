//! What `#[derive(DeviceCopy)]` generates: the impls that let kernels take a struct or an
//! enum by value and in slices, with the layout rustc gave the type.

use proc_macro2::TokenStream;
use quote::quote;

use super::Paths;
use crate::parse::{DeviceCopy, DeviceCopyEnum, DeviceCopyStruct, FieldShape};

/// The impls of a type deriving `DeviceCopy`.
pub(crate) fn device_copy(parsed: &DeviceCopy, paths: &Paths) -> TokenStream {
    match parsed {
        DeviceCopy::Struct(parsed) => device_struct(parsed, paths),
        DeviceCopy::Enum(parsed) => device_enum(parsed, paths),
    }
}

fn device_struct(parsed: &DeviceCopyStruct, paths: &Paths) -> TokenStream {
    let ident = &parsed.ident;
    let name = ident.to_string();
    let private = paths.private();
    let drop = match &parsed.drop_hook {
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
    let methods = method_table(ident, paths);
    let layouts = parsed.fields.iter().map(|(field, shape)| {
        let field_name = match field {
            syn::Member::Named(name) => name.to_string(),
            syn::Member::Unnamed(index) => index.index.to_string(),
        };
        let ty = field_type(shape, paths);
        quote! {
            #private::FieldLayout {
                name: #field_name,
                ty: #ty,
                offset: ::core::mem::offset_of!(#ident, #field),
            }
        }
    });
    let no_enum_fields = parsed
        .fields
        .iter()
        .filter_map(|(_, shape)| struct_of(shape))
        .map(|path| {
            let message = format!(
                "`{}` is an enum: `DeviceCopy` struct fields are scalars, `DeviceCopy` structs and arrays of them, since a kernel could write an enum field a value that is no variant; store its integer (`#[repr]`) instead",
                quote!(#path).to_string().replace(' ', "")
            );
            let span = syn::spanned::Spanned::span(path);
            quote::quote_spanned! {span=>
                const _: () = ::core::assert!(
                    <#path as #private::DeviceStruct>::LAYOUT.enum_repr.is_none(),
                    #message
                );
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
                methods: #methods,
            };
        }
        // SAFETY: the layout is the one above, rustc's; the fields are scalars and the
        // struct is `ValidAsZeroBits` (above).
        unsafe impl #private::BufferElement for #ident {
            const ELEMENT: #private::ElementLayout = #private::ElementLayout::Struct(
                &<#ident as #private::DeviceStruct>::LAYOUT,
            );
        }
        // No launch check: only hand-written impls (`DevComm`'s) have one.
        impl #private::LaunchArgument for #ident {}
        #(#no_enum_fields)*
    }
}

/// The `FieldType` of a field of this shape.
fn field_type(shape: &FieldShape, paths: &Paths) -> TokenStream {
    let private = paths.private();
    let scalar = paths.scalar();
    match shape {
        FieldShape::Scalar(s) => {
            let variant = syn::Ident::new(&format!("{s:?}"), proc_macro2::Span::call_site());
            quote!(#private::FieldType::Scalar(#scalar::#variant))
        }
        FieldShape::Struct(path) => {
            let span = syn::spanned::Spanned::span(path);
            quote::quote_spanned!(span=> #private::FieldType::Struct(&<#path as #private::DeviceStruct>::LAYOUT))
        }
        FieldShape::Array(elem, len) => {
            let elem = field_type(elem, paths);
            quote!(#private::FieldType::Array { elem: &#elem, len: #len })
        }
    }
}

/// The struct a field of this shape holds (itself or as its arrays' elements).
fn struct_of(shape: &FieldShape) -> Option<&syn::Path> {
    match shape {
        FieldShape::Scalar(_) => None,
        FieldShape::Struct(path) => Some(path),
        FieldShape::Array(elem, _) => struct_of(elem),
    }
}

/// A fieldless enum: kernels see it as its integer representation, so every discriminant
/// must be known and every bit pattern the device writes must be checked by the host
/// (enums are not `ValidAsZeroBits` unless a variant is 0, and never `DeviceRepr`-writable).
fn device_enum(parsed: &DeviceCopyEnum, paths: &Paths) -> TokenStream {
    let ident = &parsed.ident;
    let name = ident.to_string();
    let private = paths.private();
    let scalar = paths.scalar();
    let repr = &parsed.repr;
    let repr_variant = syn::Ident::new(&format!("{repr:?}"), proc_macro2::Span::call_site());
    let variants = parsed.variants.iter().map(|variant_ident| {
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
                enum_repr: ::core::option::Option::Some(#scalar::#repr_variant),
                variants: &[#(#variants),*],
                drop: ::core::option::Option::None,
                methods: #private::MethodTable::NONE,
            };
        }
        impl #private::LaunchArgument for #ident {}
    }
}

/// The struct's `MethodTable`: every slot of `cudajit_core::methods`, each the inherent
/// constant a `#[device]` impl block of the struct defines or, through `NoDeviceImpls`
/// (Rust prefers inherent associated items to trait ones), the empty default.
fn method_table(ident: &syn::Ident, paths: &Paths) -> TokenStream {
    let private = paths.private();
    let slots = cudajit_core::methods::slot_names()
        .into_iter()
        .map(|slot| syn::Ident::new(&slot, proc_macro2::Span::call_site()));
    quote!(#private::MethodTable({
        fn methods() -> &'static [&'static [&'static #private::CapturedFunction]] {
            #[allow(unused_imports)]
            use #private::NoDeviceImpls as _;
            const SLOTS: &[&[&#private::CapturedFunction]] = &[#(#ident::#slots),*];
            SLOTS
        }
        methods
    }))
}
