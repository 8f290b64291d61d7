//! Kernel parameters: scalars by value and slices of scalars.

use cudajit_core::ast::{Param, ParamType};
use cudajit_core::Scalar;
use syn::{FnArg, Pat, Signature, Type};

use super::span_of;
use crate::errors::Errors;

const PARAM_HELP: &str = "kernel parameters are scalars (`bool`, `i8`..`i64`, `u8`..`u64`, \
                          `isize`, `usize`, `f32`, `f64`) or slices of them (`&[T]`, `&mut [T]`)";

pub(super) fn params(sig: &Signature, errors: &mut Errors) -> Vec<Param> {
    let mut params = Vec::new();
    for input in &sig.inputs {
        let FnArg::Typed(typed) = input else {
            continue; // `self` is reported by `check::signature`.
        };
        let (name, mutable) = match &*typed.pat {
            Pat::Ident(ident) if ident.by_ref.is_none() && ident.subpat.is_none() => {
                (ident.ident.to_string(), ident.mutability.is_some())
            }
            other => {
                errors.at(
                    other,
                    "kernel parameters must be plain names (`x: T`), not patterns",
                );
                continue;
            }
        };
        let Some(ty) = param_type(&typed.ty, errors) else {
            continue;
        };
        if mutable && matches!(ty, ParamType::Slice { .. }) {
            errors.at(
                &typed.pat,
                "a slice parameter cannot be `mut`: use `&mut [T]` to write through it",
            );
            continue;
        }
        params.push(Param {
            name,
            ty,
            mutable,
            span: span_of(typed.pat_span()),
        });
    }
    params
}

trait PatSpan {
    fn pat_span(&self) -> proc_macro2::Span;
}

impl PatSpan for syn::PatType {
    fn pat_span(&self) -> proc_macro2::Span {
        syn::spanned::Spanned::span(&self.pat)
    }
}

fn param_type(ty: &Type, errors: &mut Errors) -> Option<ParamType> {
    match ty {
        Type::Reference(reference) => {
            let Type::Slice(slice) = &*reference.elem else {
                errors.at(ty, format!("unsupported parameter type: {PARAM_HELP}"));
                return None;
            };
            let elem = scalar_type(&slice.elem).or_else(|| {
                errors.at(
                    &slice.elem,
                    format!("unsupported slice element type: {PARAM_HELP}"),
                );
                None
            })?;
            Some(ParamType::Slice {
                elem,
                mutable: reference.mutability.is_some(),
            })
        }
        _ => match scalar_type(ty) {
            Some(scalar) => Some(ParamType::Scalar(scalar)),
            None => {
                errors.at(ty, format!("unsupported parameter type: {PARAM_HELP}"));
                None
            }
        },
    }
}

/// A primitive scalar type written as a bare name (`f32`).
pub(super) fn scalar_type(ty: &Type) -> Option<Scalar> {
    match ty {
        Type::Path(path) if path.qself.is_none() => {
            let ident = path.path.get_ident()?;
            Scalar::from_rust_name(&ident.to_string())
        }
        Type::Paren(inner) => scalar_type(&inner.elem),
        Type::Group(inner) => scalar_type(&inner.elem),
        _ => None,
    }
}
