//! Specialisations: the values of a function's generic parameters, and the functions a
//! kernel can call.

use std::collections::HashMap;

use super::error::LowerError;
use crate::ast::{FunctionSource, GenericKind, ValueType};
use crate::ir::Literal;
use crate::layout::{
    interned_struct, tuple_layout_named, tuple_layout_of, FieldType, StructLayout,
    MAX_TUPLE_ELEMENTS,
};
use crate::{Scalar, Span};

/// Values of the generic parameters (and `#[comptime]` parameters) of one function.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Specialization {
    /// Type parameters: `T = f32`.
    pub types: Vec<(String, Scalar)>,
    /// Const generic and `#[comptime]` parameters: `N = 4`.
    pub consts: Vec<(String, Literal)>,
    /// Type parameters bound to structs (`S = Circle`, for `S: Shape`): the instance is
    /// the function with `S` replaced (`generic_structs.rs`).
    pub structs: Vec<(String, &'static str)>,
}

impl Specialization {
    /// The type bound to `name`.
    pub fn ty(&self, name: &str) -> Option<Scalar> {
        self.types.iter().find(|(n, _)| n == name).map(|(_, s)| *s)
    }

    /// The constant bound to `name`.
    pub fn constant(&self, name: &str) -> Option<Literal> {
        self.consts.iter().find(|(n, _)| n == name).map(|(_, v)| *v)
    }

    /// A scalar type as written, resolved.
    pub fn resolve(&self, ty: &ValueType, span: Span) -> Result<Scalar, LowerError> {
        match ty {
            ValueType::Scalar(s) => Ok(*s),
            ValueType::Generic(name) => self.ty(name).ok_or_else(|| {
                LowerError::new(
                    span,
                    format!(
                        "the generic type parameter `{name}` has no value in this specialisation"
                    ),
                )
            }),
            ValueType::Struct(name) => Err(LowerError::new(
                span,
                format!("`{name}` is a struct; a scalar is needed here"),
            )),
            ValueType::Tuple(_) => Err(LowerError::new(
                span,
                "a tuple is not a scalar: tuples hold scalars, and are not nested",
            )),
            ValueType::Array { .. } => Err(LowerError::new(
                span,
                "an array is not a scalar: arrays hold scalars or structs, and are not nested",
            )),
        }
    }

    /// The length of an array type: its literal, or its const generic's value.
    pub fn array_len(&self, len: &crate::ast::ArrayLen, span: Span) -> Result<u32, LowerError> {
        match len {
            crate::ast::ArrayLen::Literal(n) => Ok(*n),
            crate::ast::ArrayLen::Generic(name) => match self.constant(name) {
                Some(Literal::Int { bits, .. }) if bits > 0 && bits <= 4096 => Ok(bits as u32),
                _ => Err(LowerError::new(
                    span,
                    format!("the array length `{name}` is 1 to 4096 in this specialisation"),
                )),
            },
        }
    }

    /// The values for people: `T=f32, N=4` (empty without generic parameters).
    pub fn describe(&self) -> String {
        let types = self
            .types
            .iter()
            .map(|(n, s)| format!("{n}={s}"))
            .chain(self.structs.iter().map(|(n, s)| format!("{n}={s}")));
        let consts = self.consts.iter().map(|(n, v)| match *v {
            Literal::Bool(b) => format!("{n}={b}"),
            Literal::Int { bits, ty } if ty.is_signed() => {
                let shift = 64 - ty.bits();
                format!("{n}={}", ((bits << shift) as i64) >> shift)
            }
            Literal::Int { bits, .. } => format!("{n}={bits}"),
            Literal::Float { value, .. } => format!("{n}={value}"),
        });
        types.chain(consts).collect::<Vec<_>>().join(", ")
    }

    /// A short text naming the values, for symbols and messages: `f32_4`.
    pub fn suffix(&self) -> String {
        let mut parts: Vec<String> = self
            .types
            .iter()
            .map(|(_, s)| s.rust_name().to_owned())
            .chain(self.structs.iter().map(|(_, s)| (*s).to_owned()))
            .collect();
        parts.extend(self.consts.iter().map(|(_, v)| match *v {
            Literal::Bool(b) => b.to_string(),
            Literal::Int { bits, ty } if ty.is_signed() => {
                let shift = 64 - ty.bits();
                let value = ((bits << shift) as i64) >> shift;
                value.to_string().replace('-', "m")
            }
            Literal::Int { bits, .. } => bits.to_string(),
            Literal::Float { value, .. } => value.to_bits().to_string(),
        }));
        parts.join("_")
    }

    /// Checks that every generic parameter of `function` has a value of the right kind.
    pub fn check_complete(&self, function: &FunctionSource) -> Result<(), LowerError> {
        for generic in &function.generics {
            let ok = match &generic.kind {
                GenericKind::Type { .. } => self.ty(&generic.name).is_some(),
                GenericKind::Const(ty) => self
                    .constant(&generic.name)
                    .is_some_and(|v| v.scalar() == *ty),
            };
            if !ok {
                return Err(LowerError::new(
                    generic.span,
                    format!(
                        "`{}` needs a value for its generic parameter `{}`",
                        function.name, generic.name
                    ),
                ));
            }
        }
        Ok(())
    }
}

/// A value type after resolution.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Resolved {
    Scalar(Scalar),
    Struct(&'static str),
}

/// What a kernel can reach, by name: the `#[device]` functions it calls (directly or
/// through others) and the layouts of the structs they name. (Not to be confused with a
/// `DeviceLibrary`, device code linked at the end.)
#[derive(Clone, Debug, Default)]
pub struct ReachableItems {
    functions: HashMap<String, FunctionSource>,
    structs: HashMap<String, StructLayout>,
}

impl ReachableItems {
    /// Nothing reachable yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a device function; a second function of the same name is an error.
    pub fn add(&mut self, function: FunctionSource) -> Result<(), LowerError> {
        if let Some(existing) = self.functions.get(&function.name) {
            if *existing != function {
                return Err(LowerError::new(
                    function.span,
                    format!(
                        "two different device functions named `{}` are reachable from this kernel; rename one",
                        function.name
                    ),
                ));
            }
        }
        self.functions.insert(function.name.clone(), function);
        Ok(())
    }

    /// Rewrites the calls of every reachable function and of `kernel` that pass a call's
    /// tuple or `Option` result straight on (see `lower::tuple_arguments`).
    pub fn pass_on_tuple_results(&mut self, kernel: &mut FunctionSource) {
        let signatures = super::tuple_arguments::Signatures::of(self.functions.values());
        for function in self.functions.values_mut() {
            signatures.pass_on_tuple_results(function);
        }
        signatures.pass_on_tuple_results(kernel);
    }

    /// The device function called `name`.
    pub fn get(&self, name: &str) -> Option<&FunctionSource> {
        self.functions.get(name)
    }

    /// Adds the layout of a `#[derive(DeviceCopy)]` struct.
    pub fn add_struct(&mut self, layout: StructLayout) {
        self.structs.insert(layout.name.to_owned(), layout);
    }

    /// The layout of the struct called `name`.
    pub fn get_struct(&self, name: &str) -> Option<&StructLayout> {
        self.structs.get(name)
    }

    /// The instances of the generic struct `base` whose layouts are known (those the
    /// kernel and the functions it reaches name), by name.
    pub fn instances_of(&self, base: &str) -> Vec<&StructLayout> {
        let mut found: Vec<&StructLayout> = self
            .structs
            .values()
            .filter(|l| !l.is_generic_base() && crate::layout::base_name(l.name) == base)
            .filter(|l| l.name != base)
            .collect();
        found.sort_by_key(|l| l.name);
        found
    }

    /// A type as written, resolved: a scalar (enums are their integer representation) or a
    /// struct.
    pub fn resolve_value(
        &self,
        spec: &Specialization,
        ty: &ValueType,
        span: Span,
    ) -> Result<Resolved, LowerError> {
        match ty {
            ValueType::Struct(name) => {
                let layout = self.struct_layout(name, span)?;
                Ok(match layout.enum_repr {
                    Some(repr) => Resolved::Scalar(repr),
                    None => Resolved::Struct(layout.name),
                })
            }
            ValueType::Tuple(elements) => {
                let fields = elements
                    .iter()
                    .map(|element| self.field_type(spec, element, span))
                    .collect::<Result<Vec<_>, _>>()?;
                let layout = tuple_layout_of(&fields).ok_or_else(|| {
                    LowerError::new(
                        span,
                        format!("tuples in device-function signatures have 1 to {MAX_TUPLE_ELEMENTS} elements"),
                    )
                })?;
                Ok(Resolved::Struct(layout.name))
            }
            other => spec.resolve(other, span).map(Resolved::Scalar),
        }
    }

    /// A type as a field of a tuple holds it: a scalar (an enum is its integer
    /// representation), a struct, or an array of either (`Option<Hit>` is `(bool, Hit)`).
    pub fn field_type(
        &self,
        spec: &Specialization,
        ty: &ValueType,
        span: Span,
    ) -> Result<FieldType, LowerError> {
        match ty {
            ValueType::Array { elem, len } => Ok(FieldType::Array {
                elem: Box::leak(Box::new(self.field_type(spec, elem, span)?)),
                len: spec.array_len(len, span)? as usize,
            }),
            ValueType::Struct(name) => {
                let layout = self.struct_layout(name, span)?;
                Ok(match layout.enum_repr {
                    Some(repr) => FieldType::Scalar(repr),
                    None => FieldType::Struct(interned_struct(layout)),
                })
            }
            other => spec.resolve(other, span).map(FieldType::Scalar),
        }
    }

    /// A type that must be a scalar here, resolved (an enum is its integer representation).
    pub fn scalar(
        &self,
        spec: &Specialization,
        ty: &ValueType,
        span: Span,
    ) -> Result<Scalar, LowerError> {
        match self.resolve_value(spec, ty, span)? {
            Resolved::Scalar(scalar) => Ok(scalar),
            Resolved::Struct(name) => Err(LowerError::new(
                span,
                format!("`{name}` is a struct; a scalar is needed here"),
            )),
        }
    }

    /// The discriminant of `ty::variant`, as a literal of the enum's representation, or the
    /// associated constant `ty::variant` of one of a struct's `#[device]` impl blocks.
    pub fn variant(&self, ty: &str, variant: &str, span: Span) -> Result<Literal, LowerError> {
        let layout = self.struct_layout(ty, span)?;
        if let (Some(repr), Some(value)) = (layout.enum_repr, layout.variant(variant)) {
            return Ok(Literal::Int {
                bits: value as u64,
                ty: repr,
            });
        }
        // `Circle::SIDES`: the path reads like a variant, but names an associated constant of
        // one of the struct's `#[device]` impl blocks (inherent or of a user trait).
        if let Some(constant) =
            super::generic_structs::associated_constant(ty, variant).filter(|c| c.len.is_none())
        {
            return Ok(constant.literal());
        }
        Err(LowerError::new(
            span,
            format!(
                "`{ty}::{variant}` is neither a variant of a `DeviceCopy` enum nor a scalar \
                 constant of a `#[device]` impl block of `{ty}`"
            ),
        ))
    }

    /// The layout of the struct called `name`, or an error naming the fix.
    pub fn struct_layout(&self, name: &str, span: Span) -> Result<&StructLayout, LowerError> {
        let tuple = || {
            name.starts_with('(')
                .then(|| tuple_layout_named(name))
                .flatten()
        };
        self.get_struct(name).or_else(tuple).ok_or_else(|| {
            let message = match name.contains('<') && !name.starts_with('(') {
                // A generic struct's instance that only a generic function's `Pair<T>`
                // names: rustc laid out the instances the program names.
                true => format!("no layout for `{name}`: the program names this instance nowhere the kernel reaches (a generic function's or kernel's `{}<T>` has an instance's layout where the instance is named): name it in the kernel or a function it calls, `let p: {name} = ..`, `{}::<..> {{ .. }}` or a parameter of that type", crate::layout::base_name(name), crate::layout::base_name(name)),
                false => format!("no layout for the struct `{name}`: derive it with `#[derive(DeviceCopy)]` and `#[repr(C)]`"),
            };
            LowerError::new(span, message)
        })
    }
}
