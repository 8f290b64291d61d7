//! Struct and tuple values: literals, field reads, struct-typed values checked against a
//! layout, tuple results of device functions.

use super::{Constraint, InferTy, Inference};
use crate::ast::{Expr, ExprKind, ValueType};
use crate::lower::error::LowerError;
use crate::{Scalar, Span};

impl Inference<'_> {
    /// How a field of type `ty` reads: a scalar (an enum as its integer), a struct, or an
    /// array of scalars or structs.
    pub(super) fn field_type(
        &mut self,
        ty: &crate::layout::FieldType,
        span: Span,
    ) -> Result<InferTy, LowerError> {
        use crate::layout::FieldType;
        Ok(match ty {
            FieldType::Scalar(scalar) => InferTy::Scalar(self.known(*scalar)),
            FieldType::Struct(layout) => match layout.enum_repr {
                Some(repr) => InferTy::Scalar(self.known(repr)),
                None => InferTy::Struct(layout.name),
            },
            FieldType::Array { elem, .. } => match elem {
                FieldType::Scalar(scalar) => InferTy::Array(self.known(*scalar)),
                FieldType::Struct(layout) => match layout.enum_repr {
                    Some(repr) => InferTy::Array(self.known(repr)),
                    None => InferTy::StructArray(layout.name),
                },
                // `m: [[f32; M]; N]`: rows of scalars.
                FieldType::Array {
                    elem: FieldType::Scalar(scalar),
                    ..
                } => InferTy::Rows(self.known(*scalar)),
                FieldType::Array { .. } => {
                    return Err(LowerError::new(
                        span,
                        "arrays of arrays of structs or of arrays are not struct fields: use an array of arrays of scalars, or a flat array field indexed `[r * n + c]`",
                    ))
                }
            },
        })
    }

    /// The value of field `name` (of type `ty`) in a struct literal: a value of the field's
    /// scalar or struct type; for an array field, `[value; N]` or a local array.
    pub(super) fn field_value(
        &mut self,
        ty: &crate::layout::FieldType,
        value: &Expr,
        name: &str,
    ) -> Result<(), LowerError> {
        let wanted = self.field_type(ty, value.span)?;
        let wrong = || {
            LowerError::new(
                value.span,
                format!("the field `{name}` takes a value of its type"),
            )
        };
        match wanted {
            InferTy::Scalar(var) => {
                let v = self.scalar(value)?;
                self.unify(v, var, value.span)
            }
            InferTy::Struct(nested) => match self.expr(value)? {
                InferTy::Struct(given) if given == nested => Ok(()),
                _ => Err(wrong()),
            },
            InferTy::Array(elem) => match &value.kind {
                ExprKind::Repeat {
                    value: element,
                    len,
                } => {
                    let v = self.scalar(element)?;
                    self.repeat_length(len)?;
                    self.unify(v, elem, element.span)
                }
                _ => match self.expr(value)? {
                    InferTy::Array(given) => self.unify(given, elem, value.span),
                    _ => Err(LowerError::new(
                        value.span,
                        format!("the array field `{name}` takes `[value; N]` or a local array"),
                    )),
                },
            },
            InferTy::StructArray(nested) => match self.repeated(value)? {
                Some(InferTy::Struct(given)) if given == nested => Ok(()),
                Some(_) => Err(wrong()),
                None => match self.expr(value)? {
                    InferTy::StructArray(given) if given == nested => Ok(()),
                    _ => Err(LowerError::new(
                        value.span,
                        format!("the array field `{name}` takes `[value; N]` or a local array"),
                    )),
                },
            },
            _ => Err(wrong()),
        }
    }

    /// The `N` of an array field's `[value; N]`, a `usize`.
    fn repeat_length(&mut self, len: &Expr) -> Result<(), LowerError> {
        let l = self.scalar(len)?;
        self.require(l, Scalar::Usize, len.span)
    }

    /// For a field's value `[element; N]`: the element's type (`N` checked); `None` for
    /// any other value.
    fn repeated(&mut self, value: &Expr) -> Result<Option<InferTy>, LowerError> {
        match &value.kind {
            ExprKind::Repeat {
                value: element,
                len,
            } => {
                self.repeat_length(len)?;
                self.expr(element).map(Some)
            }
            _ => Ok(None),
        }
    }

    /// `Name { field: value, .. }`: every field of the `#[derive(DeviceCopy)]` struct once,
    /// each value of the field's type.
    pub(super) fn struct_literal(
        &mut self,
        ty: &str,
        fields: &[(String, Expr)],
        span: Span,
    ) -> Result<&'static str, LowerError> {
        let layout = *self.library.struct_layout(ty, span)?;
        if layout.is_generic_base() {
            return self.generic_struct_literal(ty, fields, span);
        }
        if layout.enum_repr.is_some() {
            return Err(LowerError::new(
                span,
                format!("`{ty}` is an enum, not a struct"),
            ));
        }
        for (index, (name, value)) in fields.iter().enumerate() {
            let (_, member) = layout.field(name).ok_or_else(|| {
                LowerError::new(value.span, format!("`{ty}` has no field `{name}`"))
            })?;
            if fields[..index].iter().any(|(earlier, _)| earlier == name) {
                return Err(LowerError::new(
                    value.span,
                    format!("the field `{name}` is given twice"),
                ));
            }
            self.field_value(&member.ty, value, name)?;
        }
        let missing: Vec<&str> = layout
            .fields
            .iter()
            .filter(|f| !fields.iter().any(|(name, _)| name == f.name))
            .map(|f| f.name)
            .collect();
        if !missing.is_empty() {
            return Err(LowerError::new(
                span,
                format!("missing fields of `{ty}`: {}", missing.join(", ")),
            ));
        }
        Ok(layout.name)
    }

    /// `Pair { a: x, b: 2.0 }` of a generic struct without its arguments: the one instance
    /// the kernel names whose fields take these values (Rust infers the arguments from the
    /// fields and the uses; here the fields decide, among the instances whose layouts rustc
    /// computed for the program).
    fn generic_struct_literal(
        &mut self,
        base: &str,
        fields: &[(String, Expr)],
        span: Span,
    ) -> Result<&'static str, LowerError> {
        use crate::layout::FieldType;
        let mut values = Vec::new();
        for (name, value) in fields {
            let ty = match self.repeated(value)? {
                Some(InferTy::Scalar(v)) => InferTy::Array(v),
                Some(InferTy::Struct(s)) => InferTy::StructArray(s),
                Some(_) => {
                    return Err(LowerError::new(
                        value.span,
                        format!("the array field `{name}` takes `[value; N]` or a local array"),
                    ))
                }
                None => self.expr(value)?,
            };
            values.push((name.as_str(), ty, value.span));
        }
        let candidates: Vec<&'static str> = self
            .library
            .instances_of(base)
            .into_iter()
            .map(|l| l.name)
            .collect();
        let mut fitting = Vec::new();
        for candidate in &candidates {
            let layout = *self.library.struct_layout(candidate, span)?;
            let fits = layout.fields.len() == values.len()
                && values.iter().all(|(name, ty, _)| {
                    layout
                        .field(name)
                        .is_some_and(|(_, field)| self.fits(&field.ty, ty))
                });
            if fits {
                fitting.push(layout);
            }
        }
        let layout = match fitting.as_slice() {
            [one] => *one,
            [] => {
                return Err(LowerError::new(
                    span,
                    format!(
                        "no instance of the generic struct `{base}` this kernel names takes these fields (it names {}): give the arguments, `{base}::<f32> {{ .. }}`, or name the type where the kernel sees it (`let p: {base}<f32> = ..`, a parameter)",
                        if candidates.is_empty() { "none".to_owned() } else { candidates.join(", ") }
                    ),
                ))
            }
            several => {
                let names: Vec<&str> = several.iter().map(|l| l.name).collect();
                return Err(LowerError::new(
                    span,
                    format!(
                        "`{base} {{ .. }}` could be any of {}: give the arguments, `{}::<..> {{ .. }}`, or type a field's value (`2.0f32`)",
                        names.join(", "),
                        base
                    ),
                ));
            }
        };
        for (name, ty, value_span) in values {
            let Some((_, field)) = layout.field(name) else {
                continue;
            };
            match (&field.ty, ty) {
                (FieldType::Scalar(s), InferTy::Scalar(v)) => self.require(v, *s, value_span)?,
                (FieldType::Struct(l), InferTy::Scalar(v)) => {
                    if let Some(repr) = l.enum_repr {
                        self.require(v, repr, value_span)?;
                    }
                }
                (
                    FieldType::Array {
                        elem: FieldType::Scalar(s),
                        ..
                    },
                    InferTy::Array(v),
                ) => self.require(v, *s, value_span)?,
                _ => {}
            }
        }
        Ok(layout.name)
    }

    /// Whether a value of type `ty` (its variables not yet decided) may be a field of type
    /// `field`.
    fn fits(&mut self, field: &crate::layout::FieldType, ty: &InferTy) -> bool {
        use crate::layout::FieldType;
        let scalar_fits = |this: &mut Self, var: usize, scalar: Scalar| {
            let root = this.find(var);
            super::merge(this.constraint[root], Constraint::Known(scalar)).is_some()
        };
        match (field, ty) {
            (FieldType::Scalar(s), InferTy::Scalar(v)) => scalar_fits(self, *v, *s),
            (FieldType::Struct(l), InferTy::Scalar(v)) => {
                l.enum_repr.is_some_and(|repr| scalar_fits(self, *v, repr))
            }
            (FieldType::Struct(l), InferTy::Struct(given)) => l.name == *given,
            (
                FieldType::Array {
                    elem: FieldType::Scalar(s),
                    ..
                },
                InferTy::Array(v),
            ) => scalar_fits(self, *v, *s),
            (FieldType::Array { elem, .. }, InferTy::StructArray(given)) => {
                matches!(elem, FieldType::Struct(l) if l.name == *given)
            }
            _ => false,
        }
    }

    /// A value the function returns as the struct (or tuple) `name`: a struct value of
    /// that type, or, for a tuple, `(a, b, ..)` with elements of its element types.
    pub(super) fn struct_value(
        &mut self,
        value: &Expr,
        name: &'static str,
    ) -> Result<(), LowerError> {
        if let ExprKind::Tuple(elements) = &value.kind {
            let layout = self.library.struct_layout(name, value.span)?;
            if !name.starts_with('(') || layout.fields.len() != elements.len() {
                return Err(LowerError::new(
                    value.span,
                    format!("this function returns a `{name}`"),
                ));
            }
            for (element, field) in elements.iter().zip(layout.fields) {
                self.field_value(&field.ty, element, field.name)?;
            }
            return Ok(());
        }
        match self.expr(value)? {
            InferTy::Struct(given) if given == name => Ok(()),
            _ => Err(LowerError::new(
                value.span,
                format!("this function returns a `{name}`"),
            )),
        }
    }

    /// The tuple type a call of `callee` returns: its element types with the call's type
    /// parameters, which the arguments must have decided.
    pub(super) fn tuple_result(
        &mut self,
        callee: &str,
        elements: &[ValueType],
        types: &[(String, usize)],
        span: Span,
    ) -> Result<&'static str, LowerError> {
        let mut fields = Vec::new();
        for element in elements {
            let field = match element {
                ValueType::Generic(name) => {
                    let var = types.iter().find(|(n, _)| n == name).map(|(_, v)| *v);
                    let root = var.map(|v| self.find(v));
                    match root.map(|r| self.constraint[r]) {
                        Some(Constraint::Known(scalar)) => crate::layout::FieldType::Scalar(scalar),
                        _ => {
                            return Err(LowerError::new(
                                span,
                                format!("the type `{name}` of the tuple `{callee}` returns is not known here: give it with a turbofish (`{callee}::<f32>(..)`)"),
                            ))
                        }
                    }
                }
                other => self.library.field_type(self.spec, other, span)?,
            };
            fields.push(field);
        }
        let layout = crate::layout::tuple_layout_of(&fields).ok_or_else(|| {
            LowerError::new(
                span,
                format!("`{callee}` returns a tuple of too many elements"),
            )
        })?;
        Ok(layout.name)
    }
}
