//! Expressions of a kernel body.

use cudajit_core::ast::{Axis, BinaryOp, Builtin, Expr, ExprKind, Literal, UnaryOp};
use cudajit_core::Scalar;

use super::signature::scalar_type;
use super::span_at;
use super::stmt::Parser;

/// Intrinsics returning a `Dim3`, used as `name().x`.
const DIM3_INTRINSICS: [&str; 4] = ["thread_idx", "block_idx", "block_dim", "grid_dim"];

impl Parser<'_> {
    pub(super) fn expr(&mut self, expr: &syn::Expr) -> Option<Expr> {
        let span = span_at(expr);
        let kind = match expr {
            syn::Expr::Lit(lit) => ExprKind::Lit(self.literal(&lit.lit)?),
            syn::Expr::Path(path) => match path.path.get_ident() {
                Some(ident) if path.qself.is_none() => {
                    let name = ident.to_string();
                    if !self.is_bound(&name) {
                        self.errors.at(
                            path,
                            format!("`{name}` is not a parameter or local variable of this kernel; constants and statics cannot be used in kernels yet"),
                        );
                        return None;
                    }
                    ExprKind::Var(name)
                }
                _ => {
                    self.errors.at(
                        path,
                        "only local variables and parameters can be named in a kernel; paths to constants or statics are not supported yet",
                    );
                    return None;
                }
            },
            syn::Expr::Paren(paren) => return self.expr(&paren.expr),
            syn::Expr::Group(group) => return self.expr(&group.expr),
            syn::Expr::Unary(unary) => {
                let op = match unary.op {
                    syn::UnOp::Neg(_) => UnaryOp::Neg,
                    syn::UnOp::Not(_) => UnaryOp::Not,
                    _ => {
                        self.errors.at(
                            unary.op,
                            "dereferencing is not supported in kernels: index slices instead",
                        );
                        return None;
                    }
                };
                ExprKind::Unary {
                    op,
                    operand: Box::new(self.expr(&unary.expr)?),
                }
            }
            syn::Expr::Binary(binary) => {
                let Some(op) = binary_op(&binary.op) else {
                    self.errors.at(
                        binary.op,
                        "compound assignment is a statement: write it on its own line, ending with `;`",
                    );
                    return None;
                };
                let left = self.expr(&binary.left);
                let right = self.expr(&binary.right);
                ExprKind::Binary {
                    op,
                    left: Box::new(left?),
                    right: Box::new(right?),
                }
            }
            syn::Expr::Cast(cast) => {
                let Some(ty) = scalar_type(&cast.ty) else {
                    self.errors.at(
                        &cast.ty,
                        "`as` in a kernel converts between scalar types (`bool`, integers, `f32`, `f64`)",
                    );
                    return None;
                };
                ExprKind::Cast {
                    value: Box::new(self.expr(&cast.expr)?),
                    ty,
                }
            }
            syn::Expr::Index(index) => {
                let base = self.expr(&index.expr);
                let position = self.expr(&index.index);
                if matches!(&*index.index, syn::Expr::Range(_)) {
                    return None; // reported by `self.expr` on the range
                }
                ExprKind::Index {
                    base: Box::new(base?),
                    index: Box::new(position?),
                }
            }
            syn::Expr::MethodCall(call) => return self.method_call(call),
            syn::Expr::Call(call) => return self.call(call),
            syn::Expr::Field(field) => return self.field(field),
            syn::Expr::If(expr_if) => return self.if_value(expr_if),
            syn::Expr::Block(block) if block.label.is_none() && block.attrs.is_empty() => {
                let parsed = self.block(&block.block);
                if parsed.tail.is_none() {
                    self.errors.at(block, "this block is used as a value, so it must end in an expression without `;`");
                    return None;
                }
                ExprKind::Block(parsed)
            }
            syn::Expr::Range(range) => {
                self.errors.at(
                    range,
                    "ranges are only supported as the iterator of a `for` loop",
                );
                return None;
            }
            other => {
                self.errors.at(other, unsupported(other));
                return None;
            }
        };
        Some(Expr { kind, span })
    }

    fn literal(&mut self, lit: &syn::Lit) -> Option<Literal> {
        match lit {
            syn::Lit::Bool(b) => Some(Literal::Bool(b.value)),
            syn::Lit::Int(int) => {
                let suffix = self.suffix(lit, int.suffix())?;
                if suffix.is_some_and(Scalar::is_float) {
                    // `1f32` is a float literal in Rust.
                    let value = int.base10_parse::<f64>().ok()?;
                    return Some(Literal::Float { value, suffix });
                }
                match int.base10_parse::<u64>() {
                    Ok(value) => Some(Literal::Int { value, suffix }),
                    Err(_) => {
                        self.errors
                            .at(lit, "integer literal does not fit in 64 bits");
                        None
                    }
                }
            }
            syn::Lit::Float(float) => {
                let suffix = self.suffix(lit, float.suffix())?;
                match float.base10_parse::<f64>() {
                    Ok(value) => Some(Literal::Float { value, suffix }),
                    Err(error) => {
                        self.errors.push(error);
                        None
                    }
                }
            }
            other => {
                self.errors.at(
                    other,
                    "kernels support `bool`, integer and float literals only",
                );
                None
            }
        }
    }

    /// The suffix of a numeric literal: `Some(None)` when absent, `None` on error.
    fn suffix(&mut self, lit: &syn::Lit, suffix: &str) -> Option<Option<Scalar>> {
        if suffix.is_empty() {
            return Some(None);
        }
        match Scalar::from_rust_name(suffix) {
            Some(scalar) if scalar != Scalar::Bool => Some(Some(scalar)),
            _ => {
                self.errors
                    .at(lit, format!("unknown literal suffix `{suffix}`"));
                None
            }
        }
    }

    fn method_call(&mut self, call: &syn::ExprMethodCall) -> Option<Expr> {
        let span = span_at(call);
        if call.method == "len" && call.args.is_empty() && call.turbofish.is_none() {
            let receiver = self.expr(&call.receiver)?;
            return Some(Expr {
                kind: ExprKind::Len(Box::new(receiver)),
                span,
            });
        }
        if call.method == "step_by" {
            self.errors.at(
                call,
                "`step_by` is only supported on the range of a `for` loop",
            );
            return None;
        }
        self.errors.at(
            &call.method,
            format!(
                "method `{}` is not supported in kernels; supported: `slice.len()`, `(a..b).step_by(n)` in `for`",
                call.method
            ),
        );
        None
    }

    fn call(&mut self, call: &syn::ExprCall) -> Option<Expr> {
        let span = span_at(call);
        let Some(name) = intrinsic_name(&call.func) else {
            self.errors.at(
                &call.func,
                "calls are not supported in kernels yet, except the intrinsics `thread_idx()`, `block_idx()`, `block_dim()`, `grid_dim()`, `global_index()` and `grid_stride()`",
            );
            return None;
        };
        const INTRINSICS: [&str; 6] = [
            "thread_idx",
            "block_idx",
            "block_dim",
            "grid_dim",
            "global_index",
            "grid_stride",
        ];
        if !INTRINSICS.contains(&name.as_str()) {
            self.errors.at(
                &call.func,
                format!("`{name}` is not a kernel intrinsic; calls to other functions are not supported yet"),
            );
            return None;
        }
        if !call.args.is_empty() {
            self.errors
                .at(&call.args, format!("`{name}()` takes no arguments"));
            return None;
        }
        let builtin = match name.as_str() {
            "global_index" => Builtin::GlobalIndex,
            "grid_stride" => Builtin::GridStride,
            dim3 if DIM3_INTRINSICS.contains(&dim3) => {
                self.errors.at(
                    call,
                    format!("use one component of `{dim3}()`: `{dim3}().x`, `.y` or `.z`"),
                );
                return None;
            }
            other => {
                self.errors.at(
                    &call.func,
                    format!("`{other}` is not a kernel intrinsic; calls to other functions are not supported yet"),
                );
                return None;
            }
        };
        Some(Expr {
            kind: ExprKind::Builtin(builtin),
            span,
        })
    }

    fn field(&mut self, field: &syn::ExprField) -> Option<Expr> {
        let span = span_at(field);
        let axis = match &field.member {
            syn::Member::Named(ident) if ident == "x" => Some(Axis::X),
            syn::Member::Named(ident) if ident == "y" => Some(Axis::Y),
            syn::Member::Named(ident) if ident == "z" => Some(Axis::Z),
            _ => None,
        };
        let dim3 = match &*field.base {
            syn::Expr::Call(call) if call.args.is_empty() => {
                intrinsic_name(&call.func).filter(|n| DIM3_INTRINSICS.contains(&n.as_str()))
            }
            _ => None,
        };
        let (Some(axis), Some(name)) = (axis, dim3) else {
            self.errors.at(
                field,
                "field access is only supported on the index intrinsics (`thread_idx().x`, ...)",
            );
            return None;
        };
        let builtin = match name.as_str() {
            "thread_idx" => Builtin::ThreadIdx(axis),
            "block_idx" => Builtin::BlockIdx(axis),
            "block_dim" => Builtin::BlockDim(axis),
            _ => Builtin::GridDim(axis),
        };
        Some(Expr {
            kind: ExprKind::Builtin(builtin),
            span,
        })
    }

    fn if_value(&mut self, expr_if: &syn::ExprIf) -> Option<Expr> {
        let span = span_at(expr_if);
        if let syn::Expr::Let(let_expr) = &*expr_if.cond {
            self.errors
                .at(let_expr, "`if let` is not supported in kernels");
            return None;
        }
        let Some((_, else_expr)) = &expr_if.else_branch else {
            self.errors
                .at(expr_if, "an `if` used as a value needs an `else` branch");
            return None;
        };
        let cond = self.expr(&expr_if.cond);
        let then = self.block(&expr_if.then_branch);
        let otherwise = match &**else_expr {
            syn::Expr::Block(block) => self.block(&block.block),
            nested => {
                let value = self.expr(nested)?;
                cudajit_core::ast::Block {
                    stmts: Vec::new(),
                    span: value.span,
                    tail: Some(Box::new(value)),
                }
            }
        };
        if then.tail.is_none() || otherwise.tail.is_none() {
            self.errors.at(
                expr_if,
                "both branches of an `if` used as a value must end in a value",
            );
            return None;
        }
        Some(Expr {
            kind: ExprKind::If {
                cond: Box::new(cond?),
                then,
                otherwise,
            },
            span,
        })
    }
}

/// The name of an intrinsic called as `name()`, `cudajit::name()` or
/// `cudajit::prelude::name()`.
fn intrinsic_name(func: &syn::Expr) -> Option<String> {
    let syn::Expr::Path(path) = func else {
        return None;
    };
    if path.qself.is_some() {
        return None;
    }
    let segments: Vec<String> = path
        .path
        .segments
        .iter()
        .map(|s| s.arguments.is_none().then(|| s.ident.to_string()))
        .collect::<Option<_>>()?;
    match segments.as_slice() {
        [name] => Some(name.clone()),
        [root, name] if root == "cudajit" => Some(name.clone()),
        [root, _, name] if root == "cudajit" => Some(name.clone()),
        _ => None,
    }
}

fn binary_op(op: &syn::BinOp) -> Option<BinaryOp> {
    use syn::BinOp as B;
    Some(match op {
        B::Add(_) => BinaryOp::Add,
        B::Sub(_) => BinaryOp::Sub,
        B::Mul(_) => BinaryOp::Mul,
        B::Div(_) => BinaryOp::Div,
        B::Rem(_) => BinaryOp::Rem,
        B::And(_) => BinaryOp::And,
        B::Or(_) => BinaryOp::Or,
        B::BitXor(_) => BinaryOp::BitXor,
        B::BitAnd(_) => BinaryOp::BitAnd,
        B::BitOr(_) => BinaryOp::BitOr,
        B::Shl(_) => BinaryOp::Shl,
        B::Shr(_) => BinaryOp::Shr,
        B::Eq(_) => BinaryOp::Eq,
        B::Lt(_) => BinaryOp::Lt,
        B::Le(_) => BinaryOp::Le,
        B::Ne(_) => BinaryOp::Ne,
        B::Ge(_) => BinaryOp::Ge,
        B::Gt(_) => BinaryOp::Gt,
        _ => return None,
    })
}

/// The message for an expression kind outside the kernel language.
fn unsupported(expr: &syn::Expr) -> String {
    let what = match expr {
        syn::Expr::Closure(_) => "closures are",
        syn::Expr::Reference(_) => "references (`&x`) are",
        syn::Expr::Tuple(_) => "tuples are",
        syn::Expr::Array(_) | syn::Expr::Repeat(_) => "arrays are",
        syn::Expr::Struct(_) => "struct literals are",
        syn::Expr::Match(_) => "`match` is",
        syn::Expr::Macro(_) => "macros are",
        syn::Expr::Unsafe(_) => "`unsafe` blocks are",
        syn::Expr::Async(_) | syn::Expr::Await(_) => "`async`/`.await` are",
        syn::Expr::Try(_) | syn::Expr::TryBlock(_) => "the `?` operator is",
        syn::Expr::Let(_) => "`let` expressions are",
        syn::Expr::Loop(_) | syn::Expr::While(_) | syn::Expr::ForLoop(_) => {
            "loops used as values are"
        }
        syn::Expr::Assign(_) => "assignments used as values are",
        syn::Expr::Break(_) | syn::Expr::Continue(_) | syn::Expr::Return(_) => {
            "`break`, `continue` and `return` used as values are"
        }
        _ => "this expression is",
    };
    format!("{what} not supported in kernels")
}
