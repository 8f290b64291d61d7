//! Checks of the kernel function as a whole: what its signature may be.

use syn::{FnArg, ItemFn, ReturnType};

use crate::errors::Errors;

/// Rejects signatures a kernel cannot have. Parameter types are checked while parsing.
pub(crate) fn signature(item: &ItemFn, errors: &mut Errors) {
    let sig = &item.sig;
    if let Some(token) = &sig.constness {
        errors.at(token, "a kernel cannot be `const`");
    }
    if let Some(token) = &sig.asyncness {
        errors.at(token, "a kernel cannot be `async`");
    }
    if let Some(token) = &sig.unsafety {
        errors.at(
            token,
            "a kernel cannot be `unsafe`: launching it is safe, its body is checked",
        );
    }
    if let Some(abi) = &sig.abi {
        errors.at(
            abi,
            "a kernel cannot declare an ABI: cudajit chooses the kernel ABI",
        );
    }
    const GENERICS: &str =
        "generic kernels are not supported yet: give the parameters concrete types";
    if !sig.generics.params.is_empty() {
        errors.at(&sig.generics, GENERICS);
    } else if let Some(where_clause) = &sig.generics.where_clause {
        errors.at(where_clause, GENERICS);
    }
    if let Some(variadic) = &sig.variadic {
        errors.at(variadic, "a kernel cannot be variadic");
    }
    match &sig.output {
        // `-> ()` says the same as no return type.
        ReturnType::Type(_, ty) if !matches!(&**ty, syn::Type::Tuple(t) if t.elems.is_empty()) => {
            errors.at(
                ty,
                "a kernel returns nothing: write results into a `&mut [T]` parameter",
            )
        }
        _ => {}
    }
    for input in &sig.inputs {
        if let FnArg::Receiver(receiver) = input {
            errors.at(
                receiver,
                "a kernel cannot take `self`: kernels are free functions",
            );
        }
    }
}

/// `#[kernel]` takes no arguments yet.
pub(crate) fn attribute_args(attr: &proc_macro2::TokenStream, errors: &mut Errors) {
    if !attr.is_empty() {
        errors.at(attr, "`#[kernel]` takes no arguments");
    }
}
