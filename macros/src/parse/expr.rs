//! Expressions of a kernel body.

use cudajit_core::ast::{
    Axis, BinaryOp, Builtin, Expr, ExprKind, GenericArg, Literal, UnaryOp, ValueType,
};
use cudajit_core::intrinsics::Intrinsic;
use cudajit_core::math::MathFunction;
use cudajit_core::Scalar;

use super::closure::{ClosureName, CLOSURE_PLACES};
use super::parser::Parser;
use super::signature::{scalar_type, value_type};
use super::span_at;

/// Intrinsics returning a `Dim3`, used as `name().x`.
const DIM3_INTRINSICS: [&str; 4] = ["thread_idx", "block_idx", "block_dim", "grid_dim"];

/// Every intrinsic called as a function.
const INTRINSICS: [&str; 6] = [
    "thread_idx",
    "block_idx",
    "block_dim",
    "grid_dim",
    "global_index",
    "grid_stride",
];

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
                    if !self.is_bound(&name) {
                        // Not a local: a Rust constant, whose value the generated code
                        // records (rustc reports a name that is not one).
                        self.add_constant(&name, &path.path);
                    }
                    ExprKind::Var(name)
                }
                _ if self.names_generic_type(&path.path) => {
                    let ty = &path.path.segments[0].ident;
                    self.errors.at(
                        path,
                        format!("`{ty}::..` depends on a generic type, which the constants a kernel names cannot: pass the value as a parameter, or use `{ty}::zero()`/`{ty}::one()`"),
                    );
                    return None;
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

    fn method_call(&mut self, call: &syn::ExprMethodCall) -> Option<Expr> {
        let span = span_at(call);
        let method = call.method.to_string();
        if super::iterator_chain::is_consumer(call) {
            return self.consume_chain(call);
        }
        if method == "len" && call.args.is_empty() && call.turbofish.is_none() {
            let receiver = self.expr(&call.receiver)?;
            return Some(Expr {
                kind: ExprKind::Len(Box::new(receiver)),
                span,
            });
        }
        // `h.to_f32()`, `h.to_f64()` of the 16-bit float types.
        if let ("to_f32" | "to_f64", true) = (method.as_str(), call.args.is_empty()) {
            let ty = if method == "to_f32" {
                cudajit_core::Scalar::F32
            } else {
                cudajit_core::Scalar::F64
            };
            return Some(Expr {
                kind: ExprKind::Cast {
                    value: Box::new(self.expr(&call.receiver)?),
                    ty,
                },
                span,
            });
        }
        if method == "split_at" || method == "split_at_mut" {
            // A tuple `let` takes it before it gets here.
            self.errors.at(
                call,
                format!(
                    "`{method}` gives two slices: bind them, `let (lo, hi) = x.{method}(mid);`"
                ),
            );
            return None;
        }
        if method == "step_by" {
            self.errors.at(
                call,
                "`step_by` is only supported on the range of a `for` loop",
            );
            return None;
        }
        let Some(function) = MathFunction::from_name(&method) else {
            // A method of a struct's `#[device]` impl block, found once the receiver's type
            // is known (lowering says so if the struct has no such device method).
            if call.turbofish.is_some() {
                self.errors.at(
                    &call.turbofish,
                    "generic methods are not supported in kernels: `#[device]` impl blocks hold methods without generic parameters",
                );
                return None;
            }
            let receiver = self.expr(&call.receiver);
            let args: Vec<Option<Expr>> = call
                .args
                .iter()
                .map(|arg| self.method_argument(arg))
                .collect();
            let start = call.method.span().start();
            self.method_sites.push((start.line, start.column));
            return Some(Expr {
                kind: ExprKind::MethodCall {
                    receiver: Box::new(receiver?),
                    method,
                    args: args.into_iter().collect::<Option<Vec<Expr>>>()?,
                },
                span,
            });
        };
        let args: Vec<&syn::Expr> = call.args.iter().collect();
        self.math(function, &call.receiver, &args, call, span)
    }

    /// `receiver.function(args)`, or `T::function(receiver, args)`.
    fn math(
        &mut self,
        function: MathFunction,
        receiver: &syn::Expr,
        args: &[&syn::Expr],
        whole: &dyn quote::ToTokens,
        span: cudajit_core::Span,
    ) -> Option<Expr> {
        if args.len() != function.extra_arguments() {
            self.errors.at(
                whole,
                format!(
                    "`{}` takes {} argument(s) besides the value it applies to",
                    function.name(),
                    function.extra_arguments()
                ),
            );
            return None;
        }
        let receiver = self.expr(receiver);
        let args: Vec<Option<Expr>> = args.iter().map(|a| self.expr(a)).collect();
        Some(Expr {
            kind: ExprKind::Math {
                function,
                receiver: Box::new(receiver?),
                args: args.into_iter().collect::<Option<_>>()?,
            },
            span,
        })
    }

    fn call(&mut self, call: &syn::ExprCall) -> Option<Expr> {
        let span = span_at(call);
        if let Some(name) = super::stmt::callee_name(call) {
            match self.closure_name(&name) {
                Some(ClosureName::Local(index)) => {
                    return self.inline_closure(index, call, false)?.ok();
                }
                Some(ClosureName::Param) => return self.closure_param_call(name, call),
                None => {}
            }
        }
        let syn::Expr::Path(path) = &*call.func else {
            let message = match &*call.func {
                syn::Expr::Closure(_) | syn::Expr::Paren(_) => {
                    format!("a closure is called by its name: {CLOSURE_PLACES}")
                }
                _ => "only named functions can be called in kernels".to_owned(),
            };
            self.errors.at(&call.func, message);
            return None;
        };
        if path.qself.is_some() {
            self.errors.at(
                path,
                "qualified paths (`<T as Trait>::f`) are not supported in kernels",
            );
            return None;
        }
        if let Some(name) = intrinsic_name(&call.func).filter(|n| INTRINSICS.contains(&n.as_str()))
        {
            return self.intrinsic(call, &name, span);
        }
        if let Some(name) = intrinsic_name(&call.func) {
            // `erf(x)`, `erfc(x)`, `rsqrt(x)`: functions std lacks, called like C's.
            if matches!(name.as_str(), "erf" | "erfc" | "rsqrt") {
                if let Some(function) = MathFunction::from_name(&name) {
                    let args: Vec<&syn::Expr> = call.args.iter().collect();
                    let Some((receiver, rest)) = args.split_first() else {
                        self.errors.at(call, format!("`{name}` takes one argument"));
                        return None;
                    };
                    return self.math(function, receiver, rest, call, span);
                }
            }
        }
        if let Some(name) = intrinsic_name(&strip_last_arguments(&call.func)) {
            if let Some(intrinsic) = Intrinsic::from_name(&name) {
                return self.device_intrinsic(call, intrinsic, span);
            }
        }
        let segments = &path.path.segments;
        // `f32::sqrt(x)`, `T::zero()`: associated functions of scalar types.
        if segments.len() == 2 {
            let first = &segments[0];
            let ty_name = first.ident.to_string();
            let ty = cudajit_core::Scalar::from_rust_name(&ty_name)
                .map(ValueType::Scalar)
                .or_else(|| {
                    self.generics
                        .types
                        .contains(&ty_name)
                        .then(|| ValueType::Generic(ty_name.clone()))
                });
            if let Some(ty) = ty {
                return self.associated(call, ty, &segments[1].ident.to_string(), span);
            }
        }
        if let Some(message) = not_a_device_function(&path.path) {
            self.errors.at(path, message);
            return None;
        }
        // `Vec3::new(..)`: an associated function of a `DeviceCopy` struct's `#[device]`
        // impl block, found through the struct's layout.
        if let Some(call) = self.associated_function(path, call, span) {
            return call;
        }
        // Anything else is a `#[device]` function; the generated code reports paths that
        // are not (`generate/captured.rs`).
        let last = segments.last()?;
        let callee = last.ident.to_string();
        if callee == self.own_name && segments.len() == 1 {
            self.errors.at(
                path,
                format!("`{callee}` calls itself: recursion is not supported in kernels and device functions"),
            );
            return None;
        }
        let generic_args = match &last.arguments {
            syn::PathArguments::None => Vec::new(),
            syn::PathArguments::AngleBracketed(angle) => {
                let mut out = Vec::new();
                for arg in &angle.args {
                    match arg {
                        syn::GenericArgument::Type(ty) => {
                            // A const generic parameter of the caller parses as a type path:
                            // look for it first.
                            let const_name = match ty {
                                syn::Type::Path(p) => p
                                    .path
                                    .get_ident()
                                    .map(|i| i.to_string())
                                    .filter(|n| self.generics.consts.contains(n)),
                                _ => None,
                            };
                            let value = match const_name {
                                Some(_) => None,
                                None => value_type(ty, &self.generics),
                            };
                            match value {
                                Some(value) => out.push(GenericArg::Type(value)),
                                // A const generic parameter of the caller parses as a type path.
                                None => match ty {
                                    syn::Type::Path(p)
                                        if p.path.get_ident().is_some_and(|i| {
                                            self.generics.consts.contains(&i.to_string())
                                        }) =>
                                    {
                                        let name = p
                                            .path
                                            .get_ident()
                                            .map(|i| i.to_string())
                                            .unwrap_or_default();
                                        out.push(GenericArg::Const(Expr {
                                            kind: ExprKind::Var(name),
                                            span: span_at(p),
                                        }));
                                    }
                                    _ => {
                                        self.errors.at(ty, "generic arguments are scalar types or generic parameters");
                                        return None;
                                    }
                                },
                            }
                        }
                        syn::GenericArgument::Const(expr) => {
                            out.push(GenericArg::Const(self.expr(expr)?))
                        }
                        other => {
                            self.errors.at(other, "unsupported generic argument");
                            return None;
                        }
                    }
                }
                out
            }
            syn::PathArguments::Parenthesized(p) => {
                self.errors.at(p, "unsupported call syntax");
                return None;
            }
        };
        let mut plain = path.path.clone();
        if let Some(last) = plain.segments.last_mut() {
            last.arguments = syn::PathArguments::None;
        }
        self.add_callee(&plain);
        // A tuple argument passes as its elements, as a tuple parameter is declared.
        let mut args = Vec::new();
        let mut complete = true;
        for arg in &call.args {
            let parsed = match (self.closure_argument(arg), self.is_tuple_value(arg)) {
                (Some(closure), _) => closure.map(|c| vec![c]),
                (None, true) => self.tuple_elements(arg),
                (None, false) => self.call_argument(arg).map(|a| vec![a]),
            };
            match parsed {
                Some(parsed) => args.extend(parsed),
                None => complete = false,
            }
        }
        if !complete {
            return None;
        }
        Some(Expr {
            kind: ExprKind::Call {
                callee,
                generic_args,
                args,
            },
            span,
        })
    }

    /// `Name { field: value, .. }` of a `#[derive(DeviceCopy)]` struct.
    fn struct_literal(&mut self, literal: &syn::ExprStruct) -> Option<Expr> {
        let span = span_at(literal);
        if let Some(rest) = &literal.rest {
            self.errors.at(
                rest,
                "`..base` is not supported in kernels: give every field",
            );
            return None;
        }
        let plain = literal
            .path
            .segments
            .iter()
            .all(|segment| segment.arguments.is_none());
        let ident = match (&literal.qself, literal.path.segments.last()) {
            (None, Some(last)) if plain => last.ident.clone(),
            _ => {
                self.errors.at(
                    &literal.path,
                    "name the struct by its path without generic arguments (`Team { .. }`, `nccl::Team { .. }`)",
                );
                return None;
            }
        };
        let mut fields = Vec::new();
        for field in &literal.fields {
            let syn::Member::Named(name) = &field.member else {
                self.errors
                    .at(field, "fields are named: `Name { field: value }`");
                return None;
            };
            // `history: [0.5; 4]`: an array field's value.
            let value = match &field.expr {
                syn::Expr::Repeat(repeat) => Expr {
                    kind: ExprKind::Repeat {
                        value: Box::new(self.expr(&repeat.expr)?),
                        len: Box::new(self.expr(&repeat.len)?),
                    },
                    span: span_at(repeat),
                },
                other => self.expr(other)?,
            };
            fields.push((name.to_string(), value));
        }
        self.record_type(&literal.path);
        Some(Expr {
            kind: ExprKind::StructLiteral {
                ty: ident.to_string(),
                fields,
            },
            span,
        })
    }

    /// An argument of a function call: a value, or `&name` / `&mut name` for the reference
    /// parameters of `#[extern_device]` functions (the lowering checks the callee takes one).
    /// An argument of a method of a `#[device]` impl block, called as `a.m(..)` or
    /// `Type::m(..)`: a closure, a reference (`&b`, `&mut s.pos`) or a value.
    fn method_argument(&mut self, arg: &syn::Expr) -> Option<Expr> {
        match self.closure_argument(arg) {
            Some(closure) => closure,
            None => self.call_argument(arg),
        }
    }

    pub(super) fn call_argument(&mut self, arg: &syn::Expr) -> Option<Expr> {
        let syn::Expr::Reference(reference) = arg else {
            return self.expr(arg);
        };
        if super::sub_slice::indexed_range(reference).is_some() {
            return self.sub_slice(reference);
        }
        // A named struct or array, a slice element (`&mut out[i]`) or a field (`&s.pos`).
        if !matches!(
            &*reference.expr,
            syn::Expr::Path(_) | syn::Expr::Index(_) | syn::Expr::Field(_)
        ) {
            self.errors.at(
                arg,
                "only a named struct or array, a slice element or a field can be passed by reference: `&comm`, `&mut session`, `&mut out[i]`, `&b.pos`",
            );
            return None;
        }
        let place = self.expr(&reference.expr)?;
        Some(Expr {
            span: span_at(arg),
            kind: ExprKind::Reference {
                mutable: reference.mutability.is_some(),
                place: Box::new(place),
            },
        })
    }

    /// `T::zero()`, `T::one()`, `f32::sqrt(x)`.
    fn associated(
        &mut self,
        call: &syn::ExprCall,
        ty: ValueType,
        name: &str,
        span: cudajit_core::Span,
    ) -> Option<Expr> {
        // `f16::from_f32(x)`: the conversions of the 16-bit float types are `as` casts.
        if let ("from_f32" | "from_f64", ValueType::Scalar(to), [value]) =
            (name, &ty, call.args.iter().collect::<Vec<_>>().as_slice())
        {
            return Some(Expr {
                kind: ExprKind::Cast {
                    value: Box::new(self.expr(value)?),
                    ty: *to,
                },
                span,
            });
        }
        // `f32::from_bits(u)`: a bit cast to the float type named.
        if name == "from_bits" {
            return self.bits_to_float(call, &ty, span);
        }
        if (name == "zero" || name == "one") && call.args.is_empty() {
            return Some(Expr {
                kind: ExprKind::Constant {
                    ty: Some(ty),
                    one: name == "one",
                },
                span,
            });
        }
        let Some(function) = MathFunction::from_name(name) else {
            self.errors.at(
                &call.func,
                format!("`{name}` is not a supported associated function of a scalar type; supported: `zero()`, `one()` and the scalar methods"),
            );
            return None;
        };
        let args: Vec<&syn::Expr> = call.args.iter().collect();
        let Some((receiver, rest)) = args.split_first() else {
            self.errors
                .at(call, format!("`{name}` needs the value it applies to"));
            return None;
        };
        self.math(function, receiver, rest, call, span)
    }

    /// `f32::from_bits(u)`, `f16::from_bits(u)`, `bf16::from_bits(u)`, `f64::from_bits(u)`.
    fn bits_to_float(
        &mut self,
        call: &syn::ExprCall,
        ty: &ValueType,
        span: cudajit_core::Span,
    ) -> Option<Expr> {
        let float = match ty {
            ValueType::Scalar(float) if float.is_float() => *float,
            _ => {
                self.errors.at(
                    &call.func,
                    "`from_bits` makes a float from its bits: call it on a float type (`f32::from_bits(u)`, also `f64`, `f16`, `bf16`)",
                );
                return None;
            }
        };
        let args: Vec<&syn::Expr> = call.args.iter().collect();
        let [bits] = args.as_slice() else {
            self.errors.at(
                call,
                "`from_bits` takes one argument: the unsigned integer holding the bits",
            );
            return None;
        };
        self.math(MathFunction::FromBits(float), bits, &[], call, span)
    }

    /// Barriers, fences, shared memory, atomics and warp operations.
    /// The argument of `tensor_map_address`: `&map`, a parameter by name.
    fn tensor_map_argument(&mut self, arg: &syn::Expr) -> Option<Expr> {
        let name = match arg {
            syn::Expr::Reference(reference) if reference.mutability.is_none() => {
                match &*reference.expr {
                    syn::Expr::Path(path) if path.qself.is_none() => path.path.get_ident(),
                    _ => None,
                }
            }
            _ => None,
        };
        let Some(name) = name else {
            self.errors.at(
                arg,
                "`tensor_map_address` takes the tensor-map parameter by reference: `tensor_map_address(&map)`",
            );
            return None;
        };
        let span = span_at(arg);
        Some(Expr {
            span,
            kind: ExprKind::Reference {
                mutable: false,
                place: Box::new(Expr {
                    span,
                    kind: ExprKind::Var(name.to_string()),
                }),
            },
        })
    }

    fn device_intrinsic(
        &mut self,
        call: &syn::ExprCall,
        intrinsic: Intrinsic,
        span: cudajit_core::Span,
    ) -> Option<Expr> {
        let name = intrinsic.name();
        let turbofish = match &*call.func {
            syn::Expr::Path(path) => path.path.segments.last().map(|s| s.arguments.clone()),
            _ => None,
        };
        let ty = match (intrinsic.takes_type(), turbofish) {
            (true, Some(syn::PathArguments::AngleBracketed(angle))) if angle.args.len() == 1 => {
                match &angle.args[0] {
                    syn::GenericArgument::Type(ty) => match value_type(ty, &self.generics) {
                        Some(value) => Some(value),
                        None => {
                            self.errors.at(ty, format!("`{name}` holds scalars: give a scalar type or a generic type parameter"));
                            return None;
                        }
                    },
                    other => {
                        self.errors
                            .at(other, format!("`{name}` takes one type argument"));
                        return None;
                    }
                }
            }
            (true, _) => {
                self.errors.at(
                    &call.func,
                    format!(
                        "give the element type of `{name}` with a turbofish: `{name}::<f32>(..)`"
                    ),
                );
                return None;
            }
            (false, Some(syn::PathArguments::None) | None) => None,
            (false, Some(other)) => {
                self.errors
                    .at(other, format!("`{name}` takes no type arguments"));
                return None;
            }
        };
        if call.args.len() != intrinsic.arity() {
            self.errors.at(
                call,
                format!("`{name}` takes {} argument(s)", intrinsic.arity()),
            );
            return None;
        }
        let mut args = Vec::new();
        for (index, arg) in call.args.iter().enumerate() {
            if intrinsic == Intrinsic::TensorMapAddress {
                args.push(self.tensor_map_argument(arg)?);
            } else if index == 0 && intrinsic.takes_place() {
                let syn::Expr::Reference(reference) = arg else {
                    let message = if intrinsic.reads_place_only() {
                        format!("`{name}` takes the element as `&x[i]`")
                    } else {
                        format!("`{name}` takes the element to update as `&mut x[i]`")
                    };
                    self.errors.at(arg, message);
                    return None;
                };
                if reference.mutability.is_none() && !intrinsic.reads_place_only() {
                    self.errors.at(
                        arg,
                        format!("`{name}` updates its target: write `&mut x[i]`"),
                    );
                    return None;
                }
                let syn::Expr::Index(_) = &*reference.expr else {
                    let message = if intrinsic.reads_place_only() {
                        format!("`{name}` takes an element of a slice or shared array (`&x[i]`)")
                    } else {
                        "atomics apply to slice elements (`&mut x[i]`)".to_owned()
                    };
                    self.errors.at(&reference.expr, message);
                    return None;
                };
                let place = self.expr(&reference.expr)?;
                args.push(Expr {
                    span: place.span,
                    kind: ExprKind::Reference {
                        mutable: reference.mutability.is_some(),
                        place: Box::new(place),
                    },
                });
            } else if let (Intrinsic::VectorStore(_), 2, syn::Expr::Tuple(tuple)) =
                (intrinsic, index, arg)
            {
                // The values of a vector store: the one place a tuple is written.
                let elems: Vec<Option<Expr>> = tuple.elems.iter().map(|e| self.expr(e)).collect();
                args.push(Expr {
                    kind: ExprKind::Tuple(elems.into_iter().collect::<Option<_>>()?),
                    span: span_at(tuple),
                });
            } else {
                args.push(self.expr(arg)?);
            }
        }
        if let Intrinsic::OrderedAtomic { access, .. } = intrinsic {
            self.check_ordering(call, name, access, &args)?;
        }
        Some(Expr {
            kind: ExprKind::Intrinsic {
                intrinsic,
                ty,
                args,
            },
            span,
        })
    }

    /// An ordered atomic's ordering and scope (its last two arguments) must be variants
    /// the instruction can take: reported here, at the argument, when the kernel is built.
    fn check_ordering(
        &mut self,
        call: &syn::ExprCall,
        name: &str,
        access: cudajit_core::intrinsics::AtomicAccess,
        args: &[Expr],
    ) -> Option<()> {
        let variant = |arg: &Expr| match &arg.kind {
            ExprKind::EnumVariant { variant, .. } => Some(variant.clone()),
            _ => None,
        };
        let (Some(order), Some(scope)) = (args.len().checked_sub(2), args.len().checked_sub(1))
        else {
            return None;
        };
        let checked = cudajit_core::intrinsics::memory_ordering(
            name,
            access,
            variant(&args[order]).as_deref(),
            variant(&args[scope]).as_deref(),
        );
        match checked {
            Ok(_) => Some(()),
            Err(error) => {
                let at = match error.argument {
                    cudajit_core::intrinsics::OrderingArgument::Order => order,
                    cudajit_core::intrinsics::OrderingArgument::Scope => scope,
                };
                self.errors.at(&call.args[at], error.message);
                None
            }
        }
    }

    fn intrinsic(
        &mut self,
        call: &syn::ExprCall,
        name: &str,
        span: cudajit_core::Span,
    ) -> Option<Expr> {
        if !call.args.is_empty() {
            self.errors
                .at(&call.args, format!("`{name}()` takes no arguments"));
            return None;
        }
        let builtin = match name {
            "global_index" => Builtin::GlobalIndex,
            "grid_stride" => Builtin::GridStride,
            dim3 => {
                self.errors.at(
                    call,
                    format!("use one component of `{dim3}()`: `{dim3}().x`, `.y` or `.z`"),
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
                // `t.0` of a local holding what a `#[device]` function returned.
                syn::Member::Unnamed(index)
                    if matches!(&*field.base, syn::Expr::Path(_) | syn::Expr::Call(_)) =>
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

/// `path::name::<T>` without its turbofish, so intrinsics taking a type are recognised.
fn strip_last_arguments(func: &syn::Expr) -> syn::Expr {
    let mut func = func.clone();
    if let syn::Expr::Path(path) = &mut func {
        if let Some(last) = path.path.segments.last_mut() {
            last.arguments = syn::PathArguments::None;
        }
    }
    func
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

/// Why the function at `path` cannot be a `#[device]` function, for paths that visibly
/// name something else: the standard library, or an associated function of a type
/// (`Vec2::new`, `Vec::<f32>::with_capacity`). `None` for a path to a free function.
fn not_a_device_function(path: &syn::Path) -> Option<String> {
    let segments: Vec<&syn::PathSegment> = path.segments.iter().collect();
    let last = segments.last()?.ident.to_string();
    let first = segments.first()?.ident.to_string();
    let written = segments
        .iter()
        .map(|s| s.ident.to_string())
        .collect::<Vec<_>>()
        .join("::");
    if last == "transmute"
        && (segments.len() == 1 || matches!(first.as_str(), "std" | "core" | "mem"))
    {
        return Some(
            "`transmute` is not supported in kernels: for a bit cast write `x.to_bits()` (a float's bits as `u16`/`u32`/`u64`) or `f32::from_bits(u)` (also `f64`, `f16`, `bf16`); `as` converts between scalar types by value (`x as u32`)"
                .to_string(),
        );
    }
    if matches!(first.as_str(), "std" | "core" | "alloc") {
        return Some(format!(
            "`{written}` is a function of the standard library, which kernels cannot call: kernels call `#[device]` functions, the intrinsics of `cudajit::prelude` and the scalar methods (`x.sqrt()`, `f32::max(a, b)`), all listed in docs/language.md"
        ));
    }
    // `Type::function`: the segment before the function names a type (capitalised, or
    // with generic arguments), not a module.
    let owner = segments.len().checked_sub(2).map(|i| segments[i])?;
    let owner_name = owner.ident.to_string();
    let is_type =
        !owner.arguments.is_none() || owner_name.chars().next().is_some_and(char::is_uppercase);
    if !is_type {
        return None;
    }
    if matches!(
        owner_name.as_str(),
        "Box" | "Vec" | "String" | "Rc" | "Arc" | "HashMap" | "BTreeMap" | "VecDeque"
    ) {
        return Some(format!(
            "`{owner_name}` is not supported in kernels: a kernel cannot allocate; use a local array (`let mut a = [0.0f32; 8];`), shared memory (`shared_array::<f32>(n)`) or a slice parameter (`&mut [f32]`) filled by the host"
        ));
    }
    // Any other type's: a `#[device]` impl block's associated function (`Vec3::new`).
    None
}

/// The message for an expression kind outside the kernel language.
fn unsupported(expr: &syn::Expr) -> String {
    match expr {
        syn::Expr::Array(_) => {
            return "an array literal `[a, b]` creates a local array as the value of a `let` or of an assignment to one (`let w = [0.25f32, 0.5, 0.25];`, `w = [a, b, c];`): bind it first, then index it or pass its elements".to_string();
        }
        syn::Expr::Repeat(_) => {
            return "`[value; N]` creates a local array only as the value of a `let`: `let mut a = [0.0f32; N];`".to_string();
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

impl Parser<'_> {
    /// A path to a Rust constant (`u32::MAX`, `core::f32::consts::PI`, `consts::TILE`),
    /// recorded for the generated code; its name in the captured syntax is the path as
    /// written.
    fn constant_path(&mut self, path: &syn::Path) -> Option<String> {
        if let Some(segment) = path.segments.iter().find(|s| !s.arguments.is_none()) {
            self.errors.at(
                &segment.arguments,
                "a constant's path in a kernel takes no generic arguments",
            );
            return None;
        }
        let mut name: Vec<String> = path.segments.iter().map(|s| s.ident.to_string()).collect();
        if path.leading_colon.is_some() {
            name.insert(0, String::new());
        }
        let name = name.join("::");
        self.add_constant(&name, path);
        Some(name)
    }
}

impl Parser<'_> {
    /// Whether `path` starts with a generic type parameter of the function (`T::MAX`).
    fn names_generic_type(&self, path: &syn::Path) -> bool {
        path.segments.len() > 1
            && self
                .generics
                .types
                .iter()
                .any(|t| path.segments[0].ident == t)
    }
}

impl Parser<'_> {
    /// `Type::function(args)` of a type (a capitalised segment before the function): the
    /// associated function `Type::function` of a `#[device]` impl block, with the type
    /// recorded so its layout, and with it its methods, reach the lowering. `None` for a
    /// path of a module (`nccl::lsa_barrier_session`).
    fn associated_function(
        &mut self,
        path: &syn::ExprPath,
        call: &syn::ExprCall,
        span: cudajit_core::Span,
    ) -> Option<Option<Expr>> {
        let segments = &path.path.segments;
        let count = segments.len();
        let owner = segments.iter().nth(count.checked_sub(2)?)?;
        let function = segments.last()?;
        let owner_name = owner.ident.to_string();
        let type_like = owner_name.starts_with(|c: char| c.is_ascii_uppercase());
        if !type_like || Scalar::from_rust_name(&owner_name).is_some() {
            return None;
        }
        if !owner.arguments.is_none() || !function.arguments.is_none() {
            self.errors.at(
                path,
                "generic associated functions are not supported in kernels: `#[device]` impl blocks are of structs without generic parameters, and hold functions without them",
            );
            return Some(None);
        }
        let mut type_path = path.path.clone();
        type_path.segments.pop();
        type_path.segments.pop_punct();
        self.record_type(&type_path);
        self.add_associated(&type_path, &function.ident);
        // Arguments as a method's: `Vec3::dot(&a, &b)` passes the receiver by reference.
        let args: Vec<Option<Expr>> = call
            .args
            .iter()
            .map(|arg| self.method_argument(arg))
            .collect();
        let args = args.into_iter().collect::<Option<Vec<Expr>>>();
        Some(args.map(|args| Expr {
            kind: ExprKind::Call {
                callee: cudajit_core::methods::method_function_name(
                    &owner_name,
                    &function.ident.to_string(),
                ),
                generic_args: Vec::new(),
                args,
            },
            span,
        }))
    }
}
