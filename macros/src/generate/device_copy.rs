//! What `#[derive(DeviceCopy)]` generates: the impls that let kernels take a struct or an
//! enum by value and in slices, with the layout rustc gave the type.

use proc_macro2::TokenStream;
use quote::quote;

use super::Paths;
use crate::parse::{DeviceCopy, DeviceCopyEnum, DeviceCopyStruct, FieldShape, StructParam};

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
    let generic = Generics::of(parsed, paths);
    let Generics {
        impl_generics,
        ty_generics,
        args,
        ..
    } = &generic;
    let self_ty = quote!(#ident #ty_generics);
    // A generic struct's operators are rows of `DEVICE_IMPL_BLOCKS`, like its inherent
    // blocks: a slot is a constant of one type, which a generic impl cannot name.
    let methods = match parsed.params.is_empty() {
        true => method_table(ident, paths),
        false => quote!(#private::MethodTable::NONE),
    };
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
                offset: ::core::mem::offset_of!(#self_ty, #field),
            }
        }
    });
    let no_enum_fields = parsed
        .fields
        .iter()
        .filter_map(|(_, shape)| struct_of(shape))
        // A path with arguments names a generic struct, never an enum (they are not
        // generic), and may name the struct's parameters, which a constant cannot.
        .filter(|path| path.segments.iter().all(|s| s.arguments.is_none()))
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
    let base = generic.base(parsed, paths);
    quote! {
        // SAFETY: a `#[repr(C)]` struct of scalars (checked above) has no padding-dependent
        // invariants: any bytes the device writes into its fields are valid scalars.
        unsafe impl #impl_generics #private::DeviceRepr for #self_ty {}
        // SAFETY: all-zero bytes are a valid value of every scalar field.
        unsafe impl #impl_generics #private::ValidAsZeroBits for #self_ty {}
        // SAFETY: the layout is computed by rustc (`offset_of!`, `size_of`, `align_of`).
        // Not listed in rustc's "other types implement" notes: the fix is the derive.
        #[diagnostic::do_not_recommend]
        unsafe impl #impl_generics #private::DeviceStruct for #self_ty {
            const LAYOUT: #private::StructLayout = #private::StructLayout {
                name: #name,
                fields: &[#(#layouts),*],
                size: ::core::mem::size_of::<#self_ty>(),
                align: ::core::mem::align_of::<#self_ty>(),
                enum_repr: ::core::option::Option::None,
                variants: &[],
                drop: #drop,
                methods: #methods,
                args: &[#(#args),*],
            };
        }
        // SAFETY: the layout is the one above, rustc's; the fields are scalars and the
        // struct is `ValidAsZeroBits` (above).
        unsafe impl #impl_generics #private::BufferElement for #self_ty {
            const ELEMENT: #private::ElementLayout = #private::ElementLayout::Struct(
                &<#self_ty as #private::DeviceStruct>::LAYOUT,
            );
            type Cuda = #private::AsItself;
        }
        // No launch check: only hand-written impls (`DevComm`'s) have one.
        impl #impl_generics #private::LaunchArgument for #self_ty {}
        #base
        #(#no_enum_fields)*
    }
}

/// What a generic struct's impls are written with: `impl<T: DeviceScalar, const N: usize>`,
/// `Pair<T, N>`, the layout's arguments, and the reserved instance (`Pair<GenericArgument,
/// 0>`) that holds the base layout (all empty for other structs).
struct Generics {
    impl_generics: TokenStream,
    ty_generics: TokenStream,
    args: Vec<TokenStream>,
    reserved: TokenStream,
}

impl Generics {
    fn of(parsed: &DeviceCopyStruct, paths: &Paths) -> Generics {
        let private = paths.private();
        let mut declared = Vec::new();
        let mut names = Vec::new();
        let mut args = Vec::new();
        let mut reserved = Vec::new();
        for param in &parsed.params {
            match param {
                StructParam::Type(ty) => {
                    let ident = &ty.ident;
                    let bounds = ty.bounds.iter();
                    declared.push(quote!(#ident: #private::DeviceScalar #(+ #bounds)*));
                    names.push(quote!(#ident));
                    args.push(quote!(#private::GenericValue::Type(<#ident as #private::DeviceScalar>::SCALAR)));
                    reserved.push(quote!(#private::GenericArgument));
                }
                StructParam::Const(ident, ty) => {
                    declared.push(quote!(const #ident: #ty));
                    names.push(quote!(#ident));
                    args.push(quote!(#private::GenericValue::Const(#ident as i128)));
                    reserved.push(quote!(0));
                }
            }
        }
        let angled = |items: &[TokenStream]| match items.is_empty() {
            true => TokenStream::new(),
            false => quote!(<#(#items),*>),
        };
        Generics {
            impl_generics: angled(&declared),
            ty_generics: angled(&names),
            args,
            reserved: angled(&reserved),
        }
    }

    /// A generic struct's base layout and the probe that finds it where a body names the
    /// struct without arguments (`cudajit_core::layout::probe`).
    fn base(&self, parsed: &DeviceCopyStruct, paths: &Paths) -> TokenStream {
        if parsed.params.is_empty() {
            return TokenStream::new();
        }
        let private = paths.private();
        let ident = &parsed.ident;
        let name = ident.to_string();
        let reserved = &self.reserved;
        let params = parsed.params.iter().map(|param| {
            let name = match param {
                StructParam::Type(ty) => ty.ident.to_string(),
                StructParam::Const(ident, _) => ident.to_string(),
            };
            quote!(#private::GenericValue::Param(#name))
        });
        quote! {
            impl #private::GenericBase for #ident #reserved {
                const BASE: #private::StructLayout = #private::StructLayout {
                    name: #name,
                    fields: &[],
                    size: 0,
                    align: 1,
                    enum_repr: ::core::option::Option::None,
                    variants: &[],
                    drop: ::core::option::Option::None,
                    methods: #private::MethodTable::NONE,
                    args: &[#(#params),*],
                };
            }
            impl #ident #reserved {
                #[doc(hidden)]
                #[allow(non_upper_case_globals)]
                pub const __cudajit_probe: #private::GenericProbe<Self> =
                    #private::GenericProbe(::core::marker::PhantomData);
            }
        }
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
        FieldShape::Param(ident) => {
            quote!(#private::FieldType::Scalar(<#ident as #private::DeviceScalar>::SCALAR))
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
        FieldShape::Scalar(_) | FieldShape::Param(_) => None,
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
                args: &[],
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
