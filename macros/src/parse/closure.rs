//! Closures: `let f = |x: f32| x * scale;` called in the body, and closures passed to
//! `#[device]` functions that take `F: Fn(..) -> R`.
//!
//! A closure the body calls itself is inlined where it is called, as rustc inlines a
//! closure that does not escape: the call becomes a block that evaluates the arguments,
//! binds the parameters to them and gives the body's value. The body sees the names of
//! the closure's environment, so a name it uses that is declared again between the
//! closure and a call is refused (inlined, it would see the new one); `move` closures,
//! which copy their environment when made, are refused for the same reason. A closure
//! passed to a device function is captured syntax of its own ([`ExprKind::Closure`]):
//! its body, and the names of the caller's it reads, which the instance of the device
//! function made for it takes as hidden arguments (`cudajit_core`'s `lower::closures`).
//! A closure is never a value: it is called, or passed to a device function.

use cudajit_core::ast::{Block, ClosureParam, Expr, ExprKind, Stmt};
use proc_macro2::{TokenStream, TokenTree};
use quote::ToTokens;

use super::parser::Parser;
use super::signature::value_type;
use super::span_at;

/// Where closures may appear, for a closure or a closure's name anywhere else.
pub(super) const CLOSURE_PLACES: &str = "a closure is bound with `let` and called (`let f = |x: f32| x * s; f(v)`), or passed to a `#[device]` function taking `F: Fn(..) -> R`; it cannot be stored, returned or used as a value";

/// For each name a closure's body mentions, where that name was bound when the closure
/// was made (`Parser::binding_position`).
type Environment = Vec<(String, Option<(usize, usize)>)>;

/// A closure bound by `let`: its syntax and its environment.
pub(super) struct LocalClosure {
    closure: syn::ExprClosure,
    environment: Environment,
}

/// What a name called like a function is.
pub(super) enum ClosureName {
    /// A closure local, entry `.0` of the parser's closures.
    Local(usize),
    /// A closure parameter of the device function.
    Param,
}

/// The marker binding of a closure local; `name.#` markers end the searches for tuples and
/// aliases of the name, as a new binding does.
fn local_marker(name: &str, index: usize) -> String {
    format!("{name}.#closure{index}")
}

/// The marker binding of a closure parameter.
pub(super) fn param_marker(name: &str) -> String {
    format!("{name}.#closure")
}

/// Whether a written type holds a `dyn Fn..` closure (`Box<dyn Fn(f32) -> f32>`).
pub(super) fn is_boxed_closure(ty: &syn::Type) -> bool {
    let tokens: Vec<String> = ty
        .to_token_stream()
        .into_iter()
        .map(|t| t.to_string())
        .collect();
    tokens
        .windows(2)
        .any(|pair| pair[0] == "dyn" && matches!(pair[1].as_str(), "Fn" | "FnMut" | "FnOnce"))
}

/// The message for a `dyn Fn` closure.
pub(super) const DYN_CLOSURE: &str = "`dyn Fn` closures would be called indirectly, which kernels do not do: take `F: Fn(..) -> R` (or `impl Fn(..) -> R`), so each closure is compiled into the function";

/// Every identifier in `tokens`, each once, in order.
fn mentioned(tokens: TokenStream, out: &mut Vec<String>) {
    for token in tokens {
        match token {
            TokenTree::Ident(ident) => {
                let name = ident.to_string();
                if !out.contains(&name) {
                    out.push(name);
                }
            }
            TokenTree::Group(group) => mentioned(group.stream(), out),
            _ => {}
        }
    }
}

impl Parser<'_> {
    /// `let name = |..| body;`: recorded for the calls, which inline it.
    pub(super) fn closure_let(&mut self, name: &str, closure: &syn::ExprClosure) -> Option<Stmt> {
        let params = self.closure_params(closure)?;
        let mut names = Vec::new();
        mentioned(closure.body.to_token_stream(), &mut names);
        let environment = names
            .into_iter()
            .filter(|n| !params.iter().any(|p| &p.name == n))
            .map(|n| {
                let position = self.binding_position(&n);
                (n, position)
            })
            .collect();
        let index = self.local_closures.len();
        self.local_closures.push(LocalClosure {
            closure: closure.clone(),
            environment,
        });
        self.bind(name);
        self.bind(&local_marker(name, index));
        // Nothing runs where a closure is made.
        Some(Stmt::Block(Block {
            stmts: Vec::new(),
            tail: None,
            span: span_at(closure),
        }))
    }

    /// Whether the innermost binding of `name` is a closure, and which.
    pub(super) fn closure_name(&self, name: &str) -> Option<ClosureName> {
        let marker = self.innermost_marker(name)?;
        if marker == param_marker(name) {
            return Some(ClosureName::Param);
        }
        marker
            .strip_prefix(&format!("{name}.#closure"))?
            .parse()
            .ok()
            .map(ClosureName::Local)
    }

    /// The closure of `call`'s callee, a closure local, inlined: a value, or with
    /// `statement` the statement it runs.
    pub(super) fn inline_closure(
        &mut self,
        index: usize,
        call: &syn::ExprCall,
        statement: bool,
    ) -> Option<Result<Expr, Stmt>> {
        let span = span_at(call);
        let closure = self.local_closures[index].closure.clone();
        let environment = std::mem::take(&mut self.local_closures[index].environment);
        let moved = environment
            .iter()
            .find(|(name, position)| self.binding_position(name) != *position)
            .map(|(name, _)| name.clone());
        self.local_closures[index].environment = environment;
        if let Some(name) = moved {
            self.errors.at(
                call,
                format!("`{name}`, which the closure uses, is declared again between the closure and this call: rename one of them (a closure called in a kernel is inlined where it is called)"),
            );
            return None;
        }
        let params = self.closure_params(&closure)?;
        if params.len() != call.args.len() {
            self.errors.at(
                call,
                format!(
                    "the closure takes {} arguments, {} given",
                    params.len(),
                    call.args.len()
                ),
            );
            return None;
        }
        // The arguments first, in the caller's scope; then the parameters, bound to them.
        let mut stmts = Vec::new();
        let mut temps = Vec::new();
        for arg in &call.args {
            let value = self.expr(arg)?;
            let temp = self.fresh_name("closure.arg");
            stmts.push(Stmt::Let {
                name: temp.clone(),
                mutable: false,
                ty: None,
                init: Some(value),
                span,
            });
            temps.push(temp);
        }
        self.push_scope();
        for (param, temp) in params.into_iter().zip(temps) {
            self.bind(&param.name);
            stmts.push(Stmt::Let {
                name: param.name,
                mutable: false,
                ty: param.ty,
                init: Some(Expr {
                    kind: ExprKind::Var(temp),
                    span,
                }),
                span,
            });
        }
        let body = if statement {
            self.closure_body_stmt(&closure.body).map(Err)
        } else {
            self.expr(&closure.body).map(Ok)
        };
        self.pop_scope();
        Some(match body? {
            Ok(value) => Ok(Expr {
                kind: ExprKind::Block(Block {
                    stmts,
                    tail: Some(Box::new(value)),
                    span,
                }),
                span,
            }),
            Err(stmt) => {
                stmts.push(stmt);
                Err(Stmt::Block(Block {
                    stmts,
                    tail: None,
                    span,
                }))
            }
        })
    }

    /// A closure body run for its effect (`|| count += 1`).
    fn closure_body_stmt(&mut self, body: &syn::Expr) -> Option<Stmt> {
        match body {
            syn::Expr::Block(block) => {
                let block = self.block(&block.block);
                Some(Stmt::Block(block))
            }
            other => self.expr_stmt(other),
        }
    }

    /// `op(args)` where `op` is a closure parameter of this device function.
    pub(super) fn closure_param_call(
        &mut self,
        name: String,
        call: &syn::ExprCall,
    ) -> Option<Expr> {
        let mut args = Vec::new();
        for arg in &call.args {
            args.push(self.expr(arg));
        }
        Some(Expr {
            kind: ExprKind::ClosureCall {
                callee: name,
                args: args.into_iter().collect::<Option<_>>()?,
            },
            span: span_at(call),
        })
    }

    /// A closure passed to a device function, written there (`|a, b| a + b`), the name of
    /// a closure local or of this function's closure parameter, or a reference to either
    /// (`&f`: a closure that only reads what it captures passes alike by reference);
    /// `None` when `arg` is none of them.
    pub(super) fn closure_argument(&mut self, arg: &syn::Expr) -> Option<Option<Expr>> {
        let (closure, environment) = match arg {
            syn::Expr::Closure(closure) => (closure.clone(), None),
            syn::Expr::Reference(reference) if reference.mutability.is_none() => {
                return self.closure_argument(&reference.expr);
            }
            syn::Expr::Paren(paren) => return self.closure_argument(&paren.expr),
            syn::Expr::Path(path) => {
                let name = path.path.get_ident()?.to_string();
                match self.closure_name(&name)? {
                    ClosureName::Local(index) => {
                        let local = &self.local_closures[index];
                        (local.closure.clone(), Some(local.environment.clone()))
                    }
                    ClosureName::Param => return Some(self.closure_passed_on(&name, arg)),
                }
            }
            _ => return None,
        };
        Some(self.passed_closure(arg, &closure, environment))
    }

    /// This function's closure parameter `name` passed on to another device function: the
    /// closure `|a, b| name(a, b)`, which this function's instance for its own closure
    /// rewrites into that closure's body (`cudajit_core`'s `lower::closures`), so the
    /// callee's instance is made for the very closure this one was given.
    fn closure_passed_on(&mut self, name: &str, arg: &syn::Expr) -> Option<Expr> {
        let span = span_at(arg);
        let arity = self
            .generics
            .closure_params
            .iter()
            .find(|(param, _)| param == name)
            .map(|(_, arity)| *arity)?;
        // `$` cannot start a Rust name: these never meet the function's own.
        let params: Vec<ClosureParam> = (0..arity)
            .map(|k| ClosureParam {
                name: format!("${name}.arg{k}"),
                ty: None,
            })
            .collect();
        let args = params
            .iter()
            .map(|p| Expr {
                kind: ExprKind::Var(p.name.clone()),
                span,
            })
            .collect();
        Some(Expr {
            kind: ExprKind::Closure {
                params,
                body: Box::new(Expr {
                    kind: ExprKind::ClosureCall {
                        callee: name.to_owned(),
                        args,
                    },
                    span,
                }),
                captures: Vec::new(),
            },
            span,
        })
    }

    fn passed_closure(
        &mut self,
        arg: &syn::Expr,
        closure: &syn::ExprClosure,
        environment: Option<Environment>,
    ) -> Option<Expr> {
        let span = span_at(arg);
        let params = self.closure_params(closure)?;
        if let Some(name) = environment.iter().flatten().find_map(|(name, position)| {
            (self.binding_position(name) != *position).then(|| name.clone())
        }) {
            self.errors.at(
                arg,
                format!("`{name}`, which the closure uses, is declared again between the closure and this call: rename one of them"),
            );
            return None;
        }
        let mut names = Vec::new();
        mentioned(closure.body.to_token_stream(), &mut names);
        if let Some(generic) = names.iter().find(|n| self.generics.types.contains(n)) {
            self.errors.at(
                &closure.body,
                format!("a closure passed to a `#[device]` function cannot name the generic type `{generic}` in its body: it is compiled in the function it is passed to; convert in the caller, or annotate the closure's parameters"),
            );
            return None;
        }
        self.push_scope();
        for param in &params {
            self.bind(&param.name);
        }
        let body = self.expr(&closure.body);
        self.pop_scope();
        let body = body?;
        // What it reads of the caller: the variables of its body that name the caller's
        // bindings (and the Rust constants it names, known only here), not its own
        // parameters. Variables, not every identifier: a field (`p.scale`), a method or a
        // path segment that happens to share a local's name is not a capture.
        let mut captures = Vec::new();
        for name in body.variables() {
            if params.iter().any(|p| p.name == name) {
                continue;
            }
            // Rust constants the body names are not captured: the function's instance
            // for this closure is given their values (`lower::closures`).
            if !self.is_bound(&name) {
                continue;
            }
            if self.tuple_arity(&name).is_some() || self.alias(&name).is_some() {
                self.errors.at(
                    &closure.body,
                    format!("a closure passed to a `#[device]` function captures scalars, slices and structs; copy what it needs of `{name}` into a local first"),
                );
                return None;
            }
            if self.closure_name(&name).is_some() {
                self.errors.at(
                    &closure.body,
                    format!("a closure passed to a `#[device]` function cannot call the closure `{name}`: write it as a `#[device]` function"),
                );
                return None;
            }
            captures.push(Expr {
                kind: ExprKind::Var(name),
                span,
            });
        }
        Some(Expr {
            kind: ExprKind::Closure {
                params,
                body: Box::new(body),
                captures,
            },
            span,
        })
    }

    /// The parameters of a closure in a form the kernel language takes; the rest reported.
    fn closure_params(&mut self, closure: &syn::ExprClosure) -> Option<Vec<ClosureParam>> {
        if let Some(token) = &closure.capture {
            self.errors.at(
                token,
                "`move` closures are not supported in kernels: they copy what they capture when made, and kernels inline closures where they are called; remove `move`",
            );
            return None;
        }
        if closure.asyncness.is_some() || closure.constness.is_some() || closure.lifetimes.is_some()
        {
            self.errors.at(
                closure,
                "only plain closures `|a, b| ..` are supported in kernels",
            );
            return None;
        }
        let mut returns = Vec::new();
        mentioned(closure.body.to_token_stream(), &mut returns);
        if returns.iter().any(|n| n == "return") {
            self.errors.at(
                &closure.body,
                "`return` in a closure is not supported in kernels: end the closure's body with its value",
            );
            return None;
        }
        let mut params = Vec::new();
        for input in &closure.inputs {
            let (pat, ty) = match input {
                syn::Pat::Type(typed) => (&*typed.pat, Some(&*typed.ty)),
                other => (other, None),
            };
            let syn::Pat::Ident(ident) = pat else {
                self.errors.at(
                    pat,
                    "closure parameters are plain names, with or without a type: `|a: f32, b| ..`",
                );
                return None;
            };
            let ty = match ty {
                Some(ty) => match value_type(ty, &self.generics) {
                    Some(ty) => Some(ty),
                    None => {
                        self.errors.at(
                            ty,
                            "closure parameters are scalars (`f32`, a generic `T`) or untyped",
                        );
                        return None;
                    }
                },
                None => None,
            };
            params.push(ClosureParam {
                name: ident.ident.to_string(),
                ty,
            });
        }
        Some(params)
    }
}
