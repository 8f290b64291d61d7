//! From syn's syntax tree to cudajit's captured syntax ([`cudajit_core::ast`]).
//!
//! The supported subset of Rust is decided here: every construct outside it is answered
//! by an error at its span, collected in [`Errors`], and parsing goes on so that all
//! mistakes are reported at once. The macros' own arguments are read in `args.rs`.
//! Function bodies are walked by the [`Parser`]
//! (`parser.rs`), whose methods are spread over `stmt.rs`, `expr.rs` and the modules
//! beside them; `extern_block.rs` reads `#[extern_device]` blocks and `device_copy.rs` the
//! types deriving `DeviceCopy`.

mod args;
mod arrays;
mod associated_type;
mod call;
pub(crate) mod check;
mod closure;
mod device_copy;
mod expr;
mod extern_block;
mod format;
mod impl_block;
mod intrinsic_call;
mod iterate;
mod iterator_chain;
mod loop_value;
mod matching;
mod option;
mod option_value;
mod ordering;
mod parser;
mod refusals;
mod signature;
mod stmt;
mod struct_values;
mod sub_slice;
mod tensor_op;
mod trait_item;
mod trait_object;
mod tuple;
mod tuple_branches;

use cudajit_core::ast::FunctionSource;
use cudajit_core::Span;
use proc_macro2::TokenStream;
use syn::ItemFn;

use crate::errors::Errors;
pub(crate) use args::{derive_crate_path, extern_device_arguments, function_arguments};
pub(crate) use associated_type::written_type;
pub(crate) use device_copy::{
    device_copy, integer_repr, is_repr_c, DeviceCopy, DeviceCopyEnum, DeviceCopyStruct, FieldShape,
    StructParam,
};
pub(crate) use extern_block::{declarations, extern_block};
pub(crate) use impl_block::{impl_block, DeviceImpl, GenericSlot};
use parser::Parser;
pub(crate) use signature::{scalar_type, FnKind};
pub(crate) use trait_item::{trait_item, DeviceTrait};

/// The item under `#[kernel]` or `#[device]`, which must be a function.
pub(crate) fn item_fn(item: TokenStream, kind: FnKind) -> syn::Result<ItemFn> {
    syn::parse2(item).map_err(|error| {
        syn::Error::new(
            error.span(),
            format!("`{}` applies to a function", kind.attribute()),
        )
    })
}

/// A parsed function and the paths of the device functions it calls (for the generated
/// code, which finds their captured forms through those paths).
pub(crate) struct Parsed {
    pub source: FunctionSource,
    pub callees: Vec<syn::Path>,
    /// The user structs and enums the signature and body name, by path.
    pub structs: Vec<syn::Path>,
    /// The structs the body names by a path without arguments, which may be a generic
    /// struct's (`Pair { .. }`, `Pair::new(..)`): their layouts found by a probe
    /// (`cudajit_core::layout::probe`).
    pub probed: Vec<syn::Path>,
    /// The Rust constants the body names: the name in the captured syntax, the path.
    pub constants: Vec<(String, syn::Path)>,
    /// The body's `const` and `static` items.
    pub const_items: Vec<syn::Item>,
    /// The associated functions the body calls (`Vec3::new`): the type's path, the name.
    pub associated: Vec<(syn::Path, syn::Ident)>,
    /// Where the body calls struct methods: the line and column of each method's name.
    pub method_sites: Vec<(usize, usize)>,
}

/// Parses a kernel or device function. Returns `None` if anything was rejected.
pub(crate) fn function(item: &ItemFn, kind: FnKind, errors: &mut Errors) -> Option<Parsed> {
    function_with_places(item, kind, false, errors)
}

/// [`function`], for the methods of `Index`/`IndexMut` when `returns_place`: the body is
/// the place it returns a reference to (`&self.data[i]`), kept with its `&` for lowering
/// to inline where the struct is indexed.
pub(crate) fn function_with_places(
    item: &ItemFn,
    kind: FnKind,
    returns_place: bool,
    errors: &mut Errors,
) -> Option<Parsed> {
    let (generics, mut names) = signature::generics(&item.sig, errors);
    let params = signature::params(&item.sig, kind, &names, errors);
    names.closure_params = params
        .iter()
        .filter_map(|param| match param.ty {
            cudajit_core::ast::ParamType::Closure { arity } => Some((param.name.clone(), arity)),
            _ => None,
        })
        .collect();
    let result = match kind {
        FnKind::Kernel => None,
        FnKind::Device => signature::result(&item.sig, &names, errors),
    };
    let own_name = item.sig.ident.to_string();
    let own_generics = signature::GenericNames {
        types: names.types.clone(),
        consts: names.consts.clone(),
        ..Default::default()
    };
    let mut parser = Parser::new(errors, names, kind, own_name);
    // `*self` and `*other` of struct references read the struct.
    for input in &item.sig.inputs {
        if let (syn::FnArg::Typed(typed), syn::Type::Reference(reference)) =
            (input, &*input_type(input))
        {
            if !matches!(&*reference.elem, syn::Type::Slice(_)) {
                if let syn::Pat::Ident(ident) = &*typed.pat {
                    let name = ident.ident.to_string();
                    // `f: &F` is a closure parameter, not a struct read through `*f`.
                    if params.iter().any(|p| {
                        p.name == name
                            && matches!(p.ty, cudajit_core::ast::ParamType::Closure { .. })
                    }) {
                        continue;
                    }
                    parser.reference_names.push(name);
                }
            }
        }
    }
    // Every parameter name, also of parameters rejected above, so their uses add no
    // errors of their own.
    for input in &item.sig.inputs {
        if let syn::FnArg::Typed(typed) = input {
            parser.bind_pattern_names(&typed.pat);
            if let (syn::Type::Tuple(tuple), syn::Pat::Ident(ident)) = (&*typed.ty, &*typed.pat) {
                parser.bind_tuple_name(&ident.ident.to_string(), tuple.elems.len());
            }
            if let (Some(_), syn::Pat::Ident(ident)) =
                (option_value::option_inner(&typed.ty), &*typed.pat)
            {
                parser.bind_option_name(&ident.ident.to_string());
            }
        }
    }
    // After the names: a closure parameter's marker is its innermost binding.
    for param in &params {
        if let cudajit_core::ast::ParamType::Closure { .. } = param.ty {
            parser.bind(&closure::param_marker(&param.name));
        }
        // Slices and arrays: `x.reverse()` is theirs, not an `Ordering`'s.
        if matches!(
            param.ty,
            cudajit_core::ast::ParamType::Slice { .. }
                | cudajit_core::ast::ParamType::Value(cudajit_core::ast::ValueType::Array { .. })
                | cudajit_core::ast::ParamType::Reference { len: Some(_), .. }
        ) {
            parser.bind_sequence_name(&param.name);
        }
    }
    parser.returns_tuple = matches!(result, Some(cudajit_core::ast::ValueType::Tuple(_)));
    parser.returns_array = matches!(result, Some(cudajit_core::ast::ValueType::Array { .. }));
    if let syn::ReturnType::Type(_, ty) = &item.sig.output {
        if let Some(cudajit_core::ast::ValueType::Tuple(halves)) = &result {
            if option_value::option_inner(ty).is_some() {
                parser.returns_option = halves.get(1).cloned();
            }
        }
    }
    parser.returns_place = returns_place;
    // A declared result that was refused (reported already) still takes the tail.
    let declared = !matches!(item.sig.output, syn::ReturnType::Default);
    let body = parser.fn_body(&item.block, result.is_some() || returns_place || declared);
    let uses = parser.into_uses();
    let enums = uses.types;
    if !errors.is_empty() {
        return None;
    }
    let struct_names: Vec<&str> = params
        .iter()
        .filter_map(|param| match &param.ty {
            cudajit_core::ast::ParamType::Value(cudajit_core::ast::ValueType::Struct(name))
            | cudajit_core::ast::ParamType::Slice {
                elem: cudajit_core::ast::ValueType::Struct(name),
                ..
            }
            | cudajit_core::ast::ParamType::Reference {
                target: cudajit_core::ast::ValueType::Struct(name),
                ..
            } => Some(name.as_str()),
            _ => None,
        })
        .collect();
    // The struct paths as written, so a type that is not `DeviceCopy` is reported there.
    let mut structs: Vec<syn::Path> = Vec::new();
    let mut add = |path: &syn::Path| {
        let text = quote::quote!(#path).to_string();
        if !structs
            .iter()
            .any(|p| quote::quote!(#p).to_string() == text)
        {
            structs.push(path.clone());
        }
    };
    // A generic struct named with the function's own parameters (`Pair<T>`) has a layout
    // only per instance: the callers' concrete types bring it.
    let named = |ty: &syn::Type| match ty {
        syn::Type::Path(path) if path.qself.is_none() => path
            .path
            .segments
            .last()
            .filter(|last| {
                struct_names
                    .iter()
                    .any(|name| last.ident == cudajit_core::layout::base_name(name))
            })
            .filter(|_| !signature::mentions_generics(&path.path, &own_generics))
            .map(|_| path.path.clone()),
        _ => None,
    };
    for input in &item.sig.inputs {
        let syn::FnArg::Typed(typed) = input else {
            continue;
        };
        let ty = match &*typed.ty {
            syn::Type::Reference(r) => match &*r.elem {
                syn::Type::Slice(s) => &*s.elem,
                other => other,
            },
            other => other,
        };
        if let Some(path) = named(ty) {
            add(&path);
        }
    }
    // A struct the device function returns.
    if let (Some(cudajit_core::ast::ValueType::Struct(_)), syn::ReturnType::Type(_, ty)) =
        (&result, &item.sig.output)
    {
        if let syn::Type::Path(path) = &**ty {
            if !signature::mentions_generics(&path.path, &own_generics) {
                add(&path.path);
            }
        }
    }
    for path in &enums {
        add(path);
    }
    Some(Parsed {
        structs,
        probed: uses.probed,
        source: FunctionSource {
            name: item.sig.ident.to_string(),
            generics,
            params,
            result,
            body,
            span: span_of(item.sig.ident.span()),
            external: None,
            max_threads: None,
            self_type: None,
            constants: Vec::new(),
            file: String::new(),
        },
        callees: uses.callees,
        constants: uses.constants,
        const_items: uses.const_items,
        associated: uses.associated,
        method_sites: uses.method_sites,
    })
}

/// The user's position of a token.
pub(crate) fn span_of(span: proc_macro2::Span) -> Span {
    let start = span.start();
    Span::new(start.line as u32, start.column as u32)
}

/// The position of the first token of `tokens`.
pub(crate) fn span_at(tokens: &impl quote::ToTokens) -> Span {
    tokens
        .to_token_stream()
        .into_iter()
        .next()
        .map(|t| span_of(t.span()))
        .unwrap_or_default()
}

/// The type of a typed parameter (a receiver's is `Self`, never seen here).
fn input_type(input: &syn::FnArg) -> Box<syn::Type> {
    match input {
        syn::FnArg::Typed(typed) => typed.ty.clone(),
        syn::FnArg::Receiver(receiver) => receiver.ty.clone(),
    }
}
