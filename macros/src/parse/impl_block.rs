//! `#[device]` on an `impl` block of a `DeviceCopy` struct: each function captured like a
//! `#[device]` function, named for its struct (`Vec3::length`, `<Vec3 as Mul<f32>>::mul`),
//! with `self` a parameter and `Self` the struct.
//!
//! A scalar's impl with the struct on the right (`impl Mul<Vec3> for f32`, for `2.0 * v`)
//! is captured the same way, its slot a constant of the struct (`f32` cannot have one).
//! `Index`/`IndexMut` return references, which device functions cannot: their one method
//! is captured without its result type, for lowering to inline as the place it returns.
//!
//! An impl of a user trait (`impl Shape for Circle`, the trait marked `#[device]`) is
//! captured the same way, each function named `<Circle as Shape>::area`, its constants
//! kept for rustc to evaluate; like the struct's inherent blocks (it may have several) it
//! has no fixed slot but is a row of `DEVICE_IMPL_BLOCKS` (see `cudajit_core::methods`).
//!
//! Refused at their spans: generic impls, impls of generic traits other than the
//! operators, `dyn` and reference self types, and items other than functions, constants,
//! an operator's `type Output` and a user trait's associated types.

use cudajit_core::methods::{
    method_function_name, operator_function_name, operator_slot, scalar_left_function_name,
    scalar_left_slot, trait_method_function_name, user_trait_function_name, OperatorKind,
    OperatorTrait, Rhs,
};
use cudajit_core::Scalar;
use proc_macro2::{Group, TokenStream, TokenTree};
use quote::ToTokens;
use syn::{ImplItem, ItemImpl, Type};

use super::{function_with_places, FnKind, Parsed};
use crate::errors::Errors;

/// A parsed `#[device]` impl block.
pub(crate) struct DeviceImpl {
    /// The type the block is of: the struct, or the scalar of a scalar-left operator.
    pub self_ident: syn::Ident,
    /// The struct whose slot the block fills (`self_ident`, or the struct on the right of
    /// a scalar-left operator).
    pub owner: syn::Ident,
    /// The slot constant the block defines (see `cudajit_core::methods`); `None` for the
    /// blocks no slot holds (inherent blocks and user traits' impls), which are rows of
    /// `DEVICE_IMPL_BLOCKS` instead.
    pub slot: Option<String>,
    /// The user trait the block implements (`impl Shape for Circle`), as written.
    pub user_trait: Option<syn::Path>,
    /// Its associated constants: the captured name (`<Circle as Shape>::SIDES`) and the
    /// constant's identifier.
    pub constants: Vec<(String, syn::Ident)>,
    /// A user trait impl's associated types (`type Out = f32;`): the name and the type.
    pub types: Vec<(syn::Ident, Type)>,
    /// Its functions, captured.
    pub functions: Vec<Parsed>,
    /// Their names, in the same order.
    pub function_names: Vec<syn::Ident>,
    /// Whether it is the struct's inherent block (not an operator trait's).
    pub inherent: bool,
    /// A generic block's (`impl<T: Add<Output = T>> Pair<T>`) generics and type (`Pair<T>`);
    /// `None` for a block of a struct without parameters.
    pub generic: Option<GenericImpl>,
}

/// The generics of an impl block of a generic struct.
pub(crate) struct GenericImpl {
    /// The block's generics as written.
    pub generics: syn::Generics,
    /// The block's type as written (`Pair<T>`).
    pub self_ty: Type,
    /// The struct's reserved instance (`Pair<GenericArgument>`, see
    /// `cudajit_core::layout::probe`), whose inherent block holds the markers of the
    /// block's associated functions, for paths that name the struct without arguments.
    pub reserved_args: Vec<GenericSlot>,
}

/// What an argument of the reserved instance is.
pub(crate) enum GenericSlot {
    Type,
    Const,
}

const OPERATORS: &str = "`Add`, `Sub`, `Mul`, `Div`, `Rem` (with `Self` or a scalar on the right, or for a scalar with the struct on the right), `Neg`, `AddAssign`, `SubAssign`, `MulAssign`, `DivAssign`, `RemAssign`, `PartialEq`, and `Index`/`IndexMut` (with an integer index)";

/// How the block is attached: to its struct, or (a scalar-left operator) to the struct on
/// the right of the scalar it is of.
enum Attached {
    Inherent,
    /// A trait of the user's (`impl Shape for Circle`): its name and path.
    UserTrait(String, syn::Path),
    Operator(OperatorTrait, Rhs),
    ScalarLeft(OperatorTrait, Scalar, syn::Ident),
}

/// Parses the block; `None` if anything was rejected (recorded in `errors`).
pub(crate) fn impl_block(item: &ItemImpl, errors: &mut Errors) -> Option<DeviceImpl> {
    let before = errors.len();
    let generic = generic_impl(item, errors);
    if let Some(unsafety) = &item.unsafety {
        errors.at(unsafety, "`unsafe impl` blocks are not device code");
    }
    let self_scalar = super::scalar_type(&item.self_ty);
    let self_ident = match &*item.self_ty {
        Type::Path(path)
            if path.qself.is_none() && path.path.segments.iter().all(|s| s.arguments.is_none()) =>
        {
            path.path.segments.last().map(|s| s.ident.clone())
        }
        // A generic struct's (`Pair<T>`): checked by `generic_impl`.
        Type::Path(path) if path.qself.is_none() && generic.is_some() => {
            path.path.segments.last().map(|s| s.ident.clone())
        }
        // Reported by `generic_impl`.
        Type::Path(_) if errors.len() > before => None,
        Type::Path(path) if path.qself.is_none() => {
            let name = path
                .path
                .segments
                .last()
                .map(|s| s.ident.to_string())
                .unwrap_or_default();
            errors.at(
                other_arguments(path),
                format!("a `#[device]` impl block for one instance of a generic struct (`impl {name}<f32>`) is not supported: write instead the block generic over the struct's parameters (`impl<T: DeviceScalar> {name}<T> {{ .. }}`), whose methods every instance has"),
            );
            None
        }
        other => {
            errors.at(
                other,
                "`#[device]` impl blocks are of `#[derive(DeviceCopy)]` structs (`impl Vec3 { .. }`); trait objects and references have no device methods",
            );
            None
        }
    };
    let self_ident = self_ident?;
    let attached = match (&item.trait_, self_scalar) {
        (None, Some(_)) => {
            errors.at(
                &item.self_ty,
                "`#[device]` impl blocks are of `#[derive(DeviceCopy)]` structs: a scalar has device methods of its own; write a `#[device]` function",
            );
            return None;
        }
        (None, None) => Attached::Inherent,
        (Some((Some(_), path, _)), _) => {
            errors.at(path, "negative impls are not device code");
            return None;
        }
        (Some((None, path, _)), None) => match user_trait(path) {
            Some(name) => Attached::UserTrait(name, path.clone()),
            None => {
                let (operator, rhs) = operator_of(path, &self_ident, errors)?;
                Attached::Operator(operator, rhs)
            }
        },
        (Some((None, path, _)), Some(scalar)) => scalar_left_operator(path, scalar, errors)?,
    };
    if generic.is_some() && matches!(attached, Attached::ScalarLeft(..)) {
        errors.at(
            &item.generics,
            "a scalar's operator with a generic struct on the right (`2.0 * p`) is not supported on the device: write instead a method of the struct's generic block (`p.scaled(2.0)`)",
        );
        return None;
    }
    let slot_generic = |slot: Option<String>| slot.filter(|_| generic.is_none());
    let (owner, slot) = match &attached {
        Attached::Inherent | Attached::UserTrait(..) => (self_ident.clone(), None),
        // A generic struct's operators are rows too: a slot is one type's constant.
        Attached::Operator(operator, rhs) => (
            self_ident.clone(),
            slot_generic(Some(operator_slot(operator, *rhs))),
        ),
        Attached::ScalarLeft(operator, scalar, owner) => {
            (owner.clone(), Some(scalar_left_slot(*scalar, operator)))
        }
    };
    let mut functions = Vec::new();
    let mut function_names = Vec::new();
    let mut constants = Vec::new();
    // A user trait's associated types: `Self::Out` in its functions is the type given.
    let types: Vec<(syn::Ident, Type)> = match &attached {
        Attached::UserTrait(..) => item
            .items
            .iter()
            .filter_map(|impl_item| match impl_item {
                ImplItem::Type(ty) => Some((ty.ident.clone(), ty.ty.clone())),
                _ => None,
            })
            .collect(),
        _ => Vec::new(),
    };
    for impl_item in &item.items {
        match impl_item {
            ImplItem::Fn(method) => {
                let ty = self_ident.to_string();
                let method_name = method.sig.ident.to_string();
                let name = match &attached {
                    Attached::Inherent => method_function_name(&ty, &method_name),
                    Attached::UserTrait(trait_name, _) => {
                        user_trait_function_name(&ty, trait_name, &method_name)
                    }
                    Attached::Operator(operator, rhs) if operator.kind == OperatorKind::Eq => {
                        if method_name != "eq" && method_name != "ne" {
                            errors.at(&method.sig.ident, "`PartialEq` has the methods `eq` and `ne`");
                            continue;
                        }
                        trait_method_function_name(&ty, operator, *rhs, &method_name)
                    }
                    Attached::Operator(operator, rhs) => operator_function_name(&ty, operator, *rhs),
                    Attached::ScalarLeft(operator, scalar, owner) => {
                        scalar_left_function_name(*scalar, operator, &owner.to_string())
                    }
                };
                let returns_place = matches!(
                    &attached,
                    Attached::Operator(operator, _)
                        if matches!(operator.kind, OperatorKind::Index | OperatorKind::IndexMut)
                );
                let method = super::associated_type::given_in_impl(method, &types);
                if let Some(parsed) = method_function(
                    &method,
                    &self_ident,
                    generic.as_ref(),
                    name,
                    returns_place,
                    errors,
                ) {
                    functions.push(parsed);
                    function_names.push(method.sig.ident.clone());
                }
            }
            ImplItem::Type(output)
                if !matches!(attached, Attached::Inherent) && output.ident == "Output" => {}
            // A user trait's associated types: kept in the block's row (`types`), for
            // generic functions naming `S::Out`; one row for every instance, so not of
            // the block's parameters.
            ImplItem::Type(ty)
                if generic.is_some()
                    && matches!(attached, Attached::UserTrait(..))
                    && generic.as_ref().is_some_and(|g| mentions_params(&ty.ty, &g.generics)) =>
            {
                errors.at(
                    &ty.ty,
                    "an associated type of a generic impl block that names the block's parameters (`type Out = T;`) is not supported on the device: give a concrete type (`type Out = f32;`), or return `T` from a method",
                )
            }
            ImplItem::Type(_) if matches!(attached, Attached::UserTrait(..)) => {}
            // Scalar constants, which rustc evaluates (`S::SIDES` in a generic function).
            ImplItem::Const(constant) if generic.is_some() => errors.at(
                constant,
                "associated constants of a generic impl block are not supported on the device (their value may depend on the parameters): write instead a method returning it (`fn two(&self) -> u32 { 2 }`), or a module constant",
            ),
            ImplItem::Const(constant)
                if matches!(attached, Attached::Inherent | Attached::UserTrait(..)) =>
            {
                let ty = self_ident.to_string();
                let name = match &attached {
                    Attached::UserTrait(trait_name, _) => {
                        user_trait_function_name(&ty, trait_name, &constant.ident.to_string())
                    }
                    _ => method_function_name(&ty, &constant.ident.to_string()),
                };
                constants.push((name, constant.ident.clone()));
            }
            other => errors.at(
                other,
                "`#[device]` impl blocks hold functions, constants (and an operator's `type Output`, a trait's associated types); move other items to another impl block",
            ),
        }
    }
    let inherent = matches!(attached, Attached::Inherent);
    let user_trait = match attached {
        Attached::UserTrait(_, path) => Some(path),
        _ => None,
    };
    (errors.len() == before).then_some(DeviceImpl {
        self_ident,
        owner,
        slot,
        user_trait,
        constants,
        types,
        functions,
        function_names,
        inherent,
        generic,
    })
}

/// Whether `ty` names one of `generics`' parameters.
fn mentions_params(ty: &Type, generics: &syn::Generics) -> bool {
    fn walk(tokens: TokenStream, names: &[String]) -> bool {
        tokens.into_iter().any(|token| match token {
            TokenTree::Ident(ident) => names.iter().any(|n| ident == n),
            TokenTree::Group(group) => walk(group.stream(), names),
            _ => false,
        })
    }
    let names: Vec<String> = generics
        .type_params()
        .map(|t| t.ident.to_string())
        .chain(generics.const_params().map(|c| c.ident.to_string()))
        .collect();
    walk(ty.to_token_stream(), &names)
}

/// The arguments of a type path (for the message at them).
fn other_arguments(path: &syn::TypePath) -> &dyn quote::ToTokens {
    match path.path.segments.iter().find(|s| !s.arguments.is_none()) {
        Some(segment) => &segment.arguments,
        None => path,
    }
}

/// A generic impl block's generics, checked: the block of a generic `DeviceCopy` struct
/// over all its parameters (`impl<T: Add<Output = T>> Pair<T>`, `impl<const N: usize>
/// Row<N>`), bounds on the parameters. `None` for a block without generics, and after an
/// error.
fn generic_impl(item: &ItemImpl, errors: &mut Errors) -> Option<GenericImpl> {
    if let Some(where_clause) = &item.generics.where_clause {
        errors.at(
            where_clause,
            "`where` clauses are not supported on device impl blocks: put the bounds on the parameters (`impl<T: Add<Output = T>> Pair<T>`)",
        );
        return None;
    }
    if item.generics.params.is_empty() {
        return None;
    }
    let shape = "a generic `#[device]` impl block is of a generic `DeviceCopy` struct over its parameters, in order: `impl<T: DeviceScalar> Pair<T> { .. }`, `impl<const N: usize> Row<N>`; for one instance's methods write a generic block and call them on that instance";
    let Type::Path(path) = &*item.self_ty else {
        errors.at(&item.self_ty, shape);
        return None;
    };
    let args: Vec<&syn::GenericArgument> = match path.path.segments.last().map(|s| &s.arguments) {
        Some(syn::PathArguments::AngleBracketed(angle)) => angle.args.iter().collect(),
        _ => Vec::new(),
    };
    let mut reserved_args = Vec::new();
    let params: Vec<&syn::GenericParam> = item.generics.params.iter().collect();
    if args.len() != params.len() {
        errors.at(&item.self_ty, shape);
        return None;
    }
    for (param, arg) in params.iter().zip(&args) {
        let arg_ident = match arg {
            syn::GenericArgument::Type(Type::Path(p)) if p.qself.is_none() => p.path.get_ident(),
            _ => None,
        };
        match param {
            syn::GenericParam::Type(ty) if arg_ident == Some(&ty.ident) => {
                reserved_args.push(GenericSlot::Type)
            }
            syn::GenericParam::Const(c) if arg_ident == Some(&c.ident) => {
                reserved_args.push(GenericSlot::Const)
            }
            syn::GenericParam::Lifetime(l) => {
                errors.at(
                    l,
                    "lifetime parameters are not needed on device impl blocks: remove it",
                );
                return None;
            }
            _ => {
                errors.at(arg, shape);
                return None;
            }
        }
    }
    Some(GenericImpl {
        generics: item.generics.clone(),
        self_ty: (*item.self_ty).clone(),
        reserved_args,
    })
}

/// The name of the user trait `path` names: any trait but the operators of `core::ops`
/// (and `PartialEq`) the device runs, and without generic arguments (a generic trait's
/// impls would need a row per argument). `None` for an operator.
fn user_trait(path: &syn::Path) -> Option<String> {
    let last = path.segments.last()?;
    let name = last.ident.to_string();
    let std_names = [
        "Clone",
        "Copy",
        "Default",
        "Debug",
        "PartialOrd",
        "Eq",
        "Ord",
        "Hash",
    ];
    (OperatorTrait::named(&name).is_none()
        && matches!(last.arguments, syn::PathArguments::None)
        && !std_names.contains(&name.as_str()))
    .then_some(name)
}

/// `impl Mul<Vec3> for f32`: a binary operator of the scalar with a struct on the right.
fn scalar_left_operator(path: &syn::Path, scalar: Scalar, errors: &mut Errors) -> Option<Attached> {
    let last = path.segments.last()?;
    let name = last.ident.to_string();
    let operator = OperatorTrait::named(&name).filter(OperatorTrait::takes_scalar_left);
    let right = match &last.arguments {
        syn::PathArguments::AngleBracketed(angle) if angle.args.len() == 1 => {
            match angle.args.first() {
                Some(syn::GenericArgument::Type(Type::Path(p)))
                    if p.qself.is_none()
                        && super::scalar_type(&Type::Path(p.clone())).is_none() =>
                {
                    p.path.get_ident().cloned()
                }
                _ => None,
            }
        }
        _ => None,
    };
    match (operator, right) {
        (Some(operator), Some(right)) => Some(Attached::ScalarLeft(operator, scalar, right)),
        _ => {
            errors.at(
                path,
                format!("an impl for the scalar `{scalar}` is device code only as a binary operator with a `DeviceCopy` struct on the right, for `2.0 * v`: `impl Mul<Vec3> for {scalar}` (`Add`, `Sub`, `Mul`, `Div`, `Rem`)"),
            );
            None
        }
    }
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
        errors.at(path, format!("`{name}` is not a trait the device runs: `#[device]` impl blocks are inherent (`impl Vec3 {{ .. }}`, for methods and associated functions) or of the operators {OPERATORS}; other traits and trait objects are not supported: write the methods in the struct's inherent impl"));
        return None;
    };
    let indexing = matches!(operator.kind, OperatorKind::Index | OperatorKind::IndexMut);
    let rhs = match &last.arguments {
        syn::PathArguments::None if indexing => {
            errors.at(
                &last.ident,
                format!("`{name}` takes the index's type: `{name}<usize>`"),
            );
            return None;
        }
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
    let allowed = operator.right_hand_sides().contains(&rhs);
    if !allowed {
        let message = match operator.kind {
            OperatorKind::Index | OperatorKind::IndexMut => {
                format!("device indexing takes an integer index: `{name}<usize>`")
            }
            _ => format!("`{name}` on the device compares a struct with its own type: `impl {name} for {self_ident}`"),
        };
        errors.at(&last.arguments, message);
        return None;
    }
    Some((operator, rhs))
}

/// Whether `ty` is `Self` or the struct itself (`Pair<T>` of a generic block).
fn is_named(ty: &Type, self_ident: &syn::Ident) -> bool {
    matches!(ty, Type::Path(p) if p.qself.is_none()
        && (p.path.get_ident().is_some_and(|i| i == "Self")
            || p.path.segments.last().is_some_and(|s| s.ident == *self_ident)))
}

/// One function of the block, captured as a `#[device]` function named `name`: `Self` is
/// the struct, and a `self` receiver is the parameter `self` of the receiver's type
/// (`&self` is a `&Vec3`, read in place; `&mut self` a `&mut Vec3`, written in place;
/// `self` a copy).
///
/// `returns_place`: the method of `Index`/`IndexMut`, whose `&Output` result is dropped
/// (lowering inlines its body as the place it refers to, never calls it).
pub(super) fn method_function(
    method: &syn::ImplItemFn,
    self_ident: &syn::Ident,
    generic: Option<&GenericImpl>,
    name: String,
    returns_place: bool,
    errors: &mut Errors,
) -> Option<Parsed> {
    // `Self` of a generic block is its type with turbofish arguments (`Pair::<T>`), which
    // reads as a type and as the start of an expression (`Pair::<T> { .. }`, `Pair::<T>::new`).
    let self_tokens: TokenStream = match generic {
        Some(generic) => {
            let names = generic.generics.params.iter().map(|param| match param {
                syn::GenericParam::Type(ty) => ty.ident.to_token_stream(),
                syn::GenericParam::Const(c) => c.ident.to_token_stream(),
                syn::GenericParam::Lifetime(l) => l.lifetime.to_token_stream(),
            });
            quote::quote!(#self_ident::<#(#names),*>)
        }
        None => self_ident.to_token_stream(),
    };
    let replace_self_type = |tokens: TokenStream| replace_self_type(tokens, &self_tokens);
    let tokens = replace_self_type(method.to_token_stream());
    let method: syn::ImplItemFn = match syn::parse2(tokens) {
        Ok(method) => method,
        Err(error) => {
            errors.push(error);
            return None;
        }
    };
    let mut sig = method.sig.clone();
    if returns_place {
        sig.output = syn::ReturnType::Default;
    }
    // The block's parameters come first, each a scalar type (what the derive allows a
    // generic struct's parameters to be) or a constant: the captured function is generic
    // over them as a generic function is, bound per call from the struct's instance.
    if let Some(generic) = generic {
        let own = std::mem::take(&mut sig.generics.params);
        for param in &generic.generics.params {
            let param = match param {
                syn::GenericParam::Type(ty) => {
                    let ident = &ty.ident;
                    syn::parse_quote!(#ident: DeviceScalar)
                }
                other => other.clone(),
            };
            sig.generics.params.push(param);
        }
        sig.generics.params.extend(own);
    }
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
                ty: Box::new(syn::parse2(replace_self_type(receiver.ty.to_token_stream())).ok()?),
            });
        }
    }
    let item = syn::ItemFn {
        attrs: Vec::new(),
        vis: method.vis.clone(),
        sig,
        block: Box::new(method.block.clone()),
    };
    super::check::signature(&item, FnKind::Device, errors);
    let mut parsed = function_with_places(&item, FnKind::Device, returns_place, errors)?;
    parsed.source.name = name;
    if let Some(generic) = generic {
        let names = super::signature::GenericNames {
            types: generic
                .generics
                .type_params()
                .map(|t| t.ident.to_string())
                .collect(),
            consts: generic
                .generics
                .const_params()
                .map(|c| c.ident.to_string())
                .collect(),
            ..Default::default()
        };
        parsed.source.self_type = match &generic.self_ty {
            Type::Path(path) => super::signature::struct_name(&path.path, &names),
            _ => None,
        };
    }
    Some(parsed)
}

/// `tokens` with every `Self` the struct's type (`self_tokens`: its name, or a generic
/// block's `Pair::<T>`), so the captured function names the struct as any other function
/// would.
fn replace_self_type(tokens: TokenStream, self_tokens: &TokenStream) -> TokenStream {
    let mut out = TokenStream::new();
    for token in tokens {
        match token {
            TokenTree::Ident(ident) if ident == "Self" => {
                out.extend(self_tokens.clone().into_iter().map(|mut t| {
                    t.set_span(ident.span());
                    t
                }));
            }
            TokenTree::Group(group) => {
                let mut replaced = Group::new(
                    group.delimiter(),
                    replace_self_type(group.stream(), self_tokens),
                );
                replaced.set_span(group.span());
                out.extend([TokenTree::Group(replaced)]);
            }
            other => out.extend([other]),
        }
    }
    out
}
