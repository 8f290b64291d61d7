//! Generic structs in the signatures of the functions a body calls: `total<T>(ps:
//! &[Pair<T>])` called with a `&[Pair<f32>]` binds `T = f32`, as rustc infers it; a method of
//! `impl<T> Pair<T>` takes `T` from its receiver's instance, `Pair::<f32>::new(..)` from the
//! type's arguments, and a result `-> Pair<T>` names the instance the bound values give.

use super::{Constraint, InferTy, Inference};
use crate::ast::{Expr, ExprKind, FunctionSource, GenericKind, ParamType, ValueType};
use crate::ir;
use crate::layout::{instance_name, split_instance};
use crate::lower::error::LowerError;
use crate::Span;

/// Whether the struct type `name` in `function`'s signature names one of its generic
/// parameters (`Pair<T>`), so a call decides its instance.
pub(super) fn names_parameters(function: &FunctionSource, name: &str) -> bool {
    split_instance(name)
        .1
        .iter()
        .any(|arg| function.generics.iter().any(|g| g.name == *arg))
}

/// The struct pattern a parameter's type writes with the function's parameters: its value,
/// array or slice element or reference target (`Pair<T>`, `[Pair<T>; N]`, `&[Pair<T>]`,
/// `&Pair<T>`).
pub(super) fn parameter_pattern<'p>(
    function: &FunctionSource,
    ty: &'p ParamType,
) -> Option<&'p str> {
    let name = match ty {
        ParamType::Value(ValueType::Array { elem, .. }) => match &**elem {
            ValueType::Struct(name) => name,
            _ => return None,
        },
        ParamType::Value(ValueType::Struct(name))
        | ParamType::Slice {
            elem: ValueType::Struct(name),
            ..
        }
        | ParamType::Reference {
            target: ValueType::Struct(name),
            len: None,
            ..
        } => name,
        _ => return None,
    };
    names_parameters(function, name).then_some(name.as_str())
}

impl Inference<'_> {
    /// Binds the parameters of `function` that the struct pattern `pattern` (`Pair<T>`)
    /// names from the instance `given` (`Pair<f32>`): a type parameter's variable to the
    /// scalar, a const parameter to the integer (kept in `consts`).
    pub(super) fn bind_instance(
        &mut self,
        function: &FunctionSource,
        pattern: &str,
        given: &str,
        types: &[(String, usize)],
        consts: &mut Vec<(String, ir::Literal)>,
        span: Span,
    ) -> Result<(), LowerError> {
        let (pattern_base, pattern_args) = split_instance(pattern);
        let (given_base, given_args) = split_instance(given);
        let wrong = || {
            LowerError::new(
                span,
                format!(
                    "`{}` takes a `{pattern}` here, not a `{given}`",
                    function.name
                ),
            )
        };
        if pattern_base != given_base || pattern_args.len() != given_args.len() {
            return Err(wrong());
        }
        for (wanted, arg) in pattern_args.iter().zip(&given_args) {
            if wanted == arg {
                continue;
            }
            let Some(generic) = function.generics.iter().find(|g| g.name == *wanted) else {
                return Err(wrong());
            };
            match &generic.kind {
                GenericKind::Type { .. } => {
                    let scalar = crate::Scalar::from_rust_name(arg).ok_or_else(wrong)?;
                    let var = types
                        .iter()
                        .find(|(n, _)| n == wanted)
                        .map(|(_, v)| *v)
                        .ok_or_else(wrong)?;
                    self.require(var, scalar, span)?;
                }
                GenericKind::Const(ty) => {
                    let value: i128 = arg.parse().map_err(|_| wrong())?;
                    let literal = ir::Literal::Int {
                        bits: value as u64,
                        ty: *ty,
                    };
                    match consts.iter().find(|(n, _)| n == wanted) {
                        Some((_, bound)) if *bound != literal => return Err(wrong()),
                        Some(_) => {}
                        None => consts.push((wanted.to_string(), literal)),
                    }
                }
            }
        }
        Ok(())
    }

    /// The instance the struct pattern `pattern` of `function`'s signature names with the
    /// values the call bound (`Pair<T>` with `T = f32` is `Pair<f32>`), or an error naming
    /// the turbofish that would decide it.
    pub(super) fn bound_instance(
        &mut self,
        function: &FunctionSource,
        pattern: &str,
        types: &[(String, usize)],
        consts: &[(String, ir::Literal)],
        span: Span,
    ) -> Result<String, LowerError> {
        let (base, args) = split_instance(pattern);
        if let Some(name) = self.only_fitting_instance(pattern, types, consts) {
            return Ok(name);
        }
        let mut values = Vec::new();
        for arg in args {
            let var = types.iter().find(|(n, _)| n == arg).map(|(_, v)| *v);
            let constant = consts.iter().find(|(n, _)| n == arg).map(|(_, v)| *v);
            let value = match (var, constant) {
                (Some(var), _) => {
                    let root = self.find(var);
                    match self.constraint[root] {
                        Constraint::Known(scalar) => scalar.rust_name().to_owned(),
                        _ => {
                            return Err(LowerError::new(
                                span,
                                format!("the type `{arg}` of the `{pattern}` that `{}` returns is not known here: give it with the struct's arguments (`{base}::<f32>::..`) or a typed value (`2.0f32`)", function.name),
                            ))
                        }
                    }
                }
                (None, Some(literal)) => crate::lower::instance_names::literal_text(literal),
                (None, None) => arg.to_owned(),
            };
            values.push(value);
        }
        Ok(instance_name(base, &values))
    }

    /// The one instance of `pattern`'s struct the program names whose arguments the
    /// call's variables may still take (`Duo<T>` with `T` an unsuffixed float, where
    /// `Duo<f32>` and `Duo<u32>` are named: `Duo<f32>`), its variables then bound to it;
    /// `None` when none or several fit.
    fn only_fitting_instance(
        &mut self,
        pattern: &str,
        types: &[(String, usize)],
        consts: &[(String, ir::Literal)],
    ) -> Option<String> {
        let (base, args) = split_instance(pattern);
        let library = self.library;
        let mut fitting = Vec::new();
        for candidate in library.instances_of(base) {
            let (_, given) = split_instance(candidate.name);
            if given.len() != args.len() {
                continue;
            }
            let mut binds = Vec::new();
            let fits = args.iter().zip(&given).all(|(arg, value)| {
                let var = types.iter().find(|(n, _)| n == arg).map(|(_, v)| *v);
                let constant = consts.iter().find(|(n, _)| n == arg).map(|(_, v)| *v);
                match (var, constant) {
                    (Some(var), _) => match crate::Scalar::from_rust_name(value) {
                        Some(scalar) => {
                            let root = self.find(var);
                            let fits =
                                super::merge(self.constraint[root], Constraint::Known(scalar))
                                    .is_some();
                            binds.push((var, scalar));
                            fits
                        }
                        None => false,
                    },
                    (None, Some(literal)) => {
                        crate::lower::instance_names::literal_text(literal) == *value
                    }
                    (None, None) => arg == value,
                }
            });
            if fits {
                fitting.push((candidate.name, binds));
            }
        }
        match fitting.as_slice() {
            [(name, binds)] => {
                let name = (*name).to_owned();
                for (var, scalar) in binds.clone() {
                    // It fits (checked above), so this cannot fail.
                    self.require(var, scalar, Span::default()).ok()?;
                }
                Some(name)
            }
            _ => None,
        }
    }

    /// The instance of a generic struct an argument passed for a parameter of pattern type
    /// `ty` holds (`Pair<f32>` of `p`, `&p`, `ps` or a reference passed on), with the
    /// mutability a `&mut` parameter needs checked.
    pub(super) fn argument_instance(
        &mut self,
        callee: &str,
        param: &crate::ast::Param,
        arg: &Expr,
    ) -> Result<&'static str, LowerError> {
        let needs_mut = matches!(
            param.ty,
            ParamType::Slice { mutable: true, .. } | ParamType::Reference { mutable: true, .. }
        );
        let not_mut = || {
            LowerError::new(
                arg.span,
                format!(
                    "`{callee}` writes through `{}`: pass a `&mut` one",
                    param.name
                ),
            )
        };
        let given = match (&param.ty, &arg.kind) {
            (ParamType::Reference { .. }, ExprKind::Reference { mutable, place }) => {
                if needs_mut && !mutable {
                    return Err(not_mut());
                }
                self.expr(place)?
            }
            _ => self.expr(arg)?,
        };
        match (&param.ty, given) {
            (ParamType::Slice { .. }, InferTy::StructSlice { name, mutable }) => {
                if needs_mut && !mutable {
                    return Err(not_mut());
                }
                Ok(name)
            }
            (ParamType::Value(ValueType::Array { .. }), InferTy::StructArray(name)) => Ok(name),
            (ParamType::Value(_) | ParamType::Reference { .. }, InferTy::Struct(name)) => Ok(name),
            _ => Err(LowerError::new(
                arg.span,
                format!(
                    "argument `{}` of `{callee}` has the wrong kind: a generic struct's value, array, reference or slice",
                    param.name
                ),
            )),
        }
    }
}
