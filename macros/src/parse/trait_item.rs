//! `#[device]` on a trait: the trait's default methods captured once, generic over the
//! implementing type, which stands for `Self` (`TRAIT_SELF`), named for the trait
//! (`Shape::describe`). Each `#[device]` impl of the trait lists them, and lowering
//! compiles one for a struct whose impl does not write its own.

use cudajit_core::methods::{trait_default_function_name, TRAIT_SELF};
use syn::{ItemTrait, TraitItem};

use super::impl_block::method_function;
use super::Parsed;
use crate::errors::Errors;

/// A parsed `#[device]` trait.
pub(crate) struct DeviceTrait {
    /// Its default methods, captured.
    pub defaults: Vec<Parsed>,
    /// The names of its methods that take `self`, for the method-check markers.
    pub methods: Vec<syn::Ident>,
}

/// Parses the trait; `None` if anything was rejected (recorded in `errors`).
pub(crate) fn trait_item(item: &ItemTrait, errors: &mut Errors) -> Option<DeviceTrait> {
    let before = errors.len();
    if !item.generics.params.is_empty() || item.generics.where_clause.is_some() {
        errors.at(
            &item.generics,
            "generic traits are not supported on the device: write the trait without parameters (`trait Shape { .. }`)",
        );
    }
    let trait_name = item.ident.to_string();
    let self_ident = syn::Ident::new(TRAIT_SELF, item.ident.span());
    let mut defaults = Vec::new();
    let mut methods = Vec::new();
    for trait_item in &item.items {
        let TraitItem::Fn(function) = trait_item else {
            continue;
        };
        if function.sig.receiver().is_some() {
            methods.push(function.sig.ident.clone());
        }
        let Some(block) = &function.default else {
            continue;
        };
        let mut sig = function.sig.clone();
        let bound = &item.ident;
        sig.generics
            .params
            .insert(0, syn::parse_quote!(#self_ident: #bound));
        let method = syn::ImplItemFn {
            attrs: Vec::new(),
            vis: syn::Visibility::Inherited,
            defaultness: None,
            sig,
            block: block.clone(),
        };
        let name = trait_default_function_name(&trait_name, &function.sig.ident.to_string());
        if let Some(parsed) = method_function(&method, &self_ident, None, name, false, errors) {
            defaults.push(parsed);
        }
    }
    (errors.len() == before).then_some(DeviceTrait { defaults, methods })
}
