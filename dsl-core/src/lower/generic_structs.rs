//! Type parameters bound to structs (`fn total<S: Shape>(s: &[S])` called with a slice of
//! `Circle`s): static dispatch, as rustc monomorphises. Each instance is the function with
//! the parameter replaced by the struct everywhere it is written, so the rest of lowering
//! sees an ordinary function of `Circle`s; `S::SIDES` becomes the constant of `Circle`'s
//! impl (rustc evaluated it where the impl is, see `methods::DeviceImplBlock`) and
//! `S::new(..)` the call of `Circle`'s function; the type `S::Out` is the type `Circle`'s
//! impl gives its associated type `Out` (a scalar type).

use serde_json::Value;

use super::error::LowerError;
use crate::ast::{FunctionSource, ValueType};
use crate::constant::ConstantValue;
use crate::methods::blocks_of;
use crate::Scalar;

/// `source` with each type parameter of `structs` (name, struct) replaced by its struct and
/// removed from its generics.
pub(super) fn substitute(
    source: &FunctionSource,
    structs: &[(String, &'static str)],
) -> Result<FunctionSource, LowerError> {
    if structs.is_empty() {
        return Ok(source.clone());
    }
    let internal = |error: serde_json::Error| {
        LowerError::new(
            source.span,
            format!(
                "internal: `{}` could not be instantiated: {error}",
                source.name
            ),
        )
    };
    let mut value = serde_json::to_value(source).map_err(internal)?;
    let mut constants = source.constants.clone();
    replace(&mut value, structs, &mut constants, source)?;
    let mut instance: FunctionSource = serde_json::from_value(value).map_err(internal)?;
    instance
        .generics
        .retain(|g| !structs.iter().any(|(name, _)| *name == g.name));
    instance.constants = constants;
    instance.file = source.file.clone();
    Ok(instance)
}

fn replace(
    value: &mut Value,
    structs: &[(String, &'static str)],
    constants: &mut Vec<ConstantValue>,
    source: &FunctionSource,
) -> Result<(), LowerError> {
    match value {
        Value::Array(items) => {
            for item in items {
                replace(item, structs, constants, source)?;
            }
        }
        Value::Object(fields) => {
            // `{"Generic": "S"}`: the type written `S`.
            if fields.len() == 1 {
                // `{"Generic": "S::Out"}`: an associated type through the parameter.
                if let Some(Value::String(name)) = fields.get("Generic") {
                    if let Some((owner, item)) = through_parameter(name, structs) {
                        let ty = associated_type(owner, item).map_err(|why| {
                            LowerError::new(
                                source.span,
                                format!("`{name}` in `{}`: {why}", source.name),
                            )
                        })?;
                        *value = serde_json::to_value(ty).map_err(|error| {
                            LowerError::new(source.span, format!("internal: {error}"))
                        })?;
                        return Ok(());
                    }
                }
                if let Some(Value::String(name)) = fields.get("Generic") {
                    if let Some((_, owner)) = structs.iter().find(|(n, _)| n == name) {
                        *value = serde_json::json!({ "Struct": owner });
                        return Ok(());
                    }
                }
                // `{"Var": "S::SIDES"}`: an associated constant through the parameter.
                if let Some(Value::String(path)) = fields.get_mut("Var") {
                    if let Some((owner, item)) = through_parameter(path, structs) {
                        let constant = associated_constant(owner, item).ok_or_else(|| {
                            LowerError::new(
                                source.span,
                                format!("`{owner}` has no `#[device]` impl with the constant `{item}` (`{path}` in `{}`)", source.name),
                            )
                        })?;
                        *path = constant.name.to_owned();
                        if !constants.iter().any(|c| c.name == constant.name) {
                            constants.push(constant);
                        }
                        return Ok(());
                    }
                }
            }
            // `S::new(..)`: the struct's associated function (or its trait impl's);
            // `<S as Shape>::area(s)` stays the trait's (`<Circle as Shape>::area`), not
            // an inherent function of the struct that shares its name.
            if let Some(Value::String(callee)) = fields.get_mut("callee") {
                if let Some((owner, item)) = through_parameter(callee, structs) {
                    *callee = match qualified_trait(callee) {
                        Some(trait_name) => format!("<{owner} as {trait_name}>::{item}"),
                        None => format!("{owner}::{item}"),
                    };
                }
            }
            for field in fields.values_mut() {
                replace(field, structs, constants, source)?;
            }
        }
        _ => {}
    }
    Ok(())
}

/// `S::item` (or `<S as Trait>::item`) with `S` one of `structs`: the struct and `item`.
fn through_parameter<'a>(
    path: &'a str,
    structs: &[(String, &'static str)],
) -> Option<(&'static str, &'a str)> {
    let (head, item) = path.rsplit_once("::")?;
    let head = head
        .strip_prefix('<')
        .and_then(|h| h.strip_suffix('>'))
        .and_then(|h| h.split(" as ").next())
        .unwrap_or(head);
    structs
        .iter()
        .find(|(name, _)| name == head)
        .map(|(_, owner)| (*owner, item))
}

/// The trait of a qualified path `<S as Shape>::item`.
fn qualified_trait(path: &str) -> Option<&str> {
    let (head, _) = path.rsplit_once("::")?;
    let (_, trait_name) = head
        .strip_prefix('<')?
        .strip_suffix('>')?
        .split_once(" as ")?;
    Some(trait_name)
}

/// The associated constant `item` of one of `owner`'s `#[device]` impl blocks.
pub(super) fn associated_constant(owner: &str, item: &str) -> Option<ConstantValue> {
    let inherent = format!("{owner}::{item}");
    let traits = format!(">::{item}");
    let mut found = blocks_of(owner).flat_map(|block| block.constants.iter().copied());
    found.find(|c| {
        c.name == inherent
            || (c.name.starts_with(&format!("<{owner} as ")) && c.name.ends_with(&traits))
    })
}

/// The type `owner`'s `#[device]` trait impl gives its associated type `item`: a scalar
/// type, or a `DeviceCopy` struct by its name (the last segment of its path, as the
/// layouts name structs; its layout reaches the kernel with the impl's functions that
/// return or take it).
fn associated_type(owner: &str, item: &str) -> Result<ValueType, String> {
    let given = blocks_of(owner)
        .flat_map(|block| block.types.iter())
        .find(|ty| ty.name == item)
        .ok_or_else(|| format!("`{owner}` has no `#[device]` trait impl that gives the associated type `{item}` (`type {item} = f32;`)"))?;
    if let Some(scalar) = Scalar::from_rust_name(given.written) {
        return Ok(ValueType::Scalar(scalar));
    }
    let plain = given
        .written
        .chars()
        .all(|c| c.is_alphanumeric() || c == '_' || c == ':');
    match given.written.rsplit("::").next() {
        Some(name) if plain && !name.is_empty() => Ok(ValueType::Struct(name.to_owned())),
        _ => Err(format!("`{owner}`'s `{item}` is `{}`; associated types in device code are scalar types and `DeviceCopy` structs (`type {item} = f32;`)", given.written)),
    }
}
