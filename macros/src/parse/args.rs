//! The macros' arguments: `#[kernel(crate = path)]`, `#[device(crate = path)]`,
//! `#[extern_device(library = NAME, crate = path)]` and, on a type deriving `DeviceCopy`,
//! `#[cudajit(crate = path)]`.
//!
//! `crate = path` names the facade crate when it is not reachable as `::cudajit`: renamed
//! in `Cargo.toml` (`gpu = { package = "cudajit", .. }` → `crate = gpu`) or re-exported by
//! another crate (`crate = engine::cudajit`). The path is written into the generated code
//! as given, so it must resolve from any module: a crate name or a `crate::`/`::` path.

use proc_macro2::TokenStream;
use syn::meta::ParseNestedMeta;
use syn::parse::Parser as _;

use crate::errors::Errors;
use crate::parse::FnKind;

/// The arguments of `#[kernel]` and `#[device]`: only `crate = path`.
pub(crate) fn function_arguments(
    attr: TokenStream,
    kind: FnKind,
    errors: &mut Errors,
) -> Option<syn::Path> {
    let attribute = kind.attribute();
    let mut crate_path = None;
    let parser = syn::meta::parser(|meta| {
        if meta.path.is_ident("crate") {
            crate_path = Some(crate_argument(&meta)?);
            Ok(())
        } else {
            Err(meta.error(format!(
                "unknown argument of `{attribute}`: the only one is `crate = path`, the path of the `cudajit` crate when it is renamed or re-exported"
            )))
        }
    });
    if let Err(error) = parser.parse2(attr) {
        errors.push(error);
    }
    crate_path
}

/// The arguments of `#[extern_device]`: `library = NAME` (required) and `crate = path`.
pub(crate) fn extern_device_arguments(
    attr: TokenStream,
    errors: &mut Errors,
) -> (Option<syn::Path>, Option<syn::Path>) {
    let usage =
        "write `#[extern_device(library = NAME)]`, NAME being a `static` `cudajit::DeviceLibrary`";
    let mut library = None;
    let mut crate_path = None;
    let mut library_given = false;
    let parser = syn::meta::parser(|meta| {
        if meta.path.is_ident("library") {
            library_given = true;
            match meta.value()?.parse::<syn::Expr>()? {
                syn::Expr::Path(path) if path.qself.is_none() => library = Some(path.path),
                other => errors.at(other, usage),
            }
            Ok(())
        } else if meta.path.is_ident("crate") {
            crate_path = Some(crate_argument(&meta)?);
            Ok(())
        } else {
            Err(meta.error(format!(
                "unknown argument: {usage} (and `crate = path` if the `cudajit` crate is renamed or re-exported)"
            )))
        }
    });
    if let Err(error) = parser.parse2(attr) {
        errors.push(error);
    } else if !library_given {
        let message = format!("`#[extern_device]` needs its device library: {usage}");
        errors.push(syn::Error::new(proc_macro2::Span::call_site(), message));
    }
    (library, crate_path)
}

/// `#[cudajit(crate = path)]` among the attributes of a type deriving `DeviceCopy`.
pub(crate) fn derive_crate_path(
    attrs: &[syn::Attribute],
    errors: &mut Errors,
) -> Option<syn::Path> {
    let mut crate_path = None;
    for attr in attrs.iter().filter(|a| a.path().is_ident("cudajit")) {
        let result = attr.parse_nested_meta(|meta| {
            if meta.path.is_ident("crate") {
                crate_path = Some(crate_argument(&meta)?);
                Ok(())
            } else {
                Err(meta.error(
                    "unknown argument of `#[cudajit]`: the only one is `crate = path`, the path of the `cudajit` crate when it is renamed or re-exported",
                ))
            }
        });
        if let Err(error) = result {
            errors.push(error);
        }
    }
    crate_path
}

/// The value of `crate = ..`: a path (`crate = gpu`, `crate = engine::cudajit`), or the
/// same in a string as serde writes it (`crate = "gpu"`).
fn crate_argument(meta: &ParseNestedMeta) -> syn::Result<syn::Path> {
    let value = meta.value()?;
    if value.peek(syn::LitStr) {
        let text: syn::LitStr = value.parse()?;
        return text.parse();
    }
    value.call(syn::Path::parse_mod_style)
}
