//! A call's tuple or `Option` result passed straight on: `g(f(x))` where `g` takes a
//! tuple (or an `Option`, the tuple `(bool, T)`) and `f` returns one.
//!
//! A device function's tuple parameter is its elements (`t.0`, `t.1`, .. in its
//! signature), and the macro expands the tuples it can see (literals, tuple locals) into
//! elements at the call. A call's result it cannot see: the macro does not know what `f`
//! returns. Here, with every signature known, such an argument becomes a hidden local and
//! its fields: `g(a, f(x))` is lowered as `{ let $a = a; let $t = f(x); g($a, $t.0, $t.1) }`,
//! the earlier calls among the arguments bound first so that they still run before `f`,
//! in Rust's order. Done before inference, so inference and lowering see one tree.
//!
//! With the signatures at hand, the value half of a `None` the macro passed (a typeless
//! zero, since it cannot see `T`) becomes `false` where the parameter is a `bool`
//! (`f(None)` for an `Option<bool>`).

use std::collections::HashMap;

use crate::ast::{Block, Expr, ExprKind, FunctionSource, Literal, ParamType, Stmt, ValueType};
use crate::Scalar;

/// The prefix of the hidden locals (a `$` never starts a Rust name).
const HIDDEN: &str = "$passed_on";

/// What the rewrite needs of a callee: its parameters' tuple groups and result.
struct Signature {
    /// For each parameter as the user wrote it: how many declared parameters it is
    /// (`1`, or a tuple's arity), and whether it is a scalar (an argument that may be
    /// bound to a local first).
    groups: Vec<(usize, bool)>,
    /// The arity of a tuple result.
    tuple_result: Option<usize>,
    /// Which declared parameters are `bool`s.
    bools: Vec<bool>,
    /// The type of each declared parameter that holds a struct or an array by value.
    values: Vec<Option<ValueType>>,
}

fn signature(function: &FunctionSource) -> Signature {
    let mut groups: Vec<(usize, bool)> = Vec::new();
    let mut tuple: Option<&str> = None;
    for param in &function.params {
        // A tuple parameter's elements are `name.0`, `name.1`, ..
        if let Some((base, index)) = param.name.rsplit_once('.') {
            if index != "0" && tuple == Some(base) {
                if let Some(last) = groups.last_mut() {
                    last.0 += 1;
                }
                continue;
            }
            if index == "0" {
                tuple = Some(base);
                groups.push((1, false));
                continue;
            }
        }
        tuple = None;
        let scalar = matches!(
            param.ty,
            ParamType::Value(ValueType::Scalar(_) | ValueType::Generic(_))
        );
        groups.push((1, scalar));
    }
    let tuple_result = match &function.result {
        Some(ValueType::Tuple(elements)) => Some(elements.len()),
        _ => None,
    };
    let bools = function
        .params
        .iter()
        .map(|p| p.ty == ParamType::Value(ValueType::Scalar(Scalar::Bool)))
        .collect();
    let values = function
        .params
        .iter()
        .map(|p| match &p.ty {
            ParamType::Value(ty @ (ValueType::Struct(_) | ValueType::Array { .. })) => {
                Some(ty.clone())
            }
            _ => None,
        })
        .collect();
    Signature {
        groups,
        tuple_result,
        bools,
        values,
    }
}

/// The signatures of the device functions a kernel reaches, by name.
pub(crate) struct Signatures(HashMap<String, Signature>);

impl Signatures {
    pub(crate) fn of<'a>(functions: impl IntoIterator<Item = &'a FunctionSource>) -> Self {
        Signatures(
            functions
                .into_iter()
                .map(|f| (f.name.clone(), signature(f)))
                .collect(),
        )
    }

    /// Rewrites every call in `function`'s body that passes a call's tuple result to a
    /// tuple parameter.
    pub(crate) fn pass_on_tuple_results(&self, function: &mut FunctionSource) {
        if self
            .0
            .values()
            .any(|s| s.groups.iter().any(|(n, _)| *n > 1))
        {
            rewrite(function, &self.0);
        }
    }
}

fn rewrite(function: &mut FunctionSource, signatures: &HashMap<String, Signature>) {
    // The captured syntax's serde form is walked, as `Expr::variables` does, so that no
    // construct that nests calls is missed.
    let Ok(mut body) = serde_json::to_value(&function.body) else {
        return;
    };
    let mut rewriter = Rewriter {
        signatures,
        hidden: 0,
        changed: false,
    };
    rewriter.walk(&mut body);
    if rewriter.changed {
        if let Ok(rewritten) = serde_json::from_value(body) {
            function.body = rewritten;
        }
    }
}

/// The typeless zero the macro passes as an absent `Option`'s value.
fn is_absent(arg: &Expr) -> bool {
    matches!(
        arg.kind,
        ExprKind::Constant {
            ty: None,
            one: false
        }
    )
}

/// `args` with each absent value passed to a `bool` parameter `false`, and to a struct or
/// array parameter the zero of its type.
fn with_typed_absent(args: Vec<Expr>, signature: &Signature) -> Vec<Expr> {
    args.into_iter()
        .enumerate()
        .map(|(index, arg)| {
            if !is_absent(&arg) {
                return arg;
            }
            let kind = match (signature.bools.get(index), signature.values.get(index)) {
                (Some(true), _) => ExprKind::Lit(Literal::Bool(false)),
                (_, Some(Some(ty))) => ExprKind::Constant {
                    ty: Some(ty.clone()),
                    one: false,
                },
                _ => return arg,
            };
            Expr {
                kind,
                span: arg.span,
            }
        })
        .collect()
}

/// Whether an absent value in `args` needs its parameter's type.
fn has_typed_absent(args: &[Expr], signature: &Signature) -> bool {
    args.iter().enumerate().any(|(index, arg)| {
        is_absent(arg)
            && (signature.bools.get(index) == Some(&true)
                || signature.values.get(index).is_some_and(Option::is_some))
    })
}

/// Whether `block` is a call after hidden locals (`$` names, which no Rust name shadows):
/// a call rewritten here, or one whose `Option` arguments the macro bound first
/// (`f(Some(x + 1))`). Its statements may then move before the call that takes its value.
fn is_hidden(block: &Block) -> bool {
    !block.stmts.is_empty()
        && block.stmts.iter().all(|stmt| match stmt {
            Stmt::Let { name, .. } => name.starts_with('$'),
            Stmt::LetTuple { names, .. } => names.iter().all(|(name, _)| name.starts_with('$')),
            _ => false,
        })
        && matches!(
            block.tail.as_deref(),
            Some(Expr {
                kind: ExprKind::Call { .. },
                ..
            })
        )
}

/// In a list of statements, `let t = { let $a = ..; g(..) };` (a rewritten call as a
/// `let`'s value, which may be a tuple: a block's value cannot) becomes the hidden
/// locals' `let`s followed by `let t = g(..);`.
fn splice_bindings(items: &mut Vec<serde_json::Value>) {
    let is_let = |item: &serde_json::Value| {
        item.as_object()
            .is_some_and(|o| o.len() == 1 && (o.contains_key("Let") || o.contains_key("LetTuple")))
    };
    if !items.iter().any(is_let) {
        return;
    }
    let mut out = Vec::with_capacity(items.len());
    for item in items.drain(..) {
        if !is_let(&item) {
            out.push(item);
            continue;
        }
        let Ok(mut stmt) = serde_json::from_value::<Stmt>(item.clone()) else {
            out.push(item);
            continue;
        };
        let init = match &mut stmt {
            Stmt::Let {
                init: Some(init), ..
            } => init,
            Stmt::LetTuple { init, .. } => init,
            _ => {
                out.push(item);
                continue;
            }
        };
        let hidden = matches!(&init.kind, ExprKind::Block(block) if is_hidden(block));
        let ExprKind::Block(block) = &mut init.kind else {
            out.push(item);
            continue;
        };
        let (true, Some(call)) = (hidden, block.tail.take()) else {
            out.push(item);
            continue;
        };
        let stmts = std::mem::take(&mut block.stmts);
        *init = *call;
        out.extend(stmts.iter().filter_map(|s| serde_json::to_value(s).ok()));
        match serde_json::to_value(&stmt) {
            Ok(json) => out.push(json),
            Err(_) => out.push(item),
        }
    }
    *items = out;
}

/// The block a rewritten call used as a statement becomes, its call the last statement.
fn rewritten_statement(expr: Expr) -> Option<Block> {
    let ExprKind::Block(mut block) = expr.kind else {
        return None;
    };
    if !is_hidden(&block) {
        return None;
    }
    let call = block.tail.take()?;
    block.stmts.push(Stmt::Expr(*call));
    Some(block)
}

struct Rewriter<'a> {
    signatures: &'a HashMap<String, Signature>,
    /// Hidden locals made so far (their names' numbers).
    hidden: usize,
    /// Whether any call was rewritten.
    changed: bool,
}

impl Rewriter<'_> {
    /// Post-order, so that arguments are rewritten before the calls they are passed to.
    fn walk(&mut self, value: &mut serde_json::Value) {
        match value {
            serde_json::Value::Object(fields) => {
                fields.values_mut().for_each(|field| self.walk(field));
                let is_call = fields
                    .get("kind")
                    .and_then(|kind| kind.as_object())
                    .is_some_and(|kind| kind.contains_key("Call"));
                if is_call && fields.contains_key("span") {
                    let expr = serde_json::from_value::<Expr>(value.clone());
                    if let Ok(Some(rewritten)) = expr.map(|e| self.call(e)) {
                        self.changed = true;
                        if let Ok(json) = serde_json::to_value(rewritten) {
                            *value = json;
                        }
                    }
                } else if fields.len() == 1 && fields.contains_key("Expr") {
                    // A rewritten call of a function without a result, as a statement: a
                    // block of statements (a block's value would be an expression without
                    // effect).
                    if let Ok(Stmt::Expr(expr)) = serde_json::from_value::<Stmt>(value.clone()) {
                        if let Some(block) = rewritten_statement(expr) {
                            if let Ok(json) = serde_json::to_value(Stmt::Block(block)) {
                                *value = json;
                            }
                        }
                    }
                }
            }
            serde_json::Value::Array(items) => {
                items.iter_mut().for_each(|item| self.walk(item));
                splice_bindings(items);
            }
            _ => {}
        }
    }

    /// The arity of the tuple `arg` gives, if it is a call of a device function returning
    /// one.
    fn tuple_call(&self, arg: &Expr) -> Option<usize> {
        match &arg.kind {
            ExprKind::Call { callee, .. } => self.signatures.get(callee)?.tuple_result,
            // A call rewritten already (`g(f(h(x)))`).
            ExprKind::Block(block) if is_hidden(block) => self.tuple_call(block.tail.as_deref()?),
            _ => None,
        }
    }

    /// The call rewritten, or `None` when no argument needs it.
    fn call(&mut self, expr: Expr) -> Option<Expr> {
        let ExprKind::Call {
            callee,
            generic_args,
            args,
        } = expr.kind
        else {
            return None;
        };
        let signature = self.signatures.get(&callee)?;
        let groups = &signature.groups;
        let declared: usize = groups.iter().map(|(n, _)| n).sum();
        if args.len() >= declared {
            if !has_typed_absent(&args, signature) {
                return None;
            }
            return Some(Expr {
                kind: ExprKind::Call {
                    args: with_typed_absent(args, signature),
                    callee,
                    generic_args,
                },
                span: expr.span,
            });
        }
        // Which arguments are passed-on tuples: one at the start of each tuple group the
        // arguments reach with a call of that arity.
        let mut expand = vec![false; args.len()];
        let mut scalar = vec![false; args.len()];
        // A local bound to a tuple result without a pattern (`let hit = nearest(x, q);`,
        // the macro cannot tell it is a tuple) at the start of a tuple group: its fields.
        // (The macro's own tuple elements are named `t.0`, which no Rust name is.)
        let mut tuple_local = vec![None; args.len()];
        let mut group = 0;
        let mut position = 0;
        for (index, arg) in args.iter().enumerate() {
            let &(size, is_scalar) = groups.get(group)?;
            scalar[index] = is_scalar;
            if size > 1 && position == 0 && self.tuple_call(arg) == Some(size) {
                expand[index] = true;
                group += 1;
                continue;
            }
            if size > 1
                && position == 0
                && matches!(&arg.kind, ExprKind::Var(name) if !name.contains('.'))
            {
                tuple_local[index] = Some(size);
                group += 1;
                continue;
            }
            position += 1;
            if position == size {
                group += 1;
                position = 0;
            }
        }
        let last = expand.iter().rposition(|e| *e);
        if last.is_none() && tuple_local.iter().all(Option::is_none) {
            return None;
        }
        let span = expr.span;
        let mut stmts = Vec::new();
        let mut passed = Vec::new();
        for (index, arg) in args.into_iter().enumerate() {
            if let Some(arity) = tuple_local[index] {
                passed.extend((0..arity).map(|k| Expr {
                    kind: ExprKind::Field {
                        base: Box::new(arg.clone()),
                        field: k.to_string(),
                    },
                    span: arg.span,
                }));
                continue;
            }
            let runs_code = matches!(
                arg.kind,
                ExprKind::Call { .. } | ExprKind::MethodCall { .. } | ExprKind::Intrinsic { .. }
            );
            let bind = expand[index]
                || (last.is_some_and(|last| index < last) && scalar[index] && runs_code);
            if !bind {
                passed.push(arg);
                continue;
            }
            self.hidden += 1;
            let name = format!("{HIDDEN}{}", self.hidden);
            let arity = self.tuple_call(&arg).filter(|_| expand[index]);
            // A rewritten call's hidden locals come first, then the call is bound.
            let arg = match arg.kind {
                ExprKind::Block(mut block) if is_hidden(&block) && block.tail.is_some() => {
                    stmts.append(&mut block.stmts);
                    match block.tail {
                        Some(tail) => *tail,
                        None => continue,
                    }
                }
                kind => Expr {
                    kind,
                    span: arg.span,
                },
            };
            stmts.push(Stmt::Let {
                name: name.clone(),
                mutable: false,
                ty: None,
                init: Some(arg),
                span,
            });
            let var = || Expr {
                kind: ExprKind::Var(name.clone()),
                span,
            };
            match arity {
                Some(arity) => passed.extend((0..arity).map(|k| Expr {
                    kind: ExprKind::Field {
                        base: Box::new(var()),
                        field: k.to_string(),
                    },
                    span,
                })),
                None => passed.push(var()),
            }
        }
        Some(Expr {
            kind: ExprKind::Block(Block {
                stmts,
                tail: Some(Box::new(Expr {
                    kind: ExprKind::Call {
                        callee,
                        generic_args,
                        args: with_typed_absent(passed, signature),
                    },
                    span,
                })),
                span,
            }),
            span,
        })
    }
}
