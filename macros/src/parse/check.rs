//! Checks of an item as a whole, before its parts are parsed: what a kernel's signature
//! may be, which ABI an `#[extern_device]` block declares, which types may derive
//! `DeviceCopy`.

use syn::{Data, DeriveInput, Fields, FnArg, ItemFn, ItemForeignMod, ReturnType};

use crate::errors::Errors;
use crate::parse::{integer_repr, is_repr_c, FnKind};

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

/// External device functions use the C ABI.
pub(crate) fn extern_c_abi(block: &ItemForeignMod, errors: &mut Errors) {
    match &block.abi.name {
        Some(abi) if abi.value() == "C" => {}
        _ => errors.at(
            &block.abi,
            "external device functions use the C ABI: write `extern \"C\"`",
        ),
    }
}

/// Whether a type may derive `DeviceCopy`: a non-generic `#[repr(C)]` struct (with named
/// fields, a tuple struct, or a unit struct, which needs no `repr`), or a
/// non-generic fieldless enum with an integer `#[repr]` and at least one variant. The
/// fields' types are checked while parsing them.
pub(crate) fn device_copy(input: &DeriveInput, errors: &mut Errors) {
    if let Data::Enum(data) = &input.data {
        if integer_repr(input).is_none() {
            // Its other properties would only add noise to this one.
            errors.at(
                &input.ident,
                "`DeviceCopy` enums need an integer representation, such as `#[repr(u32)]`: kernels see the enum as that integer",
            );
            return;
        }
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
        return;
    }
    // A unit struct has no fields to place: any `repr` gives the device what the host has.
    let unit = matches!(&input.data, Data::Struct(data) if matches!(data.fields, Fields::Unit));
    if !is_repr_c(input) && !unit {
        errors.at(
            &input.ident,
            "`DeviceCopy` needs `#[repr(C)]`: the device must see the fields where the host put them",
        );
    }
    generic_struct(input, errors);
}

/// A generic `DeviceCopy` struct's parameters: scalar type parameters (`Pair<T>`, each a
/// `DeviceScalar` in the derived impls) and integer constants (`Row<const N: usize>`).
fn generic_struct(input: &DeriveInput, errors: &mut Errors) {
    if let Some(where_clause) = &input.generics.where_clause {
        errors.at(
            where_clause,
            "a generic `DeviceCopy` struct puts its bounds on its parameters (`struct Pair<T: Copy>`), not in a `where` clause",
        );
    }
    for param in &input.generics.params {
        match param {
            syn::GenericParam::Lifetime(lifetime) => errors.at(
                lifetime,
                "`DeviceCopy` structs hold values, not references: remove the lifetime parameter",
            ),
            syn::GenericParam::Type(ty) if ty.default.is_some() => errors.at(
                ty,
                "the parameters of a generic `DeviceCopy` struct have no defaults: write the type arguments where the struct is named (`Pair<f32>`)",
            ),
            syn::GenericParam::Const(c)
                if !super::scalar_type(&c.ty).is_some_and(|s| s.is_integer()) =>
            {
                errors.at(
                    &c.ty,
                    "the const parameters of a `DeviceCopy` struct are integers (`const N: usize`)",
                )
            }
            _ => {}
        }
    }
    let generic = !input.generics.params.is_empty();
    if generic && input.attrs.iter().any(|a| a.path().is_ident("device_drop")) {
        errors.at(
            &input.generics,
            "`#[device_drop]` is for structs without generic parameters: write the struct for its one type",
        );
    }
}
