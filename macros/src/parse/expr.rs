//! Expressions of a kernel body.

use cudajit_core::ast::{Axis, BinaryOp, Builtin, Expr, ExprKind, Literal, UnaryOp};
use cudajit_core::Scalar;

use super::closure::CLOSURE_PLACES;
use super::intrinsic_call::{intrinsic_name, DIM3_INTRINSICS};
use super::parser::Parser;
use super::signature::scalar_type;
use super::span_at;

impl Parser<'_> {
    pub(super) fn expr(&mut self, expr: &syn::Expr) -> Option<Expr> {
        let span = span_at(expr);
        let kind = match expr {
            syn::Expr::Lit(lit) => ExprKind::Lit(self.literal(&lit.lit)?),
            syn::Expr::Path(path) => match path.path.get_ident() {
                Some(ident) if path.qself.is_none() => {
                    let name = ident.to_string();
                    if let Some(place) = self.alias(&name) {
                        return Some(Expr { span, ..place });
                    }
                    // The warp constants of the prelude.
                    let constant = match name.as_str() {
                        "FULL_WARP" => Some(0xffff_ffff),
                        "WARP_SIZE" => Some(32),
                        _ => None,
                    };
                    if let (Some(value), false) = (constant, self.is_bound(&name)) {
                        return Some(Expr {
                            kind: ExprKind::Lit(Literal::Int {
                                value,
                                suffix: Some(cudajit_core::Scalar::U32),
                            }),
                            span,
                        });
                    }
                    if self.closure_name(&name).is_some() {
                        self.errors
                            .at(path, format!("`{name}` is a closure: {CLOSURE_PLACES}"));
                        return None;
                    }
                    if let Some(arity) = self.tuple_arity(&name) {
                        self.errors.at(
                            path,
                            format!("`{name}` is a tuple of {arity}: use its elements (`{name}.0`) or destructure it (`let (a, b) = {name};`); whole tuples can only be copied with `let` and `=`"),
                        );
                        return None;
                    }
                    if let Some(value) = self.unit_struct_value(path) {
                        return Some(value);
                    }
                    if !self.is_bound(&name) {
                        // Not a local: a Rust constant, whose value the generated code
                        // records (rustc reports a name that is not one).
                        self.add_constant(&name, &path.path);
                    }
                    ExprKind::Var(name)
                }
                // `S::SIDES` with `S: Shape`: the associated constant of the struct a call
                // binds `S` to (`lower/generic_structs.rs`), which rustc evaluated where
                // the impl is.
                _ if path.path.segments.len() == 2
                    && path.qself.is_none()
                    && self.is_user_bounded(&syn::Type::Path(syn::TypePath {
                        qself: None,
                        path: path.path.segments[0].ident.clone().into(),
                    })) =>
                {
                    let segments = &path.path.segments;
                    ExprKind::Var(format!("{}::{}", segments[0].ident, segments[1].ident))
                }
                // `<S as Shape>::SIDES`: the same.
                _ if path
                    .qself
                    .as_ref()
                    .is_some_and(|q| self.is_user_bounded(&q.ty))
                    && path.path.segments.len() == 2 =>
                {
                    let qself = path.qself.as_ref().map(|q| &*q.ty);
                    let ty = quote::quote!(#qself).to_string();
                    ExprKind::Var(format!("{ty}::{}", path.path.segments[1].ident))
                }
                // `f32::sqrt` as a value: a function item, which kernels do not have.
                _ if path.qself.is_none() && super::refusals::is_function_value(&path.path) => {
                    let written = quote::quote!(#path).to_string().replace(' ', "");
                    let method = path.path.segments.last().map(|s| s.ident.to_string());
                    let ty = &path.path.segments[0].ident;
                    self.errors.at(
                        path,
                        format!("`{written}` is a function used as a value, which kernels do not have: write instead a closure, `let f = |v: {ty}| v.{}();`, or call it, `{written}(x)`", method.unwrap_or_default()),
                    );
                    return None;
                }
                _ if self.names_generic_type(&path.path) => {
                    let ty = &path.path.segments[0].ident;
                    self.errors.at(
                        path,
                        format!("`{ty}::..` depends on a generic type, which the constants a kernel names cannot: pass the value as a parameter, or use `{ty}::zero()`/`{ty}::one()`"),
                    );
                    return None;
                }
                _ if self.unit_struct_value(path).is_some() => {
                    return self.unit_struct_value(path);
                }
                // `Ordering::Less`: its `i8` (`ordering.rs`).
                _ if super::ordering::ordering_constant(&path.path).is_some() => {
                    let value = super::ordering::ordering_constant(&path.path)?;
                    let literal: syn::Expr = syn::parse_str(&format!("({value}i8)")).ok()?;
                    return self.expr(&literal).map(|e| Expr { span, ..e });
                }
                _ => match path.qself.is_none().then(|| self.enum_variant(&path.path)) {
                    Some(Some((ty, variant))) => ExprKind::EnumVariant { ty, variant },
                    Some(None) => ExprKind::Var(self.constant_path(&path.path)?),
                    None => {
                        self.errors.at(
                            path,
                            "`<T as Trait>::NAME` paths cannot be named in a kernel: name the constant by its path (`u32::MAX`, `consts::TILE`)",
                        );
                        return None;
                    }
                },
            },
            syn::Expr::Paren(paren) => return self.expr(&paren.expr),
            syn::Expr::Group(group) => return self.expr(&group.expr),
            syn::Expr::Unary(unary) => {
                let op = match unary.op {
                    syn::UnOp::Neg(_) => UnaryOp::Neg,
                    syn::UnOp::Not(_) => UnaryOp::Not,
                    _ => {
                        if let Some(place) = self.dereferenced(&unary.expr) {
                            return Some(Expr { span, ..place });
                        }
                        self.errors.at(
                            unary.op,
                            "dereferencing is not supported in kernels except of the references a `for` loop or `x.get(i)` binds (`for y in x.iter_mut() { *y = 0.0; }`): index slices instead",
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
                if matches!(op, BinaryOp::Eq | BinaryOp::Ne)
                    && (self.is_option_value(&binary.left) || self.is_option_value(&binary.right))
                {
                    self.errors.at(
                        binary.op,
                        "comparing `Option`s with `==` or `!=` is not supported in kernels: write instead `o.is_some_and(|v| v == 3)` (or `o.is_none()`)",
                    );
                    return None;
                }
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
            syn::Expr::Reference(reference)
                if super::sub_slice::indexed_range(reference).is_some() =>
            {
                return self.sub_slice(reference)
            }
            // The place an `index`/`index_mut` body returns (`&self.data[i]`).
            syn::Expr::Reference(reference) if self.returns_place => ExprKind::Reference {
                mutable: reference.mutability.is_some(),
                place: Box::new(self.expr(&reference.expr)?),
            },
            syn::Expr::Try(expr_try) => return self.try_value(expr_try),
            syn::Expr::MethodCall(call) => return self.method_call(call),
            syn::Expr::Call(call) => return self.call(call),
            syn::Expr::Field(field) => return self.field(field),
            syn::Expr::Struct(literal) => return self.struct_literal(literal),
            syn::Expr::If(expr_if) => return self.if_value(expr_if),
            syn::Expr::Match(expr_match) => return self.match_value(expr_match),
            syn::Expr::Loop(expr_loop) => return self.loop_value(expr_loop),
            // `unsafe { slice_at::<T>(address, len) }`: the block is Rust's, for the host
            // type-check; the kernel language has no unsafe operations to mark.
            syn::Expr::Unsafe(block) => match block.block.stmts.as_slice() {
                [syn::Stmt::Expr(inner, None)] => return self.expr(inner),
                _ => {
                    let parsed = self.block(&block.block);
                    if parsed.tail.is_none() {
                        self.errors.at(block, "this block is used as a value, so it must end in an expression without `;`");
                        return None;
                    }
                    ExprKind::Block(parsed)
                }
            },
            syn::Expr::Block(block) if block.label.is_none() && block.attrs.is_empty() => {
                let parsed = self.block(&block.block);
                if parsed.tail.is_none() {
                    self.errors.at(block, "this block is used as a value, so it must end in an expression without `;`");
                    return None;
                }
                ExprKind::Block(parsed)
            }
            syn::Expr::Macro(mac) if mac.mac.path.is_ident("ptx") => {
                return self.inline_ptx(&mac.mac)
            }
            syn::Expr::Repeat(repeat) => {
                self.errors.at(
                    repeat,
                    "arrays are only supported as the initial value of a local: `let mut acc = [0.0f32; 8];`",
                );
                return None;
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

    /// The place `*name` reads or writes, when `name` is a reference bound by a `for` loop
    /// or `if let Some(name) = x.get(i)`.
    pub(super) fn dereferenced(&self, expr: &syn::Expr) -> Option<Expr> {
        match expr {
            syn::Expr::Paren(paren) => self.dereferenced(&paren.expr),
            // `**v` of a reference to a reference (an iterator's `filter` gets `&&T`).
            syn::Expr::Unary(unary) if matches!(unary.op, syn::UnOp::Deref(_)) => {
                self.dereferenced(&unary.expr)
            }
            syn::Expr::Path(path) if path.qself.is_none() => {
                let name = path.path.get_ident()?.to_string();
                self.alias(&name).or_else(|| {
                    // `*self`, `*other` of a struct reference: the struct, read in place.
                    self.reference_names.contains(&name).then(|| Expr {
                        kind: ExprKind::Var(name),
                        span: span_at(path),
                    })
                })
            }
            _ => None,
        }
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
                // Negative literals appear in patterns (`-5..=-1`): keep their bits.
                let parsed = int
                    .base10_parse::<u64>()
                    .or_else(|_| int.base10_parse::<i64>().map(|v| v as u64));
                match parsed {
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

    fn field(&mut self, field: &syn::ExprField) -> Option<Expr> {
        if let Some(element) = self.tuple_field(field) {
            return element;
        }
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
            // A field of a `#[derive(DeviceCopy)]` struct.
            let member = match &field.member {
                syn::Member::Named(member) => member.to_string(),
                // `t.0` of a local holding what a `#[device]` function returned, or a
                // tuple struct's field (`p.0`, `s.inner.0`, `ps[k].1`).
                syn::Member::Unnamed(index)
                    if matches!(
                        &*field.base,
                        syn::Expr::Path(_)
                            | syn::Expr::Call(_)
                            | syn::Expr::Field(_)
                            | syn::Expr::Index(_)
                    ) =>
                {
                    index.index.to_string()
                }
                syn::Member::Unnamed(_) => {
                    self.errors
                        .at(field, "`.0`, `.1`, ... work on tuple locals in kernels: bind the tuple first (`let t = (a, b); t.1`)");
                    return None;
                }
            };
            let base = self.expr(&field.base)?;
            return Some(Expr {
                kind: ExprKind::Field {
                    base: Box::new(base),
                    field: member,
                },
                span,
            });
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
        if let syn::Expr::Let(_) = &*expr_if.cond {
            return self.if_let_value(expr_if);
        }
        let Some((_, else_expr)) = &expr_if.else_branch else {
            self.errors
                .at(expr_if, "an `if` used as a value needs an `else` branch");
            return None;
        };
        let errors_before = self.errors.len();
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
        if self.errors.len() > errors_before {
            return None; // a branch's value was rejected and reported already
        }
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
    match expr {
        syn::Expr::Array(_) => {
            return "an array literal `[a, b]` is the value of a `let`, an assignment, an argument, a result or a `for` loop (`let w = [0.25f32, 0.5, 0.25];`, `f([a, b])`): bind it first, then index it".to_string();
        }
        syn::Expr::Repeat(_) => {
            return "`[value; N]` creates a local array only as the value of a `let`: `let mut a = [0.0f32; N];`".to_string();
        }
        syn::Expr::Const(_) => {
            return "`const { .. }` blocks are not supported in kernels: write instead a `const` item, `const K: u32 = 3 + 4;`, and name it".to_string();
        }
        _ => {}
    }
    let what = match expr {
        syn::Expr::Closure(_) => {
            return format!("this closure is not supported here: {CLOSURE_PLACES}")
        }
        syn::Expr::Reference(_) => "references (`&x`) are",
        syn::Expr::Tuple(_) => "tuples outside `let` and `=` (`let (a, b) = (x, y);`) are",
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
