//! Associated types of user traits in device code: `type Out = f32;` in
//! `impl Shape for Circle`, `S::Out` (or `<S as Shape>::Out`) in a generic function.
//!
//! An impl's own functions read `Self::Out` as the type the impl gives (replaced here,
//! as `Self` is by the struct). A generic function's `S::Out` is the type parameter's
//! associated type, captured as the generic type `S::Out`, which the instance for a
//! struct replaces by the type that struct's impl gives (`lower/generic_structs.rs`, from
//! the impl's row, `DeviceImplBlock::types`), as rustc normalises the projection.

use proc_macro2::{Delimiter, Group, TokenStream, TokenTree};
use quote::ToTokens;
use syn::Type;

use super::signature::GenericNames;

/// `method` with each `Self::Name` of an associated type of `types` replaced by the type
/// it stands for.
pub(super) fn given_in_impl(
    method: &syn::ImplItemFn,
    types: &[(syn::Ident, Type)],
) -> syn::ImplItemFn {
    if types.is_empty() {
        return method.clone();
    }
    let tokens = replace(method.to_token_stream(), types);
    // The replacement is a type where a type path was: it parses as the method did.
    syn::parse2(tokens).unwrap_or_else(|_| method.clone())
}

fn replace(tokens: TokenStream, types: &[(syn::Ident, Type)]) -> TokenStream {
    let tokens: Vec<TokenTree> = tokens.into_iter().collect();
    let mut out = Vec::with_capacity(tokens.len());
    let mut i = 0;
    while i < tokens.len() {
        if let Some(ty) = self_projection(&tokens[i..], types) {
            let mut group = Group::new(Delimiter::None, ty.to_token_stream());
            group.set_span(tokens[i].span());
            out.push(TokenTree::Group(group));
            i += 4;
            continue;
        }
        out.push(match &tokens[i] {
            TokenTree::Group(group) => {
                let mut replaced = Group::new(group.delimiter(), replace(group.stream(), types));
                replaced.set_span(group.span());
                TokenTree::Group(replaced)
            }
            other => other.clone(),
        });
        i += 1;
    }
    out.into_iter().collect()
}

/// The type of `Self :: Name` at the start of `tokens`, `Name` one of `types`.
fn self_projection<'t>(tokens: &[TokenTree], types: &'t [(syn::Ident, Type)]) -> Option<&'t Type> {
    let [TokenTree::Ident(this), TokenTree::Punct(a), TokenTree::Punct(b), TokenTree::Ident(name), ..] =
        tokens
    else {
        return None;
    };
    let path_separator = a.as_char() == ':' && b.as_char() == ':';
    if this != "Self" || !path_separator {
        return None;
    }
    // `Self::Out::MAX` names an item of the type: left for rustc's reading of the body.
    if matches!(tokens.get(4), Some(TokenTree::Punct(p)) if p.as_char() == ':') {
        return None;
    }
    types
        .iter()
        .find(|(ident, _)| ident == name)
        .map(|(_, ty)| ty)
}

/// `S::Out` or `<S as Shape>::Out` with `S` a type parameter bounded by a user trait: the
/// captured generic type's name, `S::Out`.
pub(super) fn projection(path: &syn::TypePath, generics: &GenericNames) -> Option<String> {
    let bounded = |name: &str| generics.user_bounded.iter().any(|g| g == name);
    let segments: Vec<&syn::PathSegment> = path.path.segments.iter().collect();
    let plain = segments.iter().all(|s| s.arguments.is_none());
    match (&path.qself, segments.as_slice()) {
        (None, [parameter, item]) if plain && bounded(&parameter.ident.to_string()) => {
            Some(format!("{}::{}", parameter.ident, item.ident))
        }
        (Some(qself), [_trait_name, item]) if plain && qself.position == 1 => match &*qself.ty {
            Type::Path(parameter) if parameter.qself.is_none() => {
                let ident = parameter.path.get_ident()?.to_string();
                bounded(&ident).then(|| format!("{ident}::{}", item.ident))
            }
            _ => None,
        },
        _ => None,
    }
}

/// A type as its impl writes it (`f32`, `Vec3`), for the impl's row.
pub(crate) fn written_type(ty: &Type) -> String {
    ty.to_token_stream().to_string().replace(' ', "")
}
