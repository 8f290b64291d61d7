//! The names of generic structs' instances in a function's text: `Pair<T>` of a generic
//! function or impl block is `Pair<f32>` in its instance for `T = f32` (how layouts key
//! instances, `crate::layout::StructLayout::instance`).

use serde_json::Value;

use super::spec::Specialization;
use crate::ast::FunctionSource;

/// `source` with the names of generic structs' instances its text writes with its own
/// parameters (`Pair<T>`, `Row<N>`, in types, struct literals, callees and its impl block's
/// type) given the specialisation's values (`Pair<f32>`, `Row<4>`), so the rest of
/// lowering sees the instances' names, as layouts key them.
pub(super) fn instantiate_names(source: &FunctionSource, spec: &Specialization) -> FunctionSource {
    if spec.types.is_empty() && spec.consts.is_empty() {
        return source.clone();
    }
    let Ok(mut value) = serde_json::to_value(source) else {
        return source.clone();
    };
    rename(&mut value, spec);
    match serde_json::from_value::<FunctionSource>(value) {
        Ok(mut instance) => {
            instance.constants = source.constants.clone();
            instance.file = source.file.clone();
            instance
        }
        Err(_) => source.clone(),
    }
}

fn rename(value: &mut Value, spec: &Specialization) {
    match value {
        Value::Array(items) => items.iter_mut().for_each(|item| rename(item, spec)),
        Value::Object(fields) => {
            for (key, field) in fields.iter_mut() {
                match (key.as_str(), field) {
                    ("Struct" | "ty" | "self_type", Value::String(name)) => {
                        *name = instance_of(name, spec);
                    }
                    // `Pair<T>::new`: the owner of an associated function.
                    ("callee", Value::String(callee)) if !callee.starts_with('<') => {
                        if let Some((owner, item)) = callee.rsplit_once("::") {
                            *callee = format!("{}::{item}", instance_of(owner, spec));
                        }
                    }
                    (_, field) => rename(field, spec),
                }
            }
        }
        _ => {}
    }
}

/// A struct's name with the specialisation's values for the parameters its arguments name.
pub(super) fn instance_of(name: &str, spec: &Specialization) -> String {
    let (base, args) = crate::layout::split_instance(name);
    if args.is_empty() {
        return name.to_owned();
    }
    let args: Vec<String> = args
        .iter()
        .map(|arg| match (spec.ty(arg), spec.constant(arg)) {
            (Some(scalar), _) => scalar.rust_name().to_owned(),
            (None, Some(literal)) => literal_text(literal),
            (None, None) => (*arg).to_owned(),
        })
        .collect();
    crate::layout::instance_name(base, &args)
}

/// An integer constant as a generic struct's argument is written (`4`, `-1`).
pub(super) fn literal_text(literal: crate::ir::Literal) -> String {
    match literal {
        crate::ir::Literal::Int { bits, ty } if ty.is_signed() => {
            let shift = 64 - ty.bits();
            (((bits << shift) as i64) >> shift).to_string()
        }
        crate::ir::Literal::Int { bits, .. } => bits.to_string(),
        crate::ir::Literal::Bool(b) => b.to_string(),
        crate::ir::Literal::Float { value, .. } => value.to_string(),
    }
}
