//! `#[derive(DeviceCopy)]`'s input: a `#[repr(C)]` struct (named fields or a tuple struct)
//! of scalars, `DeviceCopy` structs and arrays of them, a unit struct, or a fieldless enum
//! with an integer `#[repr]`. Whether the type may derive it at all (its `repr`, generics,
//! variants) is `check::device_copy`'s; this reads what the generated impls need.

use cudajit_core::Scalar;
use syn::{Data, DeriveInput};

use super::scalar_type;
use crate::errors::Errors;

/// A type deriving `DeviceCopy`.
pub(crate) enum DeviceCopy {
    Struct(DeviceCopyStruct),
    Enum(DeviceCopyEnum),
}

/// The type of a field of a `DeviceCopy` struct.
pub(crate) enum FieldShape {
    Scalar(Scalar),
    /// A type parameter of a generic struct (`a: T` of `Pair<T>`), a scalar type.
    Param(syn::Ident),
    /// Another `DeviceCopy` struct, by the path written.
    Struct(syn::Path),
    /// `[elem; len]`.
    Array(Box<FieldShape>, syn::Expr),
}

/// A `#[repr(C)]` struct of scalar, struct and array fields.
pub(crate) struct DeviceCopyStruct {
    pub ident: syn::Ident,
    /// The fields in declaration order, with their types: named, or `0`, `1`, .. of a
    /// tuple struct.
    pub fields: Vec<(syn::Member, FieldShape)>,
    /// `#[device_drop(f)]`: the function kernels call on a local at the end of its scope.
    pub drop_hook: Option<syn::Path>,
    /// A generic struct's parameters, in order (empty for other structs).
    pub params: Vec<StructParam>,
}

/// A generic parameter of a `DeviceCopy` struct: a scalar type (`T`, with the bounds the
/// struct writes) or an integer constant (`const N: usize`).
pub(crate) enum StructParam {
    Type(syn::TypeParam),
    Const(syn::Ident, syn::Type),
}

/// A fieldless enum that kernels see as its integer representation.
pub(crate) struct DeviceCopyEnum {
    pub ident: syn::Ident,
    /// The integer of `#[repr(..)]`.
    pub repr: Scalar,
    pub variants: Vec<syn::Ident>,
}

/// Reads a `DeviceCopy` type. Returns `None` if anything was rejected.
pub(crate) fn device_copy(input: &DeriveInput, errors: &mut Errors) -> Option<DeviceCopy> {
    if let Data::Enum(data) = &input.data {
        // A missing integer `repr` was reported by the check.
        let repr = integer_repr(input)?;
        return Some(DeviceCopy::Enum(DeviceCopyEnum {
            ident: input.ident.clone(),
            repr,
            variants: data.variants.iter().map(|v| v.ident.clone()).collect(),
        }));
    }
    let params: Vec<StructParam> = input
        .generics
        .params
        .iter()
        .filter_map(|param| match param {
            syn::GenericParam::Type(ty) => Some(StructParam::Type(ty.clone())),
            syn::GenericParam::Const(c) => Some(StructParam::Const(c.ident.clone(), c.ty.clone())),
            // Refused by the check.
            syn::GenericParam::Lifetime(_) => None,
        })
        .collect();
    let type_params: Vec<&syn::Ident> = params
        .iter()
        .filter_map(|p| match p {
            StructParam::Type(ty) => Some(&ty.ident),
            StructParam::Const(..) => None,
        })
        .collect();
    let mut fields = Vec::new();
    match &input.data {
        Data::Struct(data) => {
            // A tuple struct's fields are named `0`, `1`, .. as Rust names them (`p.0`); a
            // unit struct has none.
            for (index, field) in data.fields.iter().enumerate() {
                let member = match &field.ident {
                    Some(name) => syn::Member::Named(name.clone()),
                    None => syn::Member::Unnamed(syn::Index::from(index)),
                };
                match field_shape(&field.ty, &type_params) {
                    Some(shape) => fields.push((member, shape)),
                    None => errors.at(
                        &field.ty,
                        "`DeviceCopy` fields are scalars (`bool`, integers, `f32`, `f64`), `DeviceCopy` structs and arrays of them (`[f32; 4]`, `[Vec3; 2]`)",
                    ),
                }
            }
        }
        _ => errors.at(&input.ident, "`DeviceCopy` applies to structs"),
    }
    let drop_hook = device_drop(input, errors);
    Some(DeviceCopy::Struct(DeviceCopyStruct {
        ident: input.ident.clone(),
        fields,
        drop_hook,
        params,
    }))
}

/// What a field's type is: a scalar, a struct by path (rustc checks it is `DeviceCopy`
/// where its layout is taken), or an array of either.
fn field_shape(ty: &syn::Type, type_params: &[&syn::Ident]) -> Option<FieldShape> {
    if let Some(scalar) = scalar_type(ty) {
        return Some(FieldShape::Scalar(scalar));
    }
    match ty {
        syn::Type::Path(path)
            if path.qself.is_none()
                && path
                    .path
                    .get_ident()
                    .is_some_and(|ident| type_params.contains(&ident)) =>
        {
            path.path.get_ident().cloned().map(FieldShape::Param)
        }
        syn::Type::Path(path) if path.qself.is_none() => {
            Some(FieldShape::Struct(path.path.clone()))
        }
        syn::Type::Array(array) => Some(FieldShape::Array(
            Box::new(field_shape(&array.elem, type_params)?),
            array.len.clone(),
        )),
        syn::Type::Paren(inner) => field_shape(&inner.elem, type_params),
        syn::Type::Group(inner) => field_shape(&inner.elem, type_params),
        _ => None,
    }
}

/// The integer of an enum's `#[repr(u8..i64)]`, if it has one (`usize`/`isize` have no
/// fixed width on the device).
pub(crate) fn integer_repr(input: &DeriveInput) -> Option<Scalar> {
    reprs(input).iter().find_map(|ident| {
        Scalar::from_rust_name(&ident.to_string())
            .filter(|s| s.is_integer() && !matches!(s, Scalar::Usize | Scalar::Isize))
    })
}

/// Whether the type is `#[repr(C)]`.
pub(crate) fn is_repr_c(input: &DeriveInput) -> bool {
    reprs(input).iter().any(|i| i == "C")
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
