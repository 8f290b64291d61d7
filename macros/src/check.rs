//! Checks of the kernel function as a whole: what its signature may be.

use syn::{FnArg, ItemFn, ReturnType};

use crate::errors::Errors;
use crate::parse::FnKind;

/// Rejects signatures a kernel or device function cannot have. Generics and parameter
/// types are checked while parsing.
pub(crate) fn signature(item: &ItemFn, kind: FnKind, errors: &mut Errors) {
    let noun = match kind {
        FnKind::Kernel => "a kernel",
        FnKind::Device => "a device function",
    };
    let sig = &item.sig;
    if let Some(token) = &sig.constness {
        errors.at(token, format!("{noun} cannot be `const`"));
    }
    if let Some(token) = &sig.asyncness {
        errors.at(token, format!("{noun} cannot be `async`"));
    }
    if let Some(token) = &sig.unsafety {
        errors.at(
            token,
            format!("{noun} cannot be `unsafe`: launching it is safe, its body is checked"),
        );
    }
    if let Some(abi) = &sig.abi {
        errors.at(
            abi,
            format!("{noun} cannot declare an ABI: cudajit chooses the kernel ABI"),
        );
    }
    if let Some(variadic) = &sig.variadic {
        errors.at(variadic, format!("{noun} cannot be variadic"));
    }
    match &sig.output {
        _ if kind == FnKind::Device => {}
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
                format!(
                    "{noun} cannot take `self`: kernels and device functions are free functions"
                ),
            );
        }
    }
}

/// `#[kernel]` and `#[device]` take no arguments yet.
pub(crate) fn attribute_args(attr: &proc_macro2::TokenStream, what: &str, errors: &mut Errors) {
    if !attr.is_empty() {
        errors.at(attr, format!("`{what}` takes no arguments"));
    }
}
