//! Closures passed to `#[device]` functions: `reduce(x, |a, b| a.max(b))` where `reduce`
//! takes `op: F` with `F: Fn(f32, f32) -> f32`.
//!
//! Rust monomorphises such a function per closure type and inlines the closure; so does
//! cudajit. Each call with a closure makes an instance of the function for that closure
//! ([`ClosureArg`], part of the instance's identity): its closure parameter is replaced by
//! one hidden parameter per name the closure captures, and every `op(a, b)` in its body by
//! the closure's body, in a block that first evaluates the arguments, then binds the
//! captured names to the hidden parameters and the closure's parameters to the arguments
//! (so the body sees its own environment whatever the function's locals are called). The
//! rewritten function is lowered like any other: no function pointer, no indirect call,
//! and LLVM inlines the instance as it inlines every device function. `Fn` closures only
//! read what they capture, so the values cross by value (slices as slices).
//!
//! The rewrite works on the captured syntax's serde form, so that it reaches every
//! `op(..)` wherever the syntax nests it, without a walker that every new construct must
//! extend.

use serde_json::Value;

use super::LowerError;
use crate::ast::{
    Block, ClosureParam, Expr, ExprKind, FunctionSource, Param, ParamType, Stmt, ValueType,
};
use crate::constant::ConstantValue;
use crate::{Scalar, Span};

/// Where closures may appear, for a closure anywhere else.
pub(super) const CLOSURE_PLACES: &str = "closures are bound with `let` and called (`let f = |x: f32| x * s; f(v)`), or passed to a `#[device]` function's `F: Fn(..) -> ..` parameter";

/// A closure a call passes for the callee's closure parameter `param`, with the types of
/// what it captures as the caller sees them.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct ClosureArg {
    pub param: String,
    /// Its parameters, annotated types resolved in the caller's specialisation.
    pub params: Vec<ClosureParam>,
    pub body: Expr,
    pub captures: Vec<(String, CaptureType)>,
    /// The caller's Rust constants the body names (scalars and tables): the instance's own
    /// constants too, so the body sees the caller's values.
    pub constants: Vec<ConstantValue>,
}

/// How a captured name crosses into the instance.
#[derive(Clone, Debug, PartialEq)]
pub(super) enum CaptureType {
    Scalar(Scalar),
    Slice { elem: Scalar, mutable: bool },
    Struct(String),
}

/// The hidden parameter that carries `capture` of the closure for `param`: `$` cannot
/// start a Rust name, so it never meets the function's own.
fn hidden(param: &str, capture: &str) -> String {
    format!("${param}.{capture}")
}

/// `source` made for `closures`, named `name`: closure parameters replaced by the hidden
/// parameters of their captures, closure calls by the closures' bodies.
pub(super) fn instantiate(
    source: &FunctionSource,
    closures: &[ClosureArg],
    name: String,
) -> Result<FunctionSource, LowerError> {
    let mut params = Vec::new();
    for param in &source.params {
        let ParamType::Closure { .. } = param.ty else {
            params.push(param.clone());
            continue;
        };
        let closure = closures
            .iter()
            .find(|c| c.param == param.name)
            .ok_or_else(|| {
                LowerError::new(
                    param.span,
                    format!("`{}` takes a closure for `{}`", source.name, param.name),
                )
            })?;
        for (capture, ty) in &closure.captures {
            params.push(Param {
                name: hidden(&param.name, capture),
                ty: match ty {
                    CaptureType::Scalar(s) => ParamType::Value(ValueType::Scalar(*s)),
                    CaptureType::Slice { elem, mutable } => ParamType::Slice {
                        elem: ValueType::Scalar(*elem),
                        mutable: *mutable,
                    },
                    CaptureType::Struct(name) => ParamType::Value(ValueType::Struct(name.clone())),
                },
                mutable: false,
                comptime: false,
                span: param.span,
            });
        }
    }
    let mut constants = source.constants.clone();
    for constant in closures.iter().flat_map(|c| &c.constants) {
        match constants.iter().find(|c| c.name == constant.name) {
            None => constants.push(*constant),
            Some(own) if own == constant => {}
            Some(_) => {
                return Err(LowerError::new(
                    closure_span(closures, constant.name).unwrap_or(source.span),
                    format!(
                        "the closure names the constant `{}`, which means another value where `{}` is defined: use one name for one value, or pass the value as an argument",
                        constant.name, source.name
                    ),
                ))
            }
        }
    }
    let mut body = serde_json::to_value(&source.body).map_err(internal(source.span))?;
    let mut rewriter = Rewriter {
        closures,
        hidden: closures
            .iter()
            .flat_map(|c| c.captures.iter().map(|(name, _)| hidden(&c.param, name)))
            .collect(),
        temps: 0,
        error: None,
    };
    rewriter.rewrite(&mut body);
    if let Some(error) = rewriter.error {
        return Err(error);
    }
    Ok(FunctionSource {
        name,
        params,
        constants,
        body: serde_json::from_value(body).map_err(internal(source.span))?,
        ..source.clone()
    })
}

/// Where the closure that names `constant` is written.
fn closure_span(closures: &[ClosureArg], constant: &str) -> Option<Span> {
    closures
        .iter()
        .find(|c| c.constants.iter().any(|k| k.name == constant))
        .map(|c| c.body.span)
}

fn internal(span: Span) -> impl Fn(serde_json::Error) -> LowerError {
    move |error| LowerError::new(span, format!("internal: rewriting a closure call: {error}"))
}

struct Rewriter<'c> {
    closures: &'c [ClosureArg],
    /// The instance's hidden parameters (`$op.scale`).
    hidden: Vec<String>,
    temps: usize,
    error: Option<LowerError>,
}

impl Rewriter<'_> {
    /// Replaces every `ClosureCall` in `value`, innermost first (`op(op(x))`).
    fn rewrite(&mut self, value: &mut Value) {
        match value {
            Value::Array(items) => items.iter_mut().for_each(|item| self.rewrite(item)),
            Value::Object(fields) => {
                fields.values_mut().for_each(|field| self.rewrite(field));
                // A closure this function passes on (`inner(|v| op(v) + b, x)`, or `op`
                // itself, `|a| op(a)`) now holds `op`'s body, which reads the hidden
                // parameters: the closure captures them too, so the callee's instance
                // is given them.
                if let Some(Value::Object(closure)) = fields.get_mut("Closure") {
                    self.capture_hidden(closure);
                }
                if fields.contains_key("kind") && fields.contains_key("span") {
                    if let Some(call) = fields.get("kind").and_then(|k| k.get("ClosureCall")) {
                        let span = fields.get("span").cloned().unwrap_or(Value::Null);
                        match self.inline(call.clone(), span) {
                            Ok(expr) => *value = expr,
                            Err(error) => {
                                self.error.get_or_insert(error);
                            }
                        }
                    }
                }
            }
            _ => {}
        }
    }

    /// Adds to a passed closure's captures the hidden parameters its body reads.
    fn capture_hidden(&mut self, closure: &mut serde_json::Map<String, Value>) {
        let Some(body) = closure
            .get("body")
            .cloned()
            .and_then(|b| serde_json::from_value::<Expr>(b).ok())
        else {
            return;
        };
        let span = serde_json::to_value(body.span).unwrap_or(Value::Null);
        let Some(Value::Array(captures)) = closure.get_mut("captures") else {
            return;
        };
        for name in body.variables() {
            let read = self.hidden.contains(&name);
            let listed = captures.iter().any(|c| {
                c.get("kind").and_then(|k| k.get("Var")) == Some(&Value::from(name.as_str()))
            });
            if read && !listed {
                captures.push(serde_json::json!({ "kind": { "Var": name }, "span": span }));
            }
        }
    }

    /// The block that `callee(args)` becomes.
    fn inline(&mut self, call: Value, span: Value) -> Result<Value, LowerError> {
        let span: Span = serde_json::from_value(span).unwrap_or_default();
        let callee = call
            .get("callee")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let args: Vec<Expr> = call
            .get("args")
            .cloned()
            .map(serde_json::from_value)
            .transpose()
            .map_err(internal(span))?
            .unwrap_or_default();
        let Some(closure) = self.closures.iter().find(|c| c.param == callee) else {
            return Err(LowerError::new(
                span,
                format!("internal: no closure for `{callee}`"),
            ));
        };
        if args.len() != closure.params.len() {
            return Err(LowerError::new(
                span,
                format!(
                    "the closure for `{callee}` takes {} arguments, {} given",
                    closure.params.len(),
                    args.len()
                ),
            ));
        }
        let var = |name: &str| Expr {
            kind: ExprKind::Var(name.to_owned()),
            span,
        };
        let let_ = |name: &str, ty: Option<ValueType>, init: Expr| Stmt::Let {
            name: name.to_owned(),
            mutable: false,
            ty,
            init: Some(init),
            span,
        };
        let mut stmts = Vec::new();
        // The arguments first, in the function's scope (they may name its locals).
        let mut temps = Vec::new();
        for arg in args {
            self.temps += 1;
            let temp = format!("$closure.arg{}", self.temps);
            stmts.push(let_(&temp, None, arg));
            temps.push(temp);
        }
        for (capture, ty) in &closure.captures {
            let passed = var(&hidden(callee, capture));
            let init = match ty {
                // A slice local is a view of the whole hidden slice.
                CaptureType::Slice { mutable, .. } => Expr {
                    kind: ExprKind::SubSlice {
                        base: Box::new(passed),
                        start: None,
                        end: None,
                        mutable: *mutable,
                    },
                    span,
                },
                _ => passed,
            };
            stmts.push(let_(capture, None, init));
        }
        for (param, temp) in closure.params.iter().zip(&temps) {
            stmts.push(let_(&param.name, param.ty.clone(), var(temp)));
        }
        let block = Expr {
            kind: ExprKind::Block(Block {
                stmts,
                tail: Some(Box::new(closure.body.clone())),
                span,
            }),
            span,
        };
        serde_json::to_value(block).map_err(internal(span))
    }
}
