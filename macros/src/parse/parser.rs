//! The parser of a function body: what it knows while walking the body (the names in
//! scope, the device functions and types it has met) and the state of statements that
//! expand into several. How statements and expressions are parsed is in `stmt.rs`,
//! `expr.rs` and the modules beside them, each adding methods to [`Parser`].

use cudajit_core::ast::Stmt;

use super::signature::{FnKind, GenericNames};
use crate::errors::Errors;

/// Walks a kernel body, turning syn nodes into captured syntax and recording every
/// unsupported construct in `errors`.
pub(crate) struct Parser<'e> {
    pub(super) errors: &'e mut Errors,
    /// Names in scope (parameters, `let`s, `for` variables, const generics), innermost
    /// scope last, so a name the kernel cannot see (a constant, a static) is an error at
    /// compile time.
    scopes: Vec<Vec<String>>,
    /// Generic type and const parameters of the function.
    pub(super) generics: GenericNames,
    pub(super) kind: FnKind,
    /// The function's own name, to reject direct recursion here.
    pub(super) own_name: String,
    /// Device functions called, each once, in order of first call.
    callees: Vec<syn::Path>,
    /// `DeviceCopy` enums named by `Enum::Variant` and structs built by `Name { .. }` in
    /// the body, so their layouts reach the lowering even when no parameter has that type.
    enums: Vec<syn::Path>,
    /// Whether the function returns a tuple: its `return (a, b)` and final `(a, b)` are
    /// the tuple value, not tuple locals.
    pub(crate) returns_tuple: bool,
    /// Set by `fn_body` for the next block parsed: its tail is the function's value.
    pub(super) function_tail: bool,
    /// Statements that a statement expanded into, before the one it returned (tuples).
    pub(super) pending: Vec<Stmt>,
    /// Counter for the names of temporaries (`$tuple0`, ...).
    temps: usize,
}

impl<'e> Parser<'e> {
    pub(crate) fn new(
        errors: &'e mut Errors,
        generics: GenericNames,
        kind: FnKind,
        own_name: String,
    ) -> Self {
        let consts = generics.consts.clone();
        Parser {
            errors,
            scopes: vec![consts],
            generics,
            kind,
            own_name,
            callees: Vec::new(),
            enums: Vec::new(),
            returns_tuple: false,
            function_tail: false,
            pending: Vec::new(),
            temps: 0,
        }
    }

    /// Records a call of the device function at `path`.
    pub(super) fn add_callee(&mut self, path: &syn::Path) {
        let text = quote::quote!(#path).to_string();
        if !self
            .callees
            .iter()
            .any(|p| quote::quote!(#p).to_string() == text)
        {
            self.callees.push(path.clone());
        }
    }

    /// `Enum::Variant` (or `path::to::Enum::Variant`): the enum and variant names, with the
    /// enum recorded. `None` for any other path.
    pub(super) fn enum_variant(&mut self, path: &syn::Path) -> Option<(String, String)> {
        let count = path.segments.len();
        if count < 2 || path.segments.iter().any(|s| !s.arguments.is_none()) {
            return None;
        }
        let (ty, variant) = (&path.segments[count - 2], &path.segments[count - 1]);
        // In a longer path the enum is the segment named like a type (`nccl::MemoryOrder`),
        // not a module (`core::f32::consts::PI` is a constant).
        let type_like = ty
            .ident
            .to_string()
            .starts_with(|c: char| c.is_ascii_uppercase());
        if ty.ident == "Self"
            || (count > 2 && !type_like)
            || cudajit_core::Scalar::from_rust_name(&ty.ident.to_string()).is_some()
        {
            return None;
        }
        let mut enum_path = path.clone();
        enum_path.segments.pop();
        enum_path.segments.pop_punct();
        self.record_type(&enum_path);
        Some((ty.ident.to_string(), variant.ident.to_string()))
    }

    /// Records a `DeviceCopy` type the body names (by its path), for its layout.
    pub(super) fn record_type(&mut self, path: &syn::Path) {
        let text = quote::quote!(#path).to_string();
        if !self
            .enums
            .iter()
            .any(|p| quote::quote!(#p).to_string() == text)
        {
            self.enums.push(path.clone());
        }
    }

    /// The device functions called and the types named.
    pub(crate) fn into_uses(self) -> (Vec<syn::Path>, Vec<syn::Path>) {
        (self.callees, self.enums)
    }

    pub(super) fn push_scope(&mut self) {
        self.scopes.push(Vec::new());
    }

    pub(super) fn pop_scope(&mut self) {
        self.scopes.pop();
    }

    /// Declares `name` in the innermost scope.
    pub(crate) fn bind(&mut self, name: &str) {
        if let Some(scope) = self.scopes.last_mut() {
            scope.push(name.to_owned());
        }
    }

    /// Declares `name` as a tuple local of `arity` scalar elements (`name.0`, ...).
    pub(super) fn bind_tuple_name(&mut self, name: &str, arity: usize) {
        self.bind(&format!("{name}.#{arity}"));
    }

    /// The number of elements of `name` when its innermost binding is a tuple local.
    pub(super) fn tuple_arity(&self, name: &str) -> Option<usize> {
        let marker = format!("{name}.#");
        for binding in self
            .scopes
            .iter()
            .rev()
            .flat_map(|scope| scope.iter().rev())
        {
            if binding == name {
                return None;
            }
            if let Some(arity) = binding.strip_prefix(&marker) {
                return arity.parse().ok();
            }
        }
        None
    }

    /// A fresh name for compiler temporaries: `$` cannot start a Rust name.
    pub(super) fn fresh_temp(&mut self) -> String {
        self.temps += 1;
        format!("$tuple{}", self.temps)
    }

    /// Several statements in place of one: all but the last wait in `pending`.
    pub(super) fn emit(&mut self, mut stmts: Vec<Stmt>) -> Option<Stmt> {
        let last = stmts.pop();
        self.pending.extend(stmts);
        last
    }

    pub(super) fn is_bound(&self, name: &str) -> bool {
        self.scopes
            .iter()
            .any(|scope| scope.iter().any(|n| n == name))
    }

    /// Declares every name a pattern binds.
    pub(super) fn bind_pattern_names(&mut self, pat: &syn::Pat) {
        match pat {
            syn::Pat::Ident(ident) => self.bind(&ident.ident.to_string()),
            syn::Pat::Type(typed) => self.bind_pattern_names(&typed.pat),
            syn::Pat::Tuple(tuple) => tuple.elems.iter().for_each(|p| self.bind_pattern_names(p)),
            syn::Pat::Paren(paren) => self.bind_pattern_names(&paren.pat),
            syn::Pat::Reference(reference) => self.bind_pattern_names(&reference.pat),
            syn::Pat::Slice(slice) => slice.elems.iter().for_each(|p| self.bind_pattern_names(p)),
            syn::Pat::TupleStruct(tuple) => {
                tuple.elems.iter().for_each(|p| self.bind_pattern_names(p))
            }
            syn::Pat::Struct(s) => s
                .fields
                .iter()
                .for_each(|f| self.bind_pattern_names(&f.pat)),
            _ => {}
        }
    }
}
