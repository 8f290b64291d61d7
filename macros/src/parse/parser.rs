//! The parser of a function body: what it knows while walking the body (the names in
//! scope, the device functions and types it has met) and the state of statements that
//! expand into several. How statements and expressions are parsed is in `stmt.rs`,
//! `expr.rs` and the modules beside them, each adding methods to [`Parser`].

use cudajit_core::ast::{Expr, Stmt};

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
    /// Structs named in the body without arguments (`Pair { .. }`), whose layouts are
    /// probed (they may be generic).
    probed: Vec<syn::Path>,
    /// Whether the function returns a tuple: its `return (a, b)` and final `(a, b)` are
    /// the tuple value, not tuple locals.
    pub(crate) returns_tuple: bool,
    /// Whether the function returns an array: its `return [a, b]` and final `[a, b]` are
    /// bound to a hidden local array first, which the result is copied from.
    pub(crate) returns_array: bool,
    /// While a `let`, assignment, `return`, tail or expression statement whose whole value
    /// is a call or a struct literal is parsed: the address of that call's (or literal's)
    /// syntax node. What computes its arguments (array literals, `Option`s) or the
    /// literal's array fields then runs just before the statement, in `pending`, not in a
    /// block around the value, so that a call returning an array is still a call
    /// (`let s = swap([a, b]);`). Any other call (an inner one, one in a closure's body)
    /// keeps its block.
    statement_value: Option<usize>,
    /// `T` of a `#[device]` function returning `Option<T>` (`option_value.rs`).
    pub(crate) returns_option: Option<cudajit_core::ast::ValueType>,
    /// `T` of the `Option<T>` being taken apart, where the syntax around it gives it (a
    /// function's result, an annotated `let`): the type of the hidden local that `if` and
    /// `match` branches ending in options assign, taken by the outermost one.
    pub(super) option_type_hint: Option<cudajit_core::ast::ValueType>,
    /// Set by `fn_body` for the next block parsed: its tail is the function's value.
    pub(super) function_tail: bool,
    /// Whether the body is an `Index`/`IndexMut` method's, whose `&place`s are its result.
    pub(crate) returns_place: bool,
    /// Statements that a statement expanded into, before the one it returned (tuples).
    pub(super) pending: Vec<Stmt>,
    /// Counter for the names of temporaries (`$tuple0`, ...).
    pub(super) temps: usize,
    /// The Rust constants the body names, each once: the name as the body writes it and
    /// the path the generated code evaluates.
    constants: Vec<(String, syn::Path)>,
    /// The body's `const` and `static` items, which the generated code repeats where it
    /// evaluates the constants.
    const_items: Vec<syn::Item>,
    /// What names bound to a place stand for (`y` of `for y in x.iter_mut()` is `x[$i]`),
    /// indexed by the `name.@k` entries of `scopes`, so shadowing works as for locals.
    aliases: Vec<Expr>,
    /// The enclosing loops, innermost last: their labels and, for a `loop` used as a
    /// value, the hidden local its `break value`s write.
    pub(super) loops: Vec<(Option<String>, Option<String>)>,
    /// The roots of the places assigned so far (`arr` of `arr[k] = v`), in order, so a
    /// loop over a copy of an array can tell that its body writes the array.
    pub(super) written: Vec<String>,
    /// The closures bound by `let`, indexed by the `name.#closureK` entries of `scopes`.
    pub(super) local_closures: Vec<super::closure::LocalClosure>,
    /// The parameters that are references to structs (`self` of `&self`, `other: &Vec3`):
    /// `*name` reads the struct.
    pub(crate) reference_names: Vec<String>,
    /// The associated functions called (`Vec3::new`): the type's path and the function.
    associated: Vec<(syn::Path, syn::Ident)>,
    /// Where the body calls a method captured as a struct's (`v.length()`): the line and
    /// column of the method's name, for the generated check (`generate/method_check.rs`).
    pub(super) method_sites: Vec<(usize, usize)>,
}

/// What a function body uses from outside itself, for the generated code.
pub(crate) struct BodyUses {
    /// Device functions called, by path.
    pub callees: Vec<syn::Path>,
    /// `DeviceCopy` types named, by path.
    pub types: Vec<syn::Path>,
    /// Structs named without arguments, by path (see `Parsed::probed`).
    pub probed: Vec<syn::Path>,
    /// Rust constants named: the name in the captured syntax and the path.
    pub constants: Vec<(String, syn::Path)>,
    /// The body's own `const` items.
    pub const_items: Vec<syn::Item>,
    /// The associated functions called, by type path and name.
    pub associated: Vec<(syn::Path, syn::Ident)>,
    /// Where struct methods are called (the method names' line and column).
    pub method_sites: Vec<(usize, usize)>,
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
            probed: Vec::new(),
            returns_tuple: false,
            returns_array: false,
            statement_value: None,
            returns_option: None,
            option_type_hint: None,
            function_tail: false,
            returns_place: false,
            pending: Vec::new(),
            temps: 0,
            constants: Vec::new(),
            const_items: Vec::new(),
            aliases: Vec::new(),
            loops: Vec::new(),
            written: Vec::new(),
            local_closures: Vec::new(),
            reference_names: Vec::new(),
            associated: Vec::new(),
            method_sites: Vec::new(),
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
        // The enum is the segment named like a type (`nccl::MemoryOrder::Relaxed`), not a
        // module (`core::f32::consts::PI` and `consts::TILE` are constants).
        let type_like = ty
            .ident
            .to_string()
            .starts_with(|c: char| c.is_ascii_uppercase());
        if ty.ident == "Self"
            || !type_like
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
        push_path(&mut self.enums, path);
    }

    /// Records a struct the body builds or calls an associated function of (`Pair { .. }`,
    /// `Pair::<f32>::new(..)`): with arguments, its layout; without, a probe of it, which
    /// finds a generic struct's base layout; nothing where the arguments are the
    /// function's own parameters (`Pair::<T> { .. }`, whose instances the callers bring).
    pub(super) fn record_struct(&mut self, path: &syn::Path) {
        if super::signature::mentions_generics(path, &self.generics) {
            return;
        }
        let mut base = path.clone();
        if let Some(last) = base.segments.last_mut() {
            last.arguments = syn::PathArguments::None;
        }
        push_path(&mut self.probed, &base);
        // `base` differs from `path` exactly when the last segment had arguments (syn's
        // `PartialEq` needs its `extra-traits`, left off for the dependants' build time).
        let had_arguments = path
            .segments
            .last()
            .is_some_and(|last| !last.arguments.is_none());
        if had_arguments {
            push_path(&mut self.enums, path);
        }
    }

    /// Records the use of the Rust constant at `path`, named `name` in the captured
    /// syntax.
    pub(super) fn add_constant(&mut self, name: &str, path: &syn::Path) {
        if !self.constants.iter().any(|(n, _)| n == name) {
            self.constants.push((name.to_owned(), path.clone()));
        }
    }

    /// Records a `const` or `static` item of the body. Items are visible in their whole
    /// block, so the generated code repeats them all in one place, where two of the same
    /// name would clash: that is refused here.
    pub(super) fn const_item(&mut self, item: &syn::Item) {
        let (ident, generics) = match item {
            syn::Item::Const(constant) => (&constant.ident, Some(&constant.generics)),
            syn::Item::Static(stat) => (&stat.ident, None),
            _ => return,
        };
        if self.const_items.iter().any(|c| item_name(c) == Some(ident)) {
            self.errors.at(
                ident,
                format!(
                    "a kernel can declare one `const` or `static` named `{ident}`: rename this one"
                ),
            );
            return;
        }
        if let Some(generics) = generics.filter(|g| !g.params.is_empty()) {
            self.errors
                .at(generics, "a `const` item in a kernel cannot be generic");
            return;
        }
        self.const_items.push(item.clone());
    }

    /// What the body uses from outside itself.
    pub(crate) fn into_uses(self) -> BodyUses {
        BodyUses {
            callees: self.callees,
            types: self.enums,
            probed: self.probed,
            constants: self.constants,
            const_items: self.const_items,
            associated: self.associated,
            method_sites: self.method_sites,
        }
    }

    /// The innermost entry of `scopes` for `name`: the name itself, or one of its markers
    /// (`name.#..`, `name.@..`); `None` when the name itself is innermost or unbound.
    pub(super) fn innermost_marker(&self, name: &str) -> Option<&str> {
        let (hash, at) = (format!("{name}.#"), format!("{name}.@"));
        for binding in self
            .scopes
            .iter()
            .rev()
            .flat_map(|scope| scope.iter().rev())
        {
            if binding == name {
                return None;
            }
            if binding.starts_with(&hash) || binding.starts_with(&at) {
                return Some(binding);
            }
        }
        None
    }

    /// Where the innermost binding of `name` (or of one of its markers) is: its scope and
    /// its place there. Two uses of a name see the same binding when these are equal.
    pub(super) fn binding_position(&self, name: &str) -> Option<(usize, usize)> {
        let (hash, at) = (format!("{name}.#"), format!("{name}.@"));
        for (depth, scope) in self.scopes.iter().enumerate().rev() {
            for (index, binding) in scope.iter().enumerate().rev() {
                if binding == name || binding.starts_with(&hash) || binding.starts_with(&at) {
                    return Some((depth, index));
                }
            }
        }
        None
    }

    /// Records a call of the associated function `function` of the type at `ty`, which the
    /// generated code checks is a `#[device]` one.
    pub(super) fn add_associated(&mut self, ty: &syn::Path, function: &syn::Ident) {
        self.associated.push((ty.clone(), function.clone()));
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

    /// Whether the innermost binding of `name` is the marker `marker` (bound after the
    /// name itself), not the name alone.
    pub(super) fn innermost_is(&self, name: &str, marker: &str) -> bool {
        for binding in self
            .scopes
            .iter()
            .rev()
            .flat_map(|scope| scope.iter().rev())
        {
            if binding == marker {
                return true;
            }
            if binding == name {
                return false;
            }
        }
        false
    }

    /// Whether the innermost binding of `name` is an `Option` local.
    pub(super) fn is_option_local(&self, name: &str) -> bool {
        self.innermost_is(name, &format!("{name}.?"))
    }

    /// Whether the innermost binding of `name` is a local bound to a call's result without a
    /// type (`let hit = nearest(x, q);`), which may be an `Option` the syntax does not show.
    pub(super) fn is_call_result_local(&self, name: &str) -> bool {
        self.innermost_is(name, &format!("{name}.()"))
    }

    /// A fresh name for compiler temporaries: `$` cannot start a Rust name.
    pub(super) fn fresh_temp(&mut self) -> String {
        self.fresh_name("tuple")
    }

    /// A fresh name for a hidden local of the kind `what` (`$index3`).
    pub(super) fn fresh_name(&mut self, what: &str) -> String {
        self.temps += 1;
        format!("${what}{}", self.temps)
    }

    /// Declares `name` in the innermost scope as standing for `place` (a reference the
    /// body reads and writes through: `*y = v` assigns `place`).
    pub(super) fn bind_alias(&mut self, name: &str, place: Expr) {
        self.bind(&format!("{name}.@{}", self.aliases.len()));
        self.aliases.push(place);
    }

    /// The place `name` stands for when its innermost binding is an alias.
    pub(super) fn alias(&self, name: &str) -> Option<Expr> {
        let marker = format!("{name}.@");
        for binding in self
            .scopes
            .iter()
            .rev()
            .flat_map(|scope| scope.iter().rev())
        {
            if binding == name || binding.starts_with(&format!("{name}.#")) {
                return None;
            }
            if let Some(index) = binding.strip_prefix(&marker) {
                return index.parse::<usize>().ok().map(|i| self.aliases[i].clone());
            }
        }
        None
    }

    /// An array literal (`[a, b]`, `[v; N]`) bound to a hidden local array with `let`, as a
    /// user binds one: the `let` waits in `pending`, and the local's name is returned as
    /// the expression to write in the literal's place.
    pub(super) fn bind_array_literal(&mut self, literal: &syn::Expr) -> Option<syn::Expr> {
        let (binding, name) = self.hidden_array_let(literal)?;
        self.pending.push(binding);
        Some(name)
    }

    /// `let $tupleN = literal;` for an array literal, parsed, and the hidden local's name.
    pub(super) fn hidden_array_let(&mut self, literal: &syn::Expr) -> Option<(Stmt, syn::Expr)> {
        let ident = syn::Ident::new(
            &self.fresh_temp().replace('$', "__cudajit_"),
            syn::spanned::Spanned::span(literal),
        );
        let binding: syn::Stmt = syn::parse_quote!(let #ident = #literal;);
        let parsed = self.stmt(&binding)?;
        Some((parsed, syn::parse_quote!(#ident)))
    }

    /// Parses `value`'s statement with `parse`, marking `value` the statement's whole
    /// value ([`Self::statement_value`]) when it is a call or a struct literal.
    pub(super) fn with_statement_call<T>(
        &mut self,
        value: Option<&syn::Expr>,
        parse: impl FnOnce(&mut Self) -> T,
    ) -> T {
        let outer = self.statement_value.take();
        self.statement_value = match value {
            Some(syn::Expr::Call(call)) => Some(call as *const syn::ExprCall as usize),
            Some(syn::Expr::MethodCall(call)) => Some(call as *const syn::ExprMethodCall as usize),
            Some(syn::Expr::Struct(literal)) => Some(literal as *const syn::ExprStruct as usize),
            _ => None,
        };
        let parsed = parse(self);
        self.statement_value = outer;
        parsed
    }

    /// Whether the node at `node` is the statement's whole value (then no longer marked).
    pub(super) fn is_statement_value<T>(&mut self, node: &T) -> bool {
        let marked = self.statement_value == Some(node as *const T as usize);
        if marked {
            self.statement_value = None;
        }
        marked
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

/// The name of a `const` or `static` item.
fn item_name(item: &syn::Item) -> Option<&syn::Ident> {
    match item {
        syn::Item::Const(constant) => Some(&constant.ident),
        syn::Item::Static(stat) => Some(&stat.ident),
        _ => None,
    }
}

/// Adds `path` to `paths` unless it is there (as written).
fn push_path(paths: &mut Vec<syn::Path>, path: &syn::Path) {
    let text = quote::quote!(#path).to_string();
    if !paths.iter().any(|p| quote::quote!(#p).to_string() == text) {
        paths.push(path.clone());
    }
}
