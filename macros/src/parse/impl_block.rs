//! `#[device]` on an `impl` block of a `DeviceCopy` struct: each function captured like a
//! `#[device]` function, named for its struct (`Vec3::length`, `<Vec3 as Mul<f32>>::mul`),
//! with `self` a parameter and `Self` the struct.
//!
//! Refused at their spans: generic impls, trait impls other than the operators the device
//! runs (so trait objects and user traits), `Index`/`IndexMut` (they return references),
//! and items other than functions and an operator's `type Output`.

use cudajit_core::methods::{
    method_function_name, operator_function_name, operator_slot, OperatorTrait, Rhs, INHERENT_SLOT,
};
use proc_macro2::{Group, TokenStream, TokenTree};
use quote::ToTokens;
use syn::{ImplItem, ItemImpl, Type};

use super::{function, FnKind, Parsed};
use crate::errors::Errors;

/// A parsed `#[device]` impl block.
pub(crate) struct DeviceImpl {
    /// The struct the block is of.
    pub self_ident: syn::Ident,
    /// The slot constant the block defines (see `cudajit_core::methods`).
    pub slot: String,
    /// Its functions, captured.
    pub functions: Vec<Parsed>,
    /// Their names, in the same order.
    pub function_names: Vec<syn::Ident>,
    /// Whether it is the struct's inherent block (not an operator trait's).
    pub inherent: bool,
}

const OPERATORS: &str = "`Add`, `Sub`, `Mul`, `Div`, `Rem` (with `Self` or a scalar on the right), `Neg`, and `AddAssign`, `SubAssign`, `MulAssign`, `DivAssign`, `RemAssign`";

/// Parses the block; `None` if anything was rejected (recorded in `errors`).
pub(crate) fn impl_block(item: &ItemImpl, errors: &mut Errors) -> Option<DeviceImpl> {
    let before = errors.len();
    if !item.generics.params.is_empty() || item.generics.where_clause.is_some() {
        errors.at(
            &item.generics,
            "generic impl blocks are not supported on the device: write the impl for a concrete `DeviceCopy` struct (`impl Vec3 { .. }`)",
        );
    }
    if let Some(unsafety) = &item.unsafety {
        errors.at(unsafety, "`unsafe impl` blocks are not device code");
    }
    let self_ident = match &*item.self_ty {
        Type::Path(path)
            if path.qself.is_none()
                && path
                    .path
                    .segments
                    .last()
                    .is_some_and(|s| s.arguments.is_none()) =>
        {
            path.path.segments.last().map(|s| s.ident.clone())
        }
        // A generic struct's: reported with the impl's generics above.
        Type::Path(_) if !item.generics.params.is_empty() => None,
        other => {
            errors.at(
                other,
                "`#[device]` impl blocks are of `#[derive(DeviceCopy)]` structs (`impl Vec3 { .. }`); trait objects and references have no device methods",
            );
            None
        }
    };
    let self_ident = self_ident?;
    let operator = match &item.trait_ {
        None => None,
        Some((bang, path, _)) => {
            if bang.is_some() {
                errors.at(path, "negative impls are not device code");
                return None;
            }
            Some(operator_of(path, &self_ident, errors)?)
        }
    };
    let slot = match operator {
        None => INHERENT_SLOT.to_owned(),
        Some((operator, rhs)) => operator_slot(&operator, rhs),
    };
    let mut functions = Vec::new();
    let mut function_names = Vec::new();
    for impl_item in &item.items {
        match impl_item {
            ImplItem::Fn(method) => {
                let name = match operator {
                    None => method_function_name(&self_ident.to_string(), &method.sig.ident.to_string()),
                    Some((operator, rhs)) => {
                        operator_function_name(&self_ident.to_string(), &operator, rhs)
                    }
                };
                if let Some(parsed) = method_function(method, &self_ident, name, errors) {
                    functions.push(parsed);
                    function_names.push(method.sig.ident.clone());
                }
            }
            ImplItem::Type(output) if operator.is_some() && output.ident == "Output" => {}
            other => errors.at(
                other,
                "`#[device]` impl blocks hold functions (and an operator's `type Output`); move constants and other items to another impl block",
            ),
        }
    }
    (errors.len() == before).then_some(DeviceImpl {
        self_ident,
        slot,
        functions,
        function_names,
        inherent: operator.is_none(),
    })
}

/// The operator trait `path` names and its right-hand side.
fn operator_of(
    path: &syn::Path,
    self_ident: &syn::Ident,
    errors: &mut Errors,
) -> Option<(OperatorTrait, Rhs)> {
    let last = path.segments.last()?;
    let name = last.ident.to_string();
    let Some(operator) = OperatorTrait::named(&name) else {
        let message = match name.as_str() {
            "Index" | "IndexMut" => format!("`{name}` is not supported on the device: its method returns a reference, which device functions cannot; write a method that returns the element (`fn get(&self, i: usize) -> f32`) and, for writes, one that takes `&mut self`"),
            _ => format!("`{name}` is not a trait the device runs: `#[device]` impl blocks are inherent (`impl Vec3 {{ .. }}`, for methods and associated functions) or of the operators {OPERATORS}; other traits and trait objects are not supported: write the methods in the struct's inherent impl"),
        };
        errors.at(path, message);
        return None;
    };
    let rhs = match &last.arguments {
        syn::PathArguments::None => Rhs::SelfType,
        syn::PathArguments::AngleBracketed(angle) if angle.args.len() == 1 => {
            match angle.args.first() {
                Some(syn::GenericArgument::Type(ty)) => match super::scalar_type(ty) {
                    Some(scalar) => Rhs::Scalar(scalar),
                    None if is_named(ty, self_ident) => Rhs::SelfType,
                    None => {
                        errors.at(
                            ty,
                            format!("device operators take `Self` or a scalar on the right: `{name}<{self_ident}>` or `{name}<f32>`"),
                        );
                        return None;
                    }
                },
                _ => {
                    errors.at(
                        &last.arguments,
                        "the right-hand side of an operator is a type",
                    );
                    return None;
                }
            }
        }
        other => {
            errors.at(other, "the right-hand side of an operator is one type");
            return None;
        }
    };
    Some((operator, rhs))
}

/// Whether `ty` is `Self` or the struct itself.
fn is_named(ty: &Type, self_ident: &syn::Ident) -> bool {
    matches!(ty, Type::Path(p) if p.qself.is_none() && p.path.get_ident().is_some_and(|i| i == "Self" || i == self_ident))
}

/// One function of the block, captured as a `#[device]` function named `name`: `Self` is
/// the struct, and a `self` receiver is the parameter `self` of the receiver's type
/// (`&self` is a `&Vec3`, read in place; `&mut self` a `&mut Vec3`, written in place;
/// `self` a copy).
fn method_function(
    method: &syn::ImplItemFn,
    self_ident: &syn::Ident,
    name: String,
    errors: &mut Errors,
) -> Option<Parsed> {
    let tokens = replace_self_type(method.to_token_stream(), self_ident);
    let method: syn::ImplItemFn = match syn::parse2(tokens) {
        Ok(method) => method,
        Err(error) => {
            errors.push(error);
            return None;
        }
    };
    let mut sig = method.sig.clone();
    for input in &mut sig.inputs {
        if let syn::FnArg::Receiver(receiver) = input {
            let ident = syn::Ident::new("self", receiver.self_token.span);
            *input = syn::FnArg::Typed(syn::PatType {
                attrs: Vec::new(),
                pat: Box::new(syn::Pat::Ident(syn::PatIdent {
                    attrs: Vec::new(),
                    by_ref: None,
                    mutability: receiver.mutability.filter(|_| receiver.reference.is_none()),
                    ident,
                    subpat: None,
                })),
                colon_token: Default::default(),
                // syn writes `Self` for a receiver without a type: the struct's name too.
                ty: Box::new(
                    syn::parse2(replace_self_type(receiver.ty.to_token_stream(), self_ident))
                        .ok()?,
                ),
            });
        }
    }
    let item = syn::ItemFn {
        attrs: Vec::new(),
        vis: method.vis.clone(),
        sig,
        block: Box::new(method.block.clone()),
    };
    crate::check::signature(&item, FnKind::Device, errors);
    let mut parsed = function(&item, FnKind::Device, errors)?;
    parsed.source.name = name;
    Some(parsed)
}

/// `tokens` with every `Self` the struct's name, so the captured function names the
/// struct as any other function would.
fn replace_self_type(tokens: TokenStream, self_ident: &syn::Ident) -> TokenStream {
    tokens
        .into_iter()
        .map(|token| match token {
            TokenTree::Ident(ident) if ident == "Self" => {
                TokenTree::Ident(syn::Ident::new(&self_ident.to_string(), ident.span()))
            }
            TokenTree::Group(group) => {
                let mut replaced = Group::new(
                    group.delimiter(),
                    replace_self_type(group.stream(), self_ident),
                );
                replaced.set_span(group.span());
                TokenTree::Group(replaced)
            }
            other => other,
        })
        .collect()
}
