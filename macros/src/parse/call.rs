//! Calls in a kernel body: device functions, associated and path calls (`Vec3::dot(&a, &b)`,
//! `f32::max(a, b)`), methods, their arguments, constants named by path, struct literals.

use cudajit_core::ast::{Expr, ExprKind, GenericArg, Stmt, ValueType};
use cudajit_core::intrinsics::Intrinsic;
use cudajit_core::math::MathFunction;
use cudajit_core::tensor_op::TensorOpName;
use cudajit_core::Scalar;

use super::closure::{ClosureName, CLOSURE_PLACES};
use super::intrinsic_call::{intrinsic_name, INTRINSICS};
use super::parser::Parser;
use super::signature::value_type;
use super::span_at;

impl Parser<'_> {
    pub(super) fn call(&mut self, call: &syn::ExprCall) -> Option<Expr> {
        let span = span_at(call);
        let statement_call = self.is_statement_value(call);
        // Literal arguments (`f([a, b])`, `Vec3::dot(&a, &Vec3 { .. })`) are bound first,
        // for every kind of call: the call is then parsed with their locals.
        if call.args.iter().any(binds_first) {
            let (prelude, args) = self.bind_array_literals(call.args.iter(), None, true)?;
            let mut bound = call.clone();
            bound.args = args.into_iter().collect();
            let parsed = self.call(&bound)?;
            return Some(self.after_prelude(statement_call, prelude, parsed));
        }
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
        if let Some(qself) = &path.qself {
            return self.qualified_call(path, qself, call, span);
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
            if let Some(op) = TensorOpName::from_name(&name) {
                return self.tensor_op(call, op, span);
            }
        }
        // `Pair(a, b)`: a tuple struct's constructor.
        if let Some(literal) = self.tuple_struct_literal(call) {
            return literal;
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
        if let Some(message) = super::refusals::standard_trait_call(&path.path)
            .or_else(|| not_a_device_function(&path.path))
        {
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
        let generic_args = self.generic_arguments(&last.arguments)?;
        let mut plain = path.path.clone();
        if let Some(last) = plain.segments.last_mut() {
            last.arguments = syn::PathArguments::None;
        }
        self.add_callee(&plain);
        // A tuple argument passes as its elements, as a tuple parameter is declared.
        let mut args = Vec::new();
        let mut complete = true;
        // What computes `Option` arguments, run before the call.
        let mut prelude = Vec::new();
        for arg in &call.args {
            if self.is_option_value(arg) && !self.is_tuple_value(arg) {
                match self.option_argument(arg, &mut prelude) {
                    Some(halves) => args.extend(halves),
                    None => complete = false,
                }
                continue;
            }
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
        let call = Expr {
            kind: ExprKind::Call {
                callee,
                generic_args,
                args,
            },
            span,
        };
        Some(self.after_prelude(statement_call, prelude, call))
    }

    /// `call` after the statements that compute its arguments: before the statement when
    /// the call is its whole value ([`Parser::statement_value`]), else in a block
    /// `{ prelude; call }` where the call stands.
    fn after_prelude(&mut self, statement_call: bool, prelude: Vec<Stmt>, call: Expr) -> Expr {
        if statement_call {
            self.pending.extend(prelude);
            return call;
        }
        with_prelude(prelude, call)
    }

    /// Array-literal arguments (`f([a, b, c])`, `v.scaled([1.0, 0.5])`) bound to hidden
    /// locals before the call, as `let w = [a, b, c];` binds one, so that they pass as a
    /// named array does: the statements, and the arguments with each literal replaced by
    /// its local. Binding moves a literal before the arguments (and the receiver) left of
    /// it, so a literal that calls a function after one that does is refused: Rust would
    /// run the earlier call first.
    fn bind_array_literals<'a>(
        &mut self,
        args: impl Iterator<Item = &'a syn::Expr>,
        receiver: Option<&syn::Expr>,
        repeats: bool,
    ) -> Option<(Vec<Stmt>, Vec<syn::Expr>)> {
        let mut prelude = Vec::new();
        let mut out = Vec::new();
        let mut call_before = receiver.is_some_and(calls_function);
        for arg in args {
            // `&[a, b]`, `&mut [0.0; 4]`, `&Vec3 { .. }`: a reference to a temporary is one
            // to a hidden local bound to it, as Rust extends the temporary's life.
            if let (syn::Expr::Reference(reference), true) = (arg, repeats) {
                if matches!(
                    &*reference.expr,
                    syn::Expr::Array(_) | syn::Expr::Repeat(_) | syn::Expr::Struct(_)
                ) {
                    if call_before && calls_function(arg) {
                        self.errors.at(arg, LITERAL_AFTER_CALL);
                        return None;
                    }
                    let local = self.bind_array_literal(&reference.expr);
                    prelude.append(&mut self.pending);
                    let local = local?;
                    out.push(match reference.mutability {
                        Some(_) => syn::parse_quote!(&mut #local),
                        None => syn::parse_quote!(&#local),
                    });
                    continue;
                }
            }
            let literal = match arg {
                syn::Expr::Array(_) => true,
                syn::Expr::Repeat(_) => repeats,
                // `f(Field { g: [a, b] })`: the struct is bound, its array with it.
                syn::Expr::Struct(value) => repeats && has_array_field(value),
                _ => false,
            };
            if !literal {
                call_before |= calls_function(arg);
                out.push(arg.clone());
                continue;
            }
            if call_before && calls_function(arg) {
                self.errors.at(arg, LITERAL_AFTER_CALL);
                return None;
            }
            let local = self.bind_array_literal(arg);
            prelude.append(&mut self.pending);
            out.push(local?);
        }
        Some((prelude, out))
    }

    pub(super) fn method_call(&mut self, call: &syn::ExprMethodCall) -> Option<Expr> {
        let span = span_at(call);
        let statement_call = self.is_statement_value(call);
        if call.args.iter().any(binds_first) {
            let (prelude, args) =
                self.bind_array_literals(call.args.iter(), Some(&call.receiver), true)?;
            let mut bound = call.clone();
            bound.args = args.into_iter().collect();
            let parsed = self.method_call(&bound)?;
            return Some(self.after_prelude(statement_call, prelude, parsed));
        }
        let method = call.method.to_string();
        if self.refused_method(call) {
            return None;
        }
        if let Some(value) = self.option_value_method(call) {
            return value;
        }
        if let Some(value) = self.ordering_method(call) {
            return value;
        }
        if super::option_value::is_optional_consumer(call)
            || (self.is_option_value(&call.receiver)
                && matches!(
                    method.as_str(),
                    "map" | "filter" | "and_then" | "or" | "or_else"
                ))
        {
            self.errors.at(call, super::option_value::OPTION_PLACES);
            return None;
        }
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
                let message = if matches!(method.as_str(), "sum" | "product" | "collect") {
                    // `it.sum::<f32>()` on a name: the chain is not written where it ends.
                    format!("`{method}::<..>()` ends an iterator chain written in the same expression, which this receiver is not: write instead the whole chain in place, `x.iter().{method}::<f32>()`")
                } else {
                    "generic methods are not supported in kernels: `#[device]` impl blocks hold methods without generic parameters".to_string()
                };
                self.errors.at(&call.turbofish, message);
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
            let call = Expr {
                kind: ExprKind::MethodCall {
                    receiver: Box::new(receiver?),
                    method,
                    args: args.into_iter().collect::<Option<Vec<Expr>>>()?,
                },
                span,
            };
            return Some(call);
        };
        let args: Vec<&syn::Expr> = call.args.iter().collect();
        self.math(function, &call.receiver, &args, call, span)
    }

    /// An argument of a function call: a value, or `&name` / `&mut name` for the reference
    /// parameters of `#[extern_device]` functions (the lowering checks the callee takes one).
    /// An argument of a method of a `#[device]` impl block, called as `a.m(..)` or
    /// `Type::m(..)`: a closure, a reference (`&b`, `&mut s.pos`) or a value.
    pub(super) fn method_argument(&mut self, arg: &syn::Expr) -> Option<Expr> {
        match self.closure_argument(arg) {
            Some(closure) => closure,
            None => self.call_argument(arg),
        }
    }

    pub(super) fn call_argument(&mut self, arg: &syn::Expr) -> Option<Expr> {
        if let Some(reference) = self.dyn_local_argument(arg) {
            return reference;
        }
        let syn::Expr::Reference(reference) = arg else {
            return self.expr(arg);
        };
        if super::sub_slice::indexed_range(reference).is_some() {
            return self.sub_slice(reference);
        }
        // A named struct, array or scalar, a slice element (`&mut out[i]`) or a field
        // (`&s.pos`), parenthesised or not; any other value is a temporary the lowering
        // makes for the call (`&mut (x + 1)`), as Rust does.
        let mut target = &*reference.expr;
        while let syn::Expr::Paren(paren) = target {
            target = &paren.expr;
        }
        let place = self.expr(target)?;
        Some(Expr {
            span: span_at(arg),
            kind: ExprKind::Reference {
                mutable: reference.mutability.is_some(),
                place: Box::new(place),
            },
        })
    }

    /// `T::zero()`, `T::one()`, `f32::sqrt(x)`.
    pub(super) fn associated(
        &mut self,
        call: &syn::ExprCall,
        ty: ValueType,
        name: &str,
        span: cudajit_core::Span,
    ) -> Option<Expr> {
        // `f16::from_f32(x)`: the conversions of the 16-bit float types are `as` casts.
        // `f64::from(x)` too: `From` between scalars is implemented only where the
        // conversion is exact, where it is what `x as f64` gives (rustc checked the impl).
        if let ("from_f32" | "from_f64" | "from", ValueType::Scalar(to), [value]) =
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
        // `T::from_f32(v)` of `T: Real`: the cast to the type the specialisation gives `T`.
        if let ("from_f32" | "from_f64", ValueType::Generic(_), [value]) =
            (name, &ty, call.args.iter().collect::<Vec<_>>().as_slice())
        {
            return Some(Expr {
                kind: ExprKind::ConvertTo {
                    value: Box::new(self.expr(value)?),
                    ty,
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
            let message = match &ty {
                ValueType::Scalar(to) if name == "try_from" => format!(
                    "`{to}::{name}(x)` is not supported in kernels: write instead a cast, `x as {to}`, after checking the range",
                    to = to.rust_name()
                ),
                ValueType::Generic(param) if self.generics.user_bounded.iter().any(|t| t == param) => format!(
                    "`{param}::{name}()` calls an associated function of a trait through a type parameter, which kernels do not: write instead a method on a value of `{param}` passed in (`s.{name}()`)"
                ),
                _ => format!("`{name}` is not a supported associated function of a scalar type; supported: `zero()`, `one()` and the scalar methods"),
            };
            self.errors.at(&call.func, message);
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

    /// `Type::function(args)` of a type (a capitalised segment before the function): the
    /// associated function `Type::function` of a `#[device]` impl block, with the type
    /// recorded so its layout, and with it its methods, reach the lowering. `None` for a
    /// path of a module (`nccl::lsa_barrier_session`).
    pub(super) fn associated_function(
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
        let mut owner_path = path.path.clone();
        owner_path.segments.pop();
        owner_path.segments.pop_punct();
        // `Pair::<f32>::new(..)`: the instance's (its arguments bind the block's).
        let owner_name = match super::signature::struct_name(&owner_path, &self.generics) {
            Some(name) if function.arguments.is_none() => name,
            _ => {
                self.errors.at(
                    path,
                    "generic associated functions are not supported in kernels: call `Type::function(..)` (a generic struct's arguments on the type, `Pair::<f32>::new(..)`, scalar types, the function's parameters or integers), with the function's own type parameters inferred",
                );
                return Some(None);
            }
        };
        // `Circle::area(&c)`, `Shape::area(&c)`, `Shape::area(s)` of `s: &S`: a method
        // called by path, on a reference as its receiver. The receiver's type is the struct's (lowering finds the method,
        // of an inherent block or of a trait, through it), and the call is checked as a
        // method call is (`generate/method_check.rs`), which a trait's method passes too:
        // `Shape` may be a trait, so no type is recorded. Any other path call is of an
        // associated function (`Vec3::new(..)`), with its type recorded.
        let by_reference = match call.args.first() {
            Some(syn::Expr::Reference(_)) => true,
            // A reference parameter (`s: &S`, `self`) passed on.
            Some(syn::Expr::Path(arg)) => arg.path.get_ident().is_some_and(|ident| {
                ident == "self"
                    || self.reference_names.iter().any(|n| ident == n)
                    || self.is_dyn_local(&ident.to_string())
            }),
            _ => false,
        };
        if by_reference {
            let start = function.ident.span().start();
            self.method_sites.push((start.line, start.column));
        } else {
            self.record_struct(&owner_path);
            self.add_associated(&owner_path, &function.ident);
        }
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

    /// `<S as Shape>::area(&s)`, `<Circle as Shape>::weighted(&c, k)`: a trait's function
    /// for the type named, captured as `<S as Shape>::area` (an instance for a struct
    /// names the struct there, `lower/generic_structs.rs`), checked as a method call.
    fn qualified_call(
        &mut self,
        path: &syn::ExprPath,
        qself: &syn::QSelf,
        call: &syn::ExprCall,
        span: cudajit_core::Span,
    ) -> Option<Expr> {
        let segments: Vec<&syn::PathSegment> = path.path.segments.iter().collect();
        let ty = match value_type(&qself.ty, &self.generics) {
            Some(ValueType::Struct(name) | ValueType::Generic(name)) => Some(name),
            _ => None,
        };
        let (Some(ty), 1, [trait_segment, function]) = (ty, qself.position, segments.as_slice())
        else {
            self.errors.at(
                path,
                "a qualified call names a struct or a type parameter and a trait: `<S as Shape>::area(&s)` (or call the method, `s.area()`)",
            );
            return None;
        };
        if !trait_segment.arguments.is_none() || !function.arguments.is_none() {
            self.errors.at(
                path,
                "generic traits and generic trait functions are not supported on the device: `<S as Shape>::area(&s)`",
            );
            return None;
        }
        if call.args.is_empty() {
            self.errors.at(
                call,
                "a trait's functions without `self` are not supported on the device yet: write an inherent associated function (`Circle::new(..)`)",
            );
            return None;
        }
        let start = function.ident.span().start();
        self.method_sites.push((start.line, start.column));
        let args: Vec<Option<Expr>> = call
            .args
            .iter()
            .map(|arg| self.method_argument(arg))
            .collect();
        Some(Expr {
            kind: ExprKind::Call {
                callee: cudajit_core::methods::user_trait_function_name(
                    &ty,
                    &trait_segment.ident.to_string(),
                    &function.ident.to_string(),
                ),
                generic_args: Vec::new(),
                args: args.into_iter().collect::<Option<Vec<Expr>>>()?,
            },
            span,
        })
    }

    /// A path to a Rust constant (`u32::MAX`, `core::f32::consts::PI`, `consts::TILE`),
    /// recorded for the generated code; its name in the captured syntax is the path as
    /// written.
    pub(super) fn constant_path(&mut self, path: &syn::Path) -> Option<String> {
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

    /// Whether `path` starts with a generic type parameter of the function (`T::MAX`).
    pub(super) fn names_generic_type(&self, path: &syn::Path) -> bool {
        path.segments.len() > 1
            && self
                .generics
                .types
                .iter()
                .any(|t| path.segments[0].ident == t)
    }

    /// Whether `ty` is a type parameter of the function bounded by a user trait (`S` of
    /// `<S as Shape>`).
    pub(super) fn is_user_bounded(&self, ty: &syn::Type) -> bool {
        matches!(ty, syn::Type::Path(p) if p.qself.is_none()
            && p.path.get_ident().is_some_and(|i| self.generics.user_bounded.iter().any(|t| i == t)))
    }

    /// `Name { field: value, .. }` of a `#[derive(DeviceCopy)]` struct.
    pub(super) fn struct_literal(&mut self, literal: &syn::ExprStruct) -> Option<Expr> {
        let span = span_at(literal);
        let statement_value = self.is_statement_value(literal);
        if let Some(rest) = &literal.rest {
            self.errors.at(
                rest,
                "`..base` is not supported in kernels: give every field",
            );
            return None;
        }
        // `Pair { .. }`, `Pair::<f32> { .. }` (a generic struct's arguments given, or
        // inferred from the fields when lowering).
        let ident = match (
            &literal.qself,
            super::signature::struct_name(&literal.path, &self.generics),
        ) {
            (None, Some(name)) => name,
            _ => {
                self.errors.at(
                    &literal.path,
                    "name the struct by its path, with a generic struct's arguments scalar types, the function's parameters or integers (`Team { .. }`, `nccl::Team { .. }`, `Pair::<f32> { .. }`)",
                );
                return None;
            }
        };
        let mut fields = Vec::new();
        // `g: [a, b]`: an array literal's field value is bound to a hidden local first.
        let (prelude, values) =
            self.bind_array_literals(literal.fields.iter().map(|f| &f.expr), None, false)?;
        for (field, value) in literal.fields.iter().zip(&values) {
            let syn::Member::Named(name) = &field.member else {
                self.errors
                    .at(field, "fields are named: `Name { field: value }`");
                return None;
            };
            // `history: [0.5; 4]`: an array field's value.
            let value = match value {
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
        self.record_struct(&literal.path);
        let value = Expr {
            kind: ExprKind::StructLiteral {
                ty: ident.to_string(),
                fields,
            },
            span,
        };
        if !statement_value && !prelude.is_empty() {
            self.errors.at(
                literal,
                "a struct literal with an array literal field is the value of a `let`, an assignment, an argument or a result: bind it first (`let f = Field { g: [a, b] };`), then use it",
            );
            return None;
        }
        Some(self.after_prelude(statement_value, prelude, value))
    }
}

/// `path::name::<T>` without its turbofish, so intrinsics taking a type are recognised.
pub(super) fn strip_last_arguments(func: &syn::Expr) -> syn::Expr {
    let mut func = func.clone();
    if let syn::Expr::Path(path) = &mut func {
        if let Some(last) = path.path.segments.last_mut() {
            last.arguments = syn::PathArguments::None;
        }
    }
    func
}

/// Why the function at `path` cannot be a `#[device]` function, for paths that visibly
/// name something else: the standard library, or an associated function of a type
/// (`Vec2::new`, `Vec::<f32>::with_capacity`). `None` for a path to a free function.
pub(super) fn not_a_device_function(path: &syn::Path) -> Option<String> {
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

/// Whether `path` names a constant by Rust's naming convention: its last segment in
/// SCREAMING_CASE (`STAGES`, `cfg::TILE_M`), with no generic arguments.
fn names_constant(path: &syn::Path) -> bool {
    path.segments.iter().all(|s| s.arguments.is_none())
        && path.segments.last().is_some_and(|last| {
            let name = last.ident.to_string();
            name.chars().any(|c| c.is_ascii_uppercase())
                && name
                    .chars()
                    .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
        })
}

/// Why a literal argument cannot be bound before the call.
const LITERAL_AFTER_CALL: &str = "this literal calls a function, and an argument before it does too: bind it with `let` before the call (`let w = [..];`), so the calls run in the order written";

/// `call` after the statements that compute its arguments: `{ prelude; call }`.
fn with_prelude(prelude: Vec<Stmt>, call: Expr) -> Expr {
    if prelude.is_empty() {
        return call;
    }
    let span = call.span;
    Expr {
        kind: ExprKind::Block(cudajit_core::ast::Block {
            stmts: prelude,
            tail: Some(Box::new(call)),
            span,
        }),
        span,
    }
}

/// Whether evaluating `expr` calls a function or a method (or expands a macro).
fn calls_function(expr: &syn::Expr) -> bool {
    struct Finder(bool);
    impl syn::visit_mut::VisitMut for Finder {
        fn visit_expr_mut(&mut self, expr: &mut syn::Expr) {
            if matches!(
                expr,
                syn::Expr::Call(_) | syn::Expr::MethodCall(_) | syn::Expr::Macro(_)
            ) {
                self.0 = true;
                return;
            }
            syn::visit_mut::visit_expr_mut(self, expr);
        }
    }
    let mut finder = Finder(false);
    syn::visit_mut::VisitMut::visit_expr_mut(&mut finder, &mut expr.clone());
    finder.0
}

/// Whether the argument `arg` is a literal bound to a hidden local before its call
/// ([`Parser::bind_array_literals`]).
fn binds_first(arg: &syn::Expr) -> bool {
    match arg {
        syn::Expr::Array(_) | syn::Expr::Repeat(_) => true,
        syn::Expr::Struct(value) => has_array_field(value),
        syn::Expr::Reference(reference) => matches!(
            &*reference.expr,
            syn::Expr::Array(_) | syn::Expr::Repeat(_) | syn::Expr::Struct(_)
        ),
        _ => false,
    }
}

/// Whether a field of the struct literal `value` is an array literal (`Field { g: [a, b] }`).
fn has_array_field(value: &syn::ExprStruct) -> bool {
    value
        .fields
        .iter()
        .any(|field| matches!(field.expr, syn::Expr::Array(_)))
}

impl Parser<'_> {
    /// The turbofish of a call (`::<f32, 3>`): types, and consts — a const generic
    /// parameter of the caller and a module constant parse as type paths, and are values.
    pub(super) fn generic_arguments(
        &mut self,
        arguments: &syn::PathArguments,
    ) -> Option<Vec<GenericArg>> {
        Some(match arguments {
            syn::PathArguments::None => Vec::new(),
            syn::PathArguments::AngleBracketed(angle) => {
                let mut out = Vec::new();
                for arg in &angle.args {
                    match arg {
                        syn::GenericArgument::Type(ty) => {
                            // A const generic parameter of the caller (`N`) and a module
                            // constant (`STAGES`, `cfg::TILE`: SCREAMING_CASE, as Rust names
                            // constants and never types) parse as type paths: they are values.
                            if let syn::Type::Path(p) = ty {
                                let ident = p.path.get_ident().map(|i| i.to_string());
                                let caller_const = ident
                                    .as_ref()
                                    .is_some_and(|n| self.generics.consts.contains(n));
                                let generic_type = ident
                                    .as_ref()
                                    .is_some_and(|n| self.generics.types.contains(n));
                                if caller_const || (!generic_type && names_constant(&p.path)) {
                                    let path = syn::Expr::Path(syn::ExprPath {
                                        attrs: Vec::new(),
                                        qself: None,
                                        path: p.path.clone(),
                                    });
                                    out.push(GenericArg::Const(self.expr(&path)?));
                                    continue;
                                }
                            }
                            match value_type(ty, &self.generics) {
                                Some(value) => out.push(GenericArg::Type(value)),
                                None => {
                                    self.errors.at(
                                        ty,
                                        "generic arguments are scalar types or generic parameters",
                                    );
                                    return None;
                                }
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
        })
    }
}
