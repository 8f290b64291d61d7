//! The macros' arguments: `#[kernel(crate = path, arch = "sm_90a")]`, `#[device(crate = path)]`,
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

/// The arguments of `#[kernel]` and `#[device]`.
#[derive(Default)]
pub(crate) struct FunctionArguments {
    /// `crate = path`.
    pub crate_path: Option<syn::Path>,
    /// `arch = "sm_XYa"` (kernels only): the architecture-specific target the kernel needs,
    /// as (major, minor).
    pub specific_arch: Option<(u32, u32)>,
    /// `max_threads = N` (kernels only): the launch bound of the block size.
    pub max_threads: Option<u32>,
}

/// The arguments of `#[kernel]` (`crate = path`, `arch = "sm_90a"`) and `#[device]`
/// (`crate = path`).
pub(crate) fn function_arguments(
    attr: TokenStream,
    kind: FnKind,
    errors: &mut Errors,
) -> FunctionArguments {
    let attribute = kind.attribute();
    let mut arguments = FunctionArguments::default();
    let parser = syn::meta::parser(|meta| {
        if meta.path.is_ident("crate") {
            arguments.crate_path = Some(crate_argument(&meta)?);
            Ok(())
        } else if meta.path.is_ident("arch") && kind == FnKind::Kernel {
            match meta.value()?.parse::<syn::Expr>()? {
                syn::Expr::Lit(syn::ExprLit {
                    lit: syn::Lit::Str(text),
                    ..
                }) => match specific_arch(&text.value()) {
                    Some(arch) => arguments.specific_arch = Some(arch),
                    None => errors.at(&text, SPECIFIC_ARCH_USAGE),
                },
                other => errors.at(other, SPECIFIC_ARCH_USAGE),
            }
            Ok(())
        } else if meta.path.is_ident("max_threads") && kind == FnKind::Kernel {
            match meta.value()?.parse::<syn::Expr>()? {
                syn::Expr::Lit(syn::ExprLit {
                    lit: syn::Lit::Int(int),
                    ..
                }) => match int.base10_parse::<u32>() {
                    Ok(n @ 1..=1024) => arguments.max_threads = Some(n),
                    _ => errors.at(&int, MAX_THREADS_USAGE),
                },
                other => errors.at(other, MAX_THREADS_USAGE),
            }
            Ok(())
        } else if meta.path.is_ident("max_threads") {
            Err(meta.error(
                "`max_threads` is an argument of `#[kernel]`: a `#[device]` function runs with the block size of the kernel that calls it",
            ))
        } else if meta.path.is_ident("arch") {
            Err(meta.error(
                "`arch` is an argument of `#[kernel]`: a `#[device]` function is compiled for the architecture of the kernel that calls it",
            ))
        } else {
            let known = match kind {
                FnKind::Kernel => "`crate = path` (the path of the `cudajit` crate when it is renamed or re-exported), `arch = \"sm_90a\"` (a kernel using architecture-specific instructions) and `max_threads = N` (the most threads per block it is launched with)",
                FnKind::Device => "`crate = path`, the path of the `cudajit` crate when it is renamed or re-exported",
            };
            Err(meta.error(format!(
                "unknown argument of `{attribute}`: the arguments are {known}"
            )))
        }
    });
    if let Err(error) = parser.parse2(attr) {
        errors.push(error);
    }
    arguments
}

const MAX_THREADS_USAGE: &str = "`max_threads` is the most threads per block the kernel is launched with, an integer from 1 to 1024 (`max_threads = 384`): the register allocator then gives each thread up to 65536 / N registers, as `__launch_bounds__(N)` does in CUDA C++";

const SPECIFIC_ARCH_USAGE: &str = "`arch` names an architecture-specific target, `sm_XYa`: write `arch = \"sm_90a\"` for Hopper's `wgmma` and `setmaxnreg`; without `arch` a kernel is compiled for the GPU it runs on (`sm_90` on an H100/H200)";

/// `sm_XYa` as (X, Y); `None` for anything else. Portable names (`sm_90`) are refused:
/// every kernel already runs on the GPU's own architecture, so only the `a` targets are a
/// requirement worth stating.
fn specific_arch(text: &str) -> Option<(u32, u32)> {
    let digits = text.strip_prefix("sm_")?.strip_suffix('a')?;
    if digits.len() < 2 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let (major, minor) = digits.split_at(digits.len() - 1);
    Some((major.parse().ok()?, minor.parse().ok()?))
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
