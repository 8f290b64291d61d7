//! `#[extern_device(library = PATH)]` on an `extern "C" { .. }` block: the declarations of
//! external device functions that a user-supplied device library defines.
//!
//! Each `fn name(a: f32, b: i32) -> f32;` of the block becomes a captured declaration (a
//! [`FunctionSource`] without a body, whose `external` is the symbol): the function's name,
//! or the string of a `#[link_name = "c_name"]` attribute, as in ordinary Rust `extern`
//! blocks. What is generated from it is in `generate/extern_device.rs`.

use cudajit_core::ast::{Block, FunctionSource, Param, ParamType, ValueType};
use cudajit_core::Scalar;
use proc_macro2::TokenStream;
use syn::spanned::Spanned;
use syn::{ForeignItem, ForeignItemFn, ItemForeignMod};

use super::{scalar_type, span_of};
use crate::errors::Errors;

/// The item under `#[extern_device]`, which must be an `extern` block.
pub(crate) fn extern_block(item: TokenStream) -> syn::Result<ItemForeignMod> {
    syn::parse2(item).map_err(|error| {
        syn::Error::new(
            error.span(),
            "`#[extern_device]` applies to an `extern \"C\" { fn name(..) -> T; }` block",
        )
    })
}

/// The block's functions with their captured declarations. A function whose signature
/// cannot cross the C ABI, and any item that is not a function, is reported and left out.
pub(crate) fn declarations<'a>(
    block: &'a ItemForeignMod,
    errors: &mut Errors,
) -> Vec<(&'a ForeignItemFn, FunctionSource)> {
    let mut functions = Vec::new();
    for foreign in &block.items {
        match foreign {
            ForeignItem::Fn(function) => {
                if let Some(declared) = declaration(function, errors) {
                    functions.push((function, declared));
                }
            }
            other => errors.at(
                other,
                "`#[extern_device]` blocks declare functions only (`fn name(..) -> T;`)",
            ),
        }
    }
    functions
}

/// The captured declaration of one function, or `None` after reporting why its signature
/// cannot cross the C ABI.
fn declaration(function: &ForeignItemFn, errors: &mut Errors) -> Option<FunctionSource> {
    let before = errors.len();
    let sig = &function.sig;
    if !sig.generics.params.is_empty() {
        // The parameter types would only repeat the error.
        errors.at(&sig.generics, "external device functions cannot be generic");
        return None;
    }
    if let Some(variadic) = &sig.variadic {
        errors.at(variadic, "external device functions cannot be variadic");
    }
    let mut params = Vec::new();
    for input in &sig.inputs {
        let syn::FnArg::Typed(typed) = input else {
            errors.at(input, "external device functions take no `self`");
            continue;
        };
        let name = match &*typed.pat {
            syn::Pat::Ident(ident) => ident.ident.to_string(),
            syn::Pat::Wild(_) => format!("arg{}", params.len()),
            other => {
                errors.at(other, "parameters are named (`name: T`)");
                continue;
            }
        };
        if let Some(ty) = abi_param(&typed.ty, errors) {
            params.push(Param {
                name,
                ty,
                mutable: false,
                comptime: false,
                span: span_of(typed.pat.span()),
            });
        }
    }
    let result = match &sig.output {
        syn::ReturnType::Default => None,
        syn::ReturnType::Type(_, ty) => match &**ty {
            syn::Type::Tuple(unit) if unit.elems.is_empty() => None,
            ty => abi_scalar(ty, errors).map(ValueType::Scalar),
        },
    };
    let symbol = link_name(function, errors).unwrap_or_else(|| sig.ident.to_string());
    if errors.len() > before {
        return None;
    }
    Some(FunctionSource {
        name: sig.ident.to_string(),
        generics: Vec::new(),
        params,
        result,
        body: Block {
            stmts: Vec::new(),
            tail: None,
            span: span_of(sig.ident.span()),
        },
        span: span_of(sig.ident.span()),
        external: Some(symbol),
        max_threads: None,
        self_type: None,
        constants: Vec::new(),
        file: String::new(),
    })
}

/// How a parameter crosses the C ABI: a scalar; a `#[derive(DeviceCopy)]` enum (as its
/// integer) or handle struct (one scalar field) by value; `&S`/`&mut S` as `const S*`/`S*`;
/// `&[T; N]`/`&mut [T; N]` as `T*`. Whether a named type is a struct, an enum or a handle
/// is known once its layout is: the lowering checks it.
fn abi_param(ty: &syn::Type, errors: &mut Errors) -> Option<ParamType> {
    let named = |ty: &syn::Type| match ty {
        syn::Type::Path(path) if path.qself.is_none() && scalar_type(ty).is_none() => {
            path.path.get_ident().map(|ident| ident.to_string())
        }
        _ => None,
    };
    match ty {
        syn::Type::Reference(reference) => {
            let mutable = reference.mutability.is_some();
            match &*reference.elem {
                syn::Type::Array(array) => {
                    let elem = abi_scalar(&array.elem, errors)?;
                    let len = match &array.len {
                        syn::Expr::Lit(syn::ExprLit {
                            lit: syn::Lit::Int(n),
                            ..
                        }) => n.base10_parse::<u32>().ok(),
                        _ => None,
                    };
                    let Some(len) = len else {
                        errors.at(&array.len, "write the array length as an integer literal");
                        return None;
                    };
                    Some(ParamType::Reference {
                        target: ValueType::Scalar(elem),
                        len: Some(cudajit_core::ast::ArrayLen::Literal(len)),
                        mutable,
                    })
                }
                elem => match named(elem) {
                    Some(name) => Some(ParamType::Reference {
                        target: ValueType::Struct(name),
                        len: None,
                        mutable,
                    }),
                    None => {
                        errors.at(
                            ty,
                            "references passed to external device functions are `&S`/`&mut S` \
                             (a `#[derive(DeviceCopy)]` struct) or `&[T; N]`/`&mut [T; N]`",
                        );
                        None
                    }
                },
            }
        }
        _ => match named(ty) {
            Some(name) => Some(ParamType::Value(ValueType::Struct(name))),
            None => abi_scalar(ty, errors).map(|s| ParamType::Value(ValueType::Scalar(s))),
        },
    }
}

/// The scalar a parameter or result type passes as, if it has a C ABI equivalent.
fn abi_scalar(ty: &syn::Type, errors: &mut Errors) -> Option<Scalar> {
    match scalar_type(ty) {
        Some(Scalar::F16 | Scalar::BF16) => {
            errors.at(
                ty,
                "`f16`/`bf16` have no C ABI equivalent (`__half` is a struct in CUDA C++); pass \
                 the bits as `u16` or widen to `f32`",
            );
            None
        }
        Some(scalar) => Some(scalar),
        None if matches!(ty, syn::Type::Ptr(_)) => {
            errors.at(
                ty,
                "raw pointers cross the C ABI as `usize` addresses: declare the parameter or \
                 result `usize` (`uintptr_t` in C) and read the memory with \
                 `slice_at::<T>(address, len)`",
            );
            None
        }
        None => {
            errors.at(
                ty,
                "external device functions take scalars (`bool`, integers, `f32`, `f64`), \
                 `#[derive(DeviceCopy)]` enums and one-field handle structs by value, `&S` / \
                 `&mut S` and `&[T; N]` / `&mut [T; N]`, and return scalars: this type has no \
                 C ABI form cudajit can pass",
            );
            None
        }
    }
}

/// `#[link_name = "symbol"]`, the symbol in the device library.
fn link_name(function: &ForeignItemFn, errors: &mut Errors) -> Option<String> {
    let attr = function
        .attrs
        .iter()
        .find(|a| a.path().is_ident("link_name"))?;
    match &attr.meta {
        syn::Meta::NameValue(syn::MetaNameValue {
            value:
                syn::Expr::Lit(syn::ExprLit {
                    lit: syn::Lit::Str(symbol),
                    ..
                }),
            ..
        }) if !symbol.value().is_empty() => Some(symbol.value()),
        _ => {
            errors.at(attr, "write `#[link_name = \"symbol\"]`");
            None
        }
    }
}
