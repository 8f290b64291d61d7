//! Signatures: generic parameters, parameters (scalars by value and slices of scalars,
//! concrete or generic), and the return type of device functions.

use cudajit_core::ast::{GenericKind, GenericParam, Param, ParamType, ValueType};
use cudajit_core::Scalar;
use syn::{FnArg, GenericParam as SynGeneric, Pat, ReturnType, Signature, Type, TypeParamBound};

use super::span_of;
use super::trait_object;
use crate::errors::Errors;

const PARAM_HELP: &str = "parameters are scalars (`bool`, `i8`..`i64`, `u8`..`u64`, \
                          `isize`, `usize`, `f32`, `f64`, or a generic type parameter) or \
                          slices of them (`&[T]`, `&mut [T]`)";

/// Whether the function is a kernel (launched from the host) or a device function.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum FnKind {
    Kernel,
    Device,
}

impl FnKind {
    /// The attribute that marks the function, as users write it.
    pub(crate) fn attribute(self) -> &'static str {
        match self {
            FnKind::Kernel => "#[kernel]",
            FnKind::Device => "#[device]",
        }
    }
}

/// The names that types in the signature may refer to.
#[derive(Default)]
pub(crate) struct GenericNames {
    pub types: Vec<String>,
    pub consts: Vec<String>,
    /// Type parameters bounded by `Fn(..) -> ..`, with their closures' arities: not
    /// parameters of the specialisation, since each call's closure makes its own instance.
    pub closures: Vec<(String, usize)>,
    /// Type parameters bounded by a trait of the user's (`S: Shape`), which a call binds
    /// to a struct: `S::SIDES` names the struct's associated constant.
    pub user_bounded: Vec<String>,
    /// The function's closure parameters (`f: F`, `f: &impl Fn(..)`) with their arities,
    /// for passing one on (`inner(f, x)`).
    pub closure_params: Vec<(String, usize)>,
}

/// The bounds of a type parameter that a scalar type parameter may have.
const SCALAR_BOUNDS: &[&str] = &[
    "DeviceScalar",
    "Float",
    "Real",
    "Int",
    "Scalar",
    "Copy",
    "Clone",
    "Sized",
    "Send",
    "Sync",
    "Debug",
    "Default",
    "PartialEq",
    "PartialOrd",
];

pub(super) fn generics(sig: &Signature, errors: &mut Errors) -> (Vec<GenericParam>, GenericNames) {
    let mut params = Vec::new();
    let mut names = GenericNames::default();
    if let Some(where_clause) = &sig.generics.where_clause {
        errors.at(
            where_clause,
            "`where` clauses are not supported on kernels and device functions: put the bounds on the parameter (`T: Float`)",
        );
    }
    for param in &sig.generics.params {
        match param {
            SynGeneric::Type(ty) if ty.bounds.iter().any(|b| closure_bound(b).is_some()) => {
                if let Some(arity) = closure_generic(ty, errors) {
                    names.closures.push((ty.ident.to_string(), arity));
                }
            }
            SynGeneric::Type(ty) => {
                let mut bounds = Vec::new();
                for bound in &ty.bounds {
                    match bound {
                        TypeParamBound::Trait(t) if t.path.segments.last().is_some() => {
                            if let Some(last) = t.path.segments.last() {
                                bounds.push(last.ident.to_string());
                            }
                        }
                        other => errors.at(other, "only trait bounds such as `Float`, `Int` or `Scalar` are supported here"),
                    }
                }
                if let Some(default) = &ty.default {
                    errors.at(
                        default,
                        "default types of generic parameters are not supported",
                    );
                }
                // `T: DeviceScalar + Add<Output = T>` is a scalar type whatever else bounds it.
                let scalar = bounds.iter().any(|b| {
                    matches!(
                        b.as_str(),
                        "Float" | "Real" | "Int" | "Scalar" | "DeviceScalar"
                    )
                });
                if !scalar && bounds.iter().any(|b| !SCALAR_BOUNDS.contains(&b.as_str())) {
                    names.user_bounded.push(ty.ident.to_string());
                }
                names.types.push(ty.ident.to_string());
                params.push(GenericParam {
                    name: ty.ident.to_string(),
                    kind: GenericKind::Type { bounds },
                    span: span_of(ty.ident.span()),
                });
            }
            SynGeneric::Const(c) => match scalar_type(&c.ty) {
                Some(scalar) if scalar.is_integer() || scalar == Scalar::Bool => {
                    names.consts.push(c.ident.to_string());
                    params.push(GenericParam {
                        name: c.ident.to_string(),
                        kind: GenericKind::Const(scalar),
                        span: span_of(c.ident.span()),
                    });
                }
                _ => errors.at(&c.ty, "const generic parameters must be integers or `bool`"),
            },
            SynGeneric::Lifetime(l) => errors.at(
                l,
                "lifetime parameters are not needed on kernels and device functions: remove it",
            ),
        }
    }
    // `s: &dyn Shape`: a hidden type parameter bound by `Shape`, which each call binds
    // to its struct (`trait_object.rs`).
    for input in &sig.inputs {
        let FnArg::Typed(typed) = input else {
            continue;
        };
        let (Some(parameter), Pat::Ident(ident)) =
            (trait_object::trait_parameter(&typed.ty), &*typed.pat)
        else {
            continue;
        };
        let trait_name = trait_object::trait_name(parameter.path);
        let name = trait_object::hidden_parameter(&parameter, &ident.ident.to_string());
        names.types.push(name.clone());
        // `impl Float` is a scalar type parameter, as `T: Float` is.
        if !SCALAR_BOUNDS.contains(&trait_name.as_str()) {
            names.user_bounded.push(name.clone());
        }
        params.push(GenericParam {
            name,
            kind: GenericKind::Type {
                bounds: vec![trait_name],
            },
            span: span_of(ident.ident.span()),
        });
    }
    (params, names)
}

/// The `Fn`, `FnMut` or `FnOnce` trait of a bound, with its arguments and result.
fn closure_bound(
    bound: &TypeParamBound,
) -> Option<(&syn::Ident, &syn::ParenthesizedGenericArguments)> {
    let TypeParamBound::Trait(t) = bound else {
        return None;
    };
    let last = t.path.segments.last()?;
    match &last.arguments {
        syn::PathArguments::Parenthesized(args)
            if matches!(last.ident.to_string().as_str(), "Fn" | "FnMut" | "FnOnce") =>
        {
            Some((&last.ident, args))
        }
        _ => None,
    }
}

/// The arity of a closure type parameter `F: Fn(A, B) -> R`; the refused forms reported.
fn closure_generic(ty: &syn::TypeParam, errors: &mut Errors) -> Option<usize> {
    if ty.bounds.len() != 1 {
        errors.at(
            &ty.bounds,
            "a closure parameter has one bound, `F: Fn(A, B) -> R`",
        );
        return None;
    }
    closure_arity(ty.bounds.first()?, errors)
}

/// The arity of the closure an `Fn(..) -> R` bound describes.
fn closure_arity(bound: &TypeParamBound, errors: &mut Errors) -> Option<usize> {
    let (trait_name, args) = closure_bound(bound)?;
    if trait_name != "Fn" {
        errors.at(
            trait_name,
            format!("`{trait_name}` closures are not supported in device functions: take `F: Fn(..) -> R`, a closure that reads what it captures (it crosses by value into the function's instance); return what would be mutated"),
        );
        return None;
    }
    if matches!(args.output, ReturnType::Default) {
        errors.at(
            args,
            "a closure passed to a device function returns a value: `F: Fn(A) -> R`",
        );
        return None;
    }
    Some(args.inputs.len())
}

pub(super) fn params(
    sig: &Signature,
    kind: FnKind,
    generics: &GenericNames,
    errors: &mut Errors,
) -> Vec<Param> {
    let mut params = Vec::new();
    for input in &sig.inputs {
        let FnArg::Typed(typed) = input else {
            continue; // `self` is reported by `check::signature`.
        };
        let comptime = typed.attrs.iter().any(|a| a.path().is_ident("comptime"));
        for attr in typed
            .attrs
            .iter()
            .filter(|a| !a.path().is_ident("comptime"))
        {
            errors.at(attr, "only `#[comptime]` is supported on parameters");
        }
        let (name, mutable) = match &*typed.pat {
            Pat::Ident(ident) if ident.by_ref.is_none() && ident.subpat.is_none() => {
                (ident.ident.to_string(), ident.mutability.is_some())
            }
            other => {
                errors.at(
                    other,
                    "parameters must be plain names (`x: T`), not patterns",
                );
                continue;
            }
        };
        // A tuple parameter of a device function is its elements, `name.0`, `name.1`, ..
        // (the body sees a tuple local; callers pass a tuple's elements); an `Option<T>`
        // is the tuple `(bool, T)`.
        let option = super::option_value::option_inner(&typed.ty).is_some();
        if matches!(&*typed.ty, Type::Tuple(_)) || option {
            if kind == FnKind::Kernel || comptime {
                let message = if option {
                    "kernels cannot take an `Option`: pass whether it is present (`bool`) and the value as two parameters"
                } else {
                    "kernels take the elements of a tuple as separate parameters"
                };
                errors.at(&typed.ty, message);
                continue;
            }
            let elements = match &*typed.ty {
                Type::Tuple(tuple) => tuple_elements(tuple, generics, errors),
                ty => match option_halves(ty, generics, errors) {
                    Some(ValueType::Tuple(halves)) => Some(halves),
                    _ => None,
                },
            };
            let Some(elements) = elements else {
                continue;
            };
            for (index, ty) in elements.into_iter().enumerate() {
                params.push(Param {
                    name: format!("{name}.{index}"),
                    ty: ParamType::Value(ty),
                    mutable,
                    comptime: false,
                    span: span_of(syn::spanned::Spanned::span(&typed.pat)),
                });
            }
            continue;
        }
        if let Some(parameter) = trait_object::trait_parameter(&typed.ty) {
            if kind == FnKind::Kernel {
                errors.at(&typed.ty, trait_object::kernel_parameter(&parameter));
                continue;
            }
            let hidden = ValueType::Generic(trait_object::hidden_parameter(&parameter, &name));
            params.push(Param {
                ty: match parameter.reference {
                    Some(mutable_target) => ParamType::Reference {
                        target: hidden,
                        len: None,
                        mutable: mutable_target,
                    },
                    None => ParamType::Value(hidden),
                },
                name,
                mutable,
                comptime,
                span: span_of(syn::spanned::Spanned::span(&typed.pat)),
            });
            continue;
        }
        let Some(ty) = param_type(&typed.ty, kind, generics, errors) else {
            continue;
        };
        if mutable && ty == ParamType::TensorMap {
            errors.at(
                &typed.pat,
                "a tensor map parameter cannot be `mut`: it is grid-constant, read where the launch put it",
            );
            continue;
        }
        if mutable && matches!(ty, ParamType::Slice { .. }) {
            errors.at(
                &typed.pat,
                "a slice parameter cannot be `mut`: use `&mut [T]` to write through it",
            );
            continue;
        }
        if comptime {
            if kind == FnKind::Device {
                errors.at(&typed.pat, "`#[comptime]` applies to kernel parameters; device functions take const generics instead");
                continue;
            }
            if !matches!(ty, ParamType::Value(ValueType::Scalar(s)) if s.is_integer() || s == Scalar::Bool)
            {
                errors.at(
                    &typed.ty,
                    "a `#[comptime]` parameter must be an integer or `bool`",
                );
                continue;
            }
        }
        params.push(Param {
            name,
            ty,
            mutable,
            comptime,
            span: span_of(syn::spanned::Spanned::span(&typed.pat)),
        });
    }
    params
}

/// The return type of a device function (`None` for `()`).
pub(super) fn result(
    sig: &Signature,
    generics: &GenericNames,
    errors: &mut Errors,
) -> Option<ValueType> {
    match &sig.output {
        ReturnType::Default => None,
        ReturnType::Type(_, ty) if matches!(&**ty, Type::Tuple(t) if t.elems.is_empty()) => None,
        ReturnType::Type(_, ty) if trait_object::mentions_trait_object(ty) => {
            errors.at(ty, trait_object::refused_message(ty));
            None
        }
        ReturnType::Type(_, ty) => match &**ty {
            Type::Tuple(tuple) => tuple_elements(tuple, generics, errors).map(ValueType::Tuple),
            // `Option<T>`: the tuple `(bool, T)` (`option_value.rs`).
            ty if super::option_value::option_inner(ty).is_some() => {
                option_halves(ty, generics, errors)
            }
            ty => {
                let value = value_type(ty, generics);
                if value.is_none() {
                    errors.at(
                        ty,
                        "device functions return a scalar (or a generic scalar type), a `DeviceCopy` struct, a tuple of scalars, an array (`[f32; 4]`, `[T; N]`), or nothing",
                    );
                }
                value
            }
        },
    }
}

/// `Option<T>` in a signature as the types of its halves, `(bool, T)`: `T` is a scalar, a
/// generic scalar type, a `DeviceCopy` struct or an array.
fn option_halves(ty: &Type, generics: &GenericNames, errors: &mut Errors) -> Option<ValueType> {
    let inner = super::option_value::option_inner(ty)?;
    match value_type(inner, generics) {
        Some(
            value @ (ValueType::Scalar(_)
            | ValueType::Generic(_)
            | ValueType::Struct(_)
            | ValueType::Array { .. }),
        ) => Some(ValueType::Tuple(vec![
            ValueType::Scalar(Scalar::Bool),
            value,
        ])),
        _ => {
            errors.at(
                inner,
                "an `Option` in a device-function signature holds a scalar, a generic scalar type, a `DeviceCopy` struct or an array",
            );
            None
        }
    }
}

/// The element types of a tuple in a device function's signature: scalars or generic
/// scalar types, at most `MAX_TUPLE_ELEMENTS`.
fn tuple_elements(
    tuple: &syn::TypeTuple,
    generics: &GenericNames,
    errors: &mut Errors,
) -> Option<Vec<ValueType>> {
    let max = cudajit_core::layout::MAX_TUPLE_ELEMENTS;
    if tuple.elems.len() > max {
        errors.at(
            tuple,
            format!("tuples in device-function signatures have at most {max} elements"),
        );
        return None;
    }
    let mut elements = Vec::new();
    for element in &tuple.elems {
        match value_type(element, generics) {
            Some(ty @ (ValueType::Scalar(_) | ValueType::Generic(_))) => elements.push(ty),
            _ => {
                errors.at(
                    element,
                    "tuples in device-function signatures hold scalars (or generic scalar types); structs and nested tuples are not supported",
                );
                return None;
            }
        }
    }
    Some(elements)
}

fn param_type(
    ty: &Type,
    kind: FnKind,
    generics: &GenericNames,
    errors: &mut Errors,
) -> Option<ParamType> {
    // `f: F`, `f: impl Fn(..) -> R`, and the same by shared reference (`&F`, `&impl Fn`):
    // a closure that reads what it captures is passed alike either way.
    let closure_ty = match ty {
        Type::Reference(reference) if reference.mutability.is_none() => &*reference.elem,
        other => other,
    };
    let closure = match closure_ty {
        Type::Path(path) if path.qself.is_none() => path.path.get_ident().and_then(|ident| {
            generics
                .closures
                .iter()
                .find(|(name, _)| ident == name)
                .map(|(_, arity)| Some(*arity))
        }),
        Type::ImplTrait(bounds) if bounds.bounds.iter().any(|b| closure_bound(b).is_some()) => {
            Some(bounds.bounds.first().and_then(|b| closure_arity(b, errors)))
        }
        _ => None,
    };
    let dyn_closure = |ty: &Type| match ty {
        Type::TraitObject(object) => object.bounds.iter().any(|b| closure_bound(b).is_some()),
        _ => false,
    };
    let boxed = match ty {
        Type::Reference(reference) => dyn_closure(&reference.elem),
        other => dyn_closure(other),
    };
    if boxed {
        errors.at(ty, super::closure::DYN_CLOSURE);
        return None;
    }
    if trait_object::mentions_trait_object(ty) {
        errors.at(ty, trait_object::refused_message(ty));
        return None;
    }
    if let Some(arity) = closure {
        if kind == FnKind::Kernel {
            errors.at(
                ty,
                "kernels cannot take closures (the host cannot pass code): take the closure in a `#[device]` function the kernel calls",
            );
            return None;
        }
        return arity.map(|arity| ParamType::Closure { arity });
    }
    if is_tensor_map(ty) {
        if kind == FnKind::Kernel {
            return Some(ParamType::TensorMap);
        }
        errors.at(
            ty,
            "only kernels take tensor maps (a grid-constant parameter): pass `tensor_map_address(&map)`, a `u64`, to device functions",
        );
        return None;
    }
    match ty {
        Type::Reference(reference) if is_tensor_map(&reference.elem) => {
            errors.at(
                ty,
                match kind {
                    FnKind::Kernel => "kernels take a tensor map by value, `map: TensorMap`: it crosses as a grid-constant parameter, and `tensor_map_address(&map)` gives its address",
                    FnKind::Device => "only kernels take tensor maps (a grid-constant parameter): pass `tensor_map_address(&map)`, a `u64`, to device functions",
                },
            );
            None
        }
        Type::Reference(reference) => {
            // `&S`: a device function reads a `DeviceCopy` struct in place (`comm: &DevComm`).
            let by_reference = match &*reference.elem {
                Type::Slice(_) => None,
                elem => value_type(elem, generics),
            };
            // `&[f32; 4]` / `&mut [f32; 4]`: a device function reads (writes) the
            // caller's array in place.
            if let Some(ValueType::Array { elem, len }) = &by_reference {
                if kind == FnKind::Device {
                    return Some(ParamType::Reference {
                        target: (**elem).clone(),
                        len: Some(len.clone()),
                        mutable: reference.mutability.is_some(),
                    });
                }
            }
            if let Some(ValueType::Array { .. }) = &by_reference {
                // Device functions took the array above.
                errors.at(ty, "kernels take arrays as slices (`&[f32]`, `&mut [f32]`)");
                return None;
            }
            // `s: &S` with `S: Shape`: a struct the instance names (the type parameter is
            // bound to a struct by the call, `lower/generic_structs.rs`).
            if let (Some(ValueType::Generic(name)), FnKind::Device) = (&by_reference, kind) {
                return Some(ParamType::Reference {
                    target: ValueType::Generic(name.clone()),
                    len: None,
                    mutable: reference.mutability.is_some(),
                });
            }
            // `acc: &mut f32`: a device function reads (writes) the caller's scalar in place.
            if let (Some(ValueType::Scalar(scalar)), FnKind::Device) = (&by_reference, kind) {
                if *scalar == Scalar::Bool {
                    // A `bool` is a 1-bit register but a byte in memory: no one pointer
                    // type reaches both.
                    errors.at(
                        ty,
                        "`&bool`/`&mut bool` parameters are not supported in kernels: write instead a `bool` parameter and return the new value",
                    );
                    return None;
                }
                return Some(ParamType::Reference {
                    target: ValueType::Scalar(*scalar),
                    len: None,
                    mutable: reference.mutability.is_some(),
                });
            }
            if let Some(ValueType::Struct(name)) = &by_reference {
                if kind == FnKind::Device {
                    return Some(ParamType::Reference {
                        target: ValueType::Struct(name.clone()),
                        len: None,
                        mutable: reference.mutability.is_some(),
                    });
                }
                errors.at(
                    ty,
                    match kind {
                        FnKind::Kernel => {
                            "kernels take structs by value (`s: S`), not by reference"
                        }
                        FnKind::Device => {
                            "device functions take structs by value, as `&S` or as `&mut S`"
                        }
                    },
                );
                return None;
            }
            let Type::Slice(slice) = &*reference.elem else {
                let message = match by_reference {
                    // `acc: &mut f32`: what a Rust programmer writes for an out-parameter.
                    Some(ValueType::Scalar(scalar)) => {
                        let name = scalar.rust_name();
                        let mutable = if reference.mutability.is_some() {
                            "mut "
                        } else {
                            ""
                        };
                        format!("kernels cannot take `&{mutable}{name}` (the host passes buffers): write instead a slice, `&{mutable}[{name}]`, and index it (a `#[device]` function can take `&{mutable}{name}`)")
                    }
                    _ => format!("unsupported parameter type: {PARAM_HELP}"),
                };
                errors.at(ty, message);
                return None;
            };
            let elem = value_type(&slice.elem, generics).or_else(|| {
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
        _ => match value_type(ty, generics) {
            Some(ValueType::Array { .. }) if kind == FnKind::Kernel => {
                errors.at(
                    ty,
                    "kernels take arrays as slices (`&[f32]`, filled by the host); device functions take them by value (`[f32; 4]`) or reference (`&mut [f32; 4]`)",
                );
                None
            }
            Some(value) => Some(ParamType::Value(value)),
            None if matches!(ty, Type::Array(array) if matches!(&*array.elem, Type::Array(_))) => {
                errors.at(
                    ty,
                    "arrays of arrays as parameters hold scalars, two levels (`m: [[f32; 4]; 4]`): for structs or three levels pass one array of `N * M` elements (`[f32; 16]`, indexed `a[r * M + c]`)",
                );
                None
            }
            None => {
                errors.at(ty, format!("unsupported parameter type: {PARAM_HELP}"));
                None
            }
        },
    }
}

/// `TensorMap`, `cudajit::TensorMap` or `TensorMap<'a>`: the name is reserved for
/// `cudajit::TensorMap` in signatures (the launcher takes that type, so another type of the
/// name is a rustc error at the launch).
fn is_tensor_map(ty: &Type) -> bool {
    match ty {
        Type::Path(path) if path.qself.is_none() => path.path.segments.last().is_some_and(|last| {
            last.ident == "TensorMap"
                && match &last.arguments {
                    syn::PathArguments::None => true,
                    syn::PathArguments::AngleBracketed(angle) => angle
                        .args
                        .iter()
                        .all(|arg| matches!(arg, syn::GenericArgument::Lifetime(_))),
                    syn::PathArguments::Parenthesized(_) => false,
                }
        }),
        Type::Paren(inner) => is_tensor_map(&inner.elem),
        Type::Group(inner) => is_tensor_map(&inner.elem),
        _ => false,
    }
}

/// A scalar type or a generic type parameter, written as a bare name.
pub(super) fn value_type(ty: &Type, generics: &GenericNames) -> Option<ValueType> {
    if let Some(scalar) = scalar_type(ty) {
        return Some(ValueType::Scalar(scalar));
    }
    // `Ordering`: its `i8` (`ordering.rs`).
    if super::ordering::is_ordering_type(ty) {
        return Some(ValueType::Scalar(Scalar::I8));
    }
    match ty {
        // `S::Out`, `<S as Shape>::Out`: the associated type of `S`'s struct.
        Type::Path(path) if super::associated_type::projection(path, generics).is_some() => {
            super::associated_type::projection(path, generics).map(ValueType::Generic)
        }
        Type::Path(path) if path.qself.is_none() => {
            if let Some(ident) = path.path.get_ident() {
                let name = ident.to_string();
                return Some(match generics.types.contains(&name) {
                    true => ValueType::Generic(name),
                    // Any other named type is a `#[derive(DeviceCopy)]` struct; rustc checks
                    // it implements `DeviceStruct` where the layout is taken.
                    false => ValueType::Struct(name),
                });
            }
            // `nccl::Team`: a struct by path, named by its last segment (the layout's name);
            // `Pair<f32>`, `Pair<T>`, `Row<4>`: a generic struct's instance, by its full name.
            struct_name(&path.path, generics).map(ValueType::Struct)
        }
        Type::Paren(inner) => value_type(&inner.elem, generics),
        Type::Group(inner) => value_type(&inner.elem, generics),
        // `[f32; 4]`, `[T; N]` (an array of scalars or structs, of a literal or const
        // generic length).
        Type::Array(array) => {
            let elem = value_type(&array.elem, generics)?;
            match &elem {
                ValueType::Tuple(_) => return None,
                // `[[f32; M]; N]`: rows of scalars (two levels, as local arrays of arrays).
                ValueType::Array { elem: inner, .. }
                    if !matches!(**inner, ValueType::Scalar(_) | ValueType::Generic(_)) =>
                {
                    return None
                }
                _ => {}
            }
            let len = match &array.len {
                syn::Expr::Lit(syn::ExprLit {
                    lit: syn::Lit::Int(int),
                    ..
                }) => cudajit_core::ast::ArrayLen::Literal(int.base10_parse().ok()?),
                syn::Expr::Path(path) => {
                    let name = path.path.get_ident()?.to_string();
                    if !generics.consts.contains(&name) {
                        return None;
                    }
                    cudajit_core::ast::ArrayLen::Generic(name)
                }
                _ => return None,
            };
            Some(ValueType::Array {
                elem: Box::new(elem),
                len,
            })
        }
        _ => None,
    }
}

/// The name lowering keys a struct type by: its last segment (`nccl::Team` is `Team`),
/// with a generic struct's arguments (`Pair<f32>`, `Pair<T>` in a generic function, `Row<4>`,
/// `KV<u32, f32>`; `Pair::<f32>` alike). `None` for arguments that are not scalar types,
/// the function's generic parameters or integer literals, or for arguments on another
/// segment than the last.
pub(crate) fn struct_name(path: &syn::Path, generics: &GenericNames) -> Option<String> {
    let (last, init) = path
        .segments
        .iter()
        .collect::<Vec<_>>()
        .split_last()
        .map(|(l, i)| (*l, i.to_vec()))?;
    if init.iter().any(|segment| !segment.arguments.is_none()) {
        return None;
    }
    // The standard library's generic types are no `DeviceCopy` structs (refused where
    // they are written, with what to write instead).
    const STANDARD: [&str; 14] = [
        "Vec",
        "VecDeque",
        "Box",
        "Rc",
        "Arc",
        "Cell",
        "RefCell",
        "HashMap",
        "BTreeMap",
        "HashSet",
        "BTreeSet",
        "Result",
        "Option",
        "PhantomData",
    ];
    let angle = match &last.arguments {
        syn::PathArguments::None => return Some(last.ident.to_string()),
        _ if STANDARD.iter().any(|s| last.ident == s) => return None,
        syn::PathArguments::AngleBracketed(angle) => angle,
        syn::PathArguments::Parenthesized(_) => return None,
    };
    let mut args = Vec::new();
    for arg in &angle.args {
        let text = match arg {
            syn::GenericArgument::Type(ty) => match scalar_type(ty) {
                Some(scalar) => scalar.rust_name().to_owned(),
                None => match ty {
                    Type::Path(p) if p.qself.is_none() => {
                        let ident = p.path.get_ident()?.to_string();
                        let known = generics.types.contains(&ident)
                            && !generics.user_bounded.contains(&ident);
                        (known || generics.consts.contains(&ident)).then_some(ident)?
                    }
                    _ => return None,
                },
            },
            syn::GenericArgument::Const(syn::Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Int(int),
                ..
            })) => int.base10_parse::<i128>().ok()?.to_string(),
            syn::GenericArgument::Const(syn::Expr::Block(block))
                if block.block.stmts.len() == 1 =>
            {
                match &block.block.stmts[0] {
                    syn::Stmt::Expr(syn::Expr::Path(p), None) => {
                        let ident = p.path.get_ident()?.to_string();
                        generics.consts.contains(&ident).then_some(ident)?
                    }
                    _ => return None,
                }
            }
            _ => return None,
        };
        args.push(text);
    }
    Some(cudajit_core::layout::instance_name(
        &last.ident.to_string(),
        &args,
    ))
}

/// Whether a type path's arguments name one of the function's generic parameters
/// (`Pair<T>`): a layout only an instance of the function knows.
pub(crate) fn mentions_generics(path: &syn::Path, generics: &GenericNames) -> bool {
    fn walk(tokens: proc_macro2::TokenStream, names: &[&String]) -> bool {
        tokens.into_iter().any(|token| match token {
            proc_macro2::TokenTree::Ident(ident) => names.iter().any(|n| ident == n.as_str()),
            proc_macro2::TokenTree::Group(group) => walk(group.stream(), names),
            _ => false,
        })
    }
    let names: Vec<&String> = generics.types.iter().chain(&generics.consts).collect();
    path.segments.iter().any(|segment| {
        !segment.arguments.is_none()
            && walk(quote::ToTokens::to_token_stream(&segment.arguments), &names)
    })
}

/// A primitive scalar type written as a bare name (`f32`).
pub(crate) fn scalar_type(ty: &Type) -> Option<Scalar> {
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
