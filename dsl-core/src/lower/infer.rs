//! Type inference over the captured syntax.
//!
//! rustc has already type-checked the kernel body; this pass recovers the types rustc chose
//! so the IR can be typed: unsuffixed literals take the type their context gives them, and
//! fall back to `i32` and `f64` as in Rust. It is a small unification over scalar type
//! variables (union-find), run once over the body before lowering.

use std::collections::HashMap;
use std::rc::Rc;

use super::closures::{CaptureType, ClosureArg};
use super::error::LowerError;
use super::scope::Scopes;
use super::spec::{ReachableItems, Resolved, Specialization};
use crate::ast::{
    Expr, ExprKind, FunctionSource, GenericKind, Literal, ParamType, Stmt, UnaryOp, ValueType,
};
use crate::{ir, Scalar, Span};

mod arrays;
mod bindings;
mod call;
mod expr;
mod generic_args;
mod indexing;
mod intrinsic;
mod methods;
mod stmt;
mod structs;

pub(super) use intrinsic::vector_width;

/// What is known about a type variable.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Constraint {
    Unknown,
    /// Some integer type (an unsuffixed integer literal).
    AnyInt,
    /// Some float type (an unsuffixed float literal).
    AnyFloat,
    /// Some integer or float type (the zero an iterator's `sum()` starts from).
    AnyNumber,
    Known(Scalar),
}

/// The type of an expression during inference.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum InferTy {
    Scalar(usize),
    /// A value of a `#[derive(DeviceCopy)]` struct.
    Struct(&'static str),
    /// A slice of structs.
    StructSlice {
        name: &'static str,
        mutable: bool,
    },
    Slice {
        elem: Scalar,
        mutable: bool,
    },
    /// A local array; its element type may still be inferred.
    Array(usize),
    /// A local array of structs (`let mut bodies = [Body::zero(); 4];`).
    StructArray(&'static str),
    /// A local array of arrays of scalars (`let mut m = [[0.0f32; 4]; 4];`): its rows are
    /// arrays of the element type.
    Rows(usize),
}

/// What a name refers to during inference.
#[derive(Clone, Copy, Debug)]
enum Binding {
    Var(usize),
    Struct(&'static str),
    /// A `&S` parameter of a device function: read like a struct value, passed on as a
    /// reference.
    StructRef(&'static str),
    /// A kernel's tensor-map parameter: only its address is read.
    TensorMap,
    StructSlice {
        name: &'static str,
        mutable: bool,
    },
    Slice {
        elem: Scalar,
        mutable: bool,
    },
    /// An array of scalars: its element type, and its length where the `let` gives it as
    /// a constant (`[a, b, c]`, `[v; N]`), which binds a callee's `[T; N]` parameter.
    Array(usize, Option<u64>),
    StructArray(&'static str),
    /// An array of arrays of scalars.
    Rows(usize),
    /// A `&f32`/`&mut f32` parameter of a device function: read and written as the scalar
    /// it points to, passed on as the reference.
    ScalarRef(usize),
}

/// A device function instance a call resolves to.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct Instance {
    pub name: String,
    pub spec: Specialization,
    /// The closures passed for its closure parameters (see `closures`).
    pub closures: Vec<ClosureArg>,
}

/// A call during inference: the callee and the type variables of its type parameters.
struct PendingCall {
    expr: *const Expr,
    name: String,
    types: Vec<(String, usize)>,
    consts: Vec<(String, ir::Literal)>,
    /// Type parameters bound to structs (`generic_structs.rs`).
    structs: Vec<(String, &'static str)>,
    closures: Vec<PendingClosure>,
    span: Span,
}

/// A closure argument whose captures' types may still be inferred.
struct PendingClosure {
    closure: ClosureArg,
    /// For each capture of `closure` (whose types are placeholders until then): its type.
    captures: Vec<InferTy>,
}

/// Resolved types of a kernel body: of every scalar expression, of every `let` and of every
/// `for` variable, keyed by the address of the syntax node (the AST is borrowed, unchanged,
/// for the whole lowering).
#[derive(Debug, Default)]
pub(super) struct TypeTable {
    exprs: HashMap<*const Expr, Scalar>,
    lets: HashMap<*const Stmt, Scalar>,
    calls: HashMap<*const Expr, Instance>,
    struct_lets: HashMap<*const Stmt, &'static str>,
    /// The struct of each struct-valued slice element, call and struct literal.
    struct_exprs: HashMap<*const Expr, &'static str>,
    /// The `if`s and blocks whose value is an array (`let a = if c { b } else { d };`).
    array_exprs: std::collections::HashSet<*const Expr>,
    /// Method calls and struct operators, as the calls they are (`methods.rs`).
    desugared: HashMap<*const Expr, Rc<Expr>>,
    /// `a += b` of structs, as the call of `add_assign` it is.
    desugared_stmts: HashMap<*const Stmt, Rc<Expr>>,
    /// `v[i] = x` of structs with `IndexMut`, as the assignment of the place it is
    /// (`indexing.rs`).
    replaced_stmts: HashMap<*const Stmt, Rc<Stmt>>,
}

impl TypeTable {
    /// The scalar type of `expr`; `None` for slices.
    pub(super) fn expr(&self, expr: &Expr) -> Option<Scalar> {
        self.exprs.get(&(expr as *const Expr)).copied()
    }

    /// The type of the variable a `let` or `for` statement binds.
    pub(super) fn binding(&self, stmt: &Stmt) -> Option<Scalar> {
        self.lets.get(&(stmt as *const Stmt)).copied()
    }

    /// The struct a `let` binds, if it binds one.
    pub(super) fn struct_binding(&self, stmt: &Stmt) -> Option<&'static str> {
        self.struct_lets.get(&(stmt as *const Stmt)).copied()
    }

    /// The struct a struct-valued slice element, call or struct literal has.
    pub(super) fn struct_expr(&self, expr: &Expr) -> Option<&'static str> {
        self.struct_exprs.get(&(expr as *const Expr)).copied()
    }

    /// Whether `expr` is an `if` or a block whose value is an array.
    pub(super) fn is_array_branches(&self, expr: &Expr) -> bool {
        self.array_exprs.contains(&(expr as *const Expr))
    }

    /// The device function instance a call expression calls.
    pub(super) fn call(&self, expr: &Expr) -> Option<&Instance> {
        self.calls.get(&(expr as *const Expr))
    }

    /// The call a method call or struct operator is (`v.length()` is `Vec3::length(&v)`).
    pub(super) fn desugared(&self, expr: &Expr) -> Option<&Expr> {
        self.desugared
            .get(&(expr as *const Expr))
            .map(|call| &**call)
    }

    /// The statement an assignment through `IndexMut` is (`v[i] = x` is `v.data[i] = x`).
    pub(super) fn replaced_stmt(&self, stmt: &Stmt) -> Option<&Stmt> {
        self.replaced_stmts
            .get(&(stmt as *const Stmt))
            .map(|replacement| &**replacement)
    }

    /// The call a compound assignment of a struct is (`a += b` is `add_assign(&mut a, b)`).
    pub(super) fn desugared_stmt(&self, stmt: &Stmt) -> Option<&Expr> {
        self.desugared_stmts
            .get(&(stmt as *const Stmt))
            .map(|call| &**call)
    }
}

/// Infers the types of `function`'s body under `spec`; calls are resolved in `library`.
pub(super) fn infer(
    function: &FunctionSource,
    spec: &Specialization,
    library: &ReachableItems,
) -> Result<TypeTable, LowerError> {
    let mut inference = Inference {
        spec,
        library,
        constants: &function.constants,
        parent: Vec::new(),
        constraint: Vec::new(),
        scopes: Scopes::default(),
        constant_bindings: HashMap::new(),
        exprs: Vec::new(),
        lets: Vec::new(),
        calls: Vec::new(),
        structs: Vec::new(),
        structs_let: Vec::new(),
        array_branches: Vec::new(),
        desugared: Vec::new(),
        desugared_stmts: Vec::new(),
        replaced_stmts: Vec::new(),
        result: None,
        result_struct: None,
        result_array: None,
    };
    inference.scopes.push();
    // Scalars; constant tables are local arrays by now (`tables.rs`).
    for constant in function.constants.iter().filter(|c| c.len.is_none()) {
        let var = inference.known(constant.ty);
        inference.scopes.bind(constant.name, Binding::Var(var));
        inference
            .constant_bindings
            .insert(constant.name.to_owned(), (var, constant.literal()));
    }
    for generic in &function.generics {
        if let GenericKind::Const(_) = generic.kind {
            let value = spec.constant(&generic.name).ok_or_else(|| {
                LowerError::new(generic.span, format!("`{}` has no value", generic.name))
            })?;
            let var = inference.known(value.scalar());
            inference.scopes.bind(&generic.name, Binding::Var(var));
            inference
                .constant_bindings
                .insert(generic.name.clone(), (var, value));
        }
    }
    for param in &function.params {
        let binding = match &param.ty {
            ParamType::Reference {
                target: ty @ ValueType::Struct(_),
                len: None,
                ..
            } if function.external.is_none() => match library.resolve_value(spec, ty, param.span)? {
                Resolved::Struct(name) => Binding::StructRef(name),
                Resolved::Scalar(_) => {
                    return Err(LowerError::new(
                        param.span,
                        "device functions take enums by value, not by reference",
                    ))
                }
            },
            // `a: [f32; 4]`, `acc: &mut [f32; 16]`: an array the body indexes.
            ParamType::Value(ValueType::Array { elem, .. }) if function.external.is_none() => {
                inference.array_binding(elem, param.span)?
            }
            ParamType::Reference {
                target,
                len: Some(_),
                ..
            } if function.external.is_none() => inference.array_binding(target, param.span)?,
            // `acc: &mut f32`: the scalar it points to.
            // (`v: &mut T` of a scalar type parameter too.)
            ParamType::Reference {
                target: ty @ (ValueType::Scalar(_) | ValueType::Generic(_)),
                len: None,
                ..
            } if function.external.is_none()
                && !matches!(ty, ValueType::Generic(name) if spec.ty(name).is_none()) =>
            {
                Binding::ScalarRef(inference.known(spec.resolve(ty, param.span)?))
            }
            ParamType::Reference { .. } => {
                return Err(LowerError::new(
                    param.span,
                    "device functions take structs by `&S` and `&mut S`, scalars as `&f32`/`&mut f32`, arrays by value and as `&[T; N]`/`&mut [T; N]`",
                ))
            }
            ParamType::TensorMap => Binding::TensorMap,
            ParamType::Closure { .. } => {
                return Err(LowerError::new(
                    param.span,
                    format!(
                        "`{}` is a closure parameter: `{}` is compiled for the closure each call passes",
                        param.name, function.name
                    ),
                ))
            }
            ParamType::Value(ty) => match library.resolve_value(spec, ty, param.span)? {
                Resolved::Scalar(scalar) => Binding::Var(inference.known(scalar)),
                Resolved::Struct(name) => Binding::Struct(name),
            },
            ParamType::Slice { elem, mutable } => {
                let resolved = library.resolve_value(spec, elem, param.span)?;
                let is_enum = matches!(elem, ValueType::Struct(_));
                match resolved {
                    Resolved::Scalar(_) if is_enum && *mutable => {
                        return Err(LowerError::new(
                            param.span,
                            format!(
                                "kernels only read enums: `{}` cannot be written through `&mut [..]`, since a stored integer might not be a variant; write the discriminants to a `&mut [u32]` (or the enum's `repr`) instead",
                                ty_name(elem)
                            ),
                        ));
                    }
                    Resolved::Scalar(elem) => Binding::Slice {
                        elem,
                        mutable: *mutable,
                    },
                    Resolved::Struct(name) => Binding::StructSlice {
                        name,
                        mutable: *mutable,
                    },
                }
            }
        };
        if let (true, Binding::Var(var), Some(value)) =
            (param.comptime, binding, spec.constant(&param.name))
        {
            inference
                .constant_bindings
                .insert(param.name.clone(), (var, value));
        }
        inference.scopes.bind(&param.name, binding);
    }
    match &function.result {
        Some(ValueType::Array { elem, .. }) => {
            inference.result_array = Some(inference.array_type(elem, function.span)?);
        }
        Some(ty) => match library.resolve_value(spec, ty, function.span)? {
            Resolved::Scalar(scalar) => inference.result = Some(inference.known(scalar)),
            Resolved::Struct(name) => inference.result_struct = Some(name),
        },
        None => {}
    }
    if let (Some(tail), Some(wanted)) = (&function.body.tail, inference.result_array) {
        // An array result: the tail is an array of the element type.
        inference.scopes.push();
        let statements = function.body.stmts.iter();
        let result = statements
            .map(|stmt| inference.stmt(stmt))
            .collect::<Result<Vec<()>, _>>()
            .and_then(|_| inference.array_value(tail, wanted));
        inference.scopes.pop();
        result?;
        return inference.finish();
    }
    match (
        &function.body.tail,
        inference.result,
        inference.result_struct,
    ) {
        (Some(_), Some(result), _) => {
            let value = inference.block_value(&function.body, function.span)?;
            inference.unify(value, result, function.span)?;
        }
        (Some(tail), None, Some(name)) => {
            inference.scopes.push();
            let statements = function.body.stmts.iter();
            let result = statements
                .map(|stmt| inference.stmt(stmt))
                .collect::<Result<Vec<()>, _>>()
                .and_then(|_| inference.struct_value(tail, name));
            inference.scopes.pop();
            result?;
        }
        _ => inference.block(&function.body)?,
    }
    inference.finish()
}

struct Inference<'a> {
    spec: &'a Specialization,
    library: &'a ReachableItems,
    /// The Rust constants the function names (closures it passes take theirs along).
    constants: &'a [crate::constant::ConstantValue],
    parent: Vec<usize>,
    constraint: Vec<Constraint>,
    scopes: Scopes<Binding>,
    /// The constants of the specialisation by name, with the variable each is bound to:
    /// the values conditions of constants fold to (`constant_condition`).
    constant_bindings: HashMap<String, (usize, ir::Literal)>,
    exprs: Vec<(*const Expr, usize, Span)>,
    lets: Vec<(*const Stmt, usize, Span)>,
    calls: Vec<PendingCall>,
    /// Indexing of struct slices (the element's struct).
    structs: Vec<(*const Expr, &'static str)>,
    /// `let`s binding a struct value.
    structs_let: Vec<(*const Stmt, &'static str)>,
    /// `if`s and blocks whose value is an array.
    array_branches: Vec<*const Expr>,
    /// Method calls and struct operators, replaced by their calls (`methods.rs`).
    desugared: Vec<(*const Expr, Rc<Expr>)>,
    /// Compound assignments of structs, replaced by their calls.
    desugared_stmts: Vec<(*const Stmt, Rc<Expr>)>,
    /// Assignments through `IndexMut`, replaced by the assignments of their places.
    replaced_stmts: Vec<(*const Stmt, Rc<Stmt>)>,
    /// The return type of the function, if it returns a scalar.
    result: Option<usize>,
    /// The struct (or tuple) the function returns, if it returns one.
    result_struct: Option<&'static str>,
    /// The array the function returns, if it returns one.
    result_array: Option<InferTy>,
}

impl Inference<'_> {
    fn fresh(&mut self, constraint: Constraint) -> usize {
        self.parent.push(self.parent.len());
        self.constraint.push(constraint);
        self.parent.len() - 1
    }

    fn known(&mut self, scalar: Scalar) -> usize {
        self.fresh(Constraint::Known(scalar))
    }

    fn find(&mut self, var: usize) -> usize {
        let mut root = var;
        while self.parent[root] != root {
            root = self.parent[root];
        }
        let mut node = var;
        while self.parent[node] != root {
            let next = self.parent[node];
            self.parent[node] = root;
            node = next;
        }
        root
    }

    fn unify(&mut self, a: usize, b: usize, span: Span) -> Result<(), LowerError> {
        let (ra, rb) = (self.find(a), self.find(b));
        if ra == rb {
            return Ok(());
        }
        let merged = merge(self.constraint[ra], self.constraint[rb]).ok_or_else(|| {
            LowerError::new(
                span,
                format!(
                    "mismatched types: {} and {}",
                    describe(self.constraint[ra]),
                    describe(self.constraint[rb])
                ),
            )
        })?;
        self.parent[rb] = ra;
        self.constraint[ra] = merged;
        Ok(())
    }

    fn require(&mut self, var: usize, scalar: Scalar, span: Span) -> Result<(), LowerError> {
        let known = self.known(scalar);
        self.unify(var, known, span)
    }

    /// The value of a const generic argument: a literal or a const of the caller.
    fn const_value(&self, value: &Expr, ty: Scalar) -> Result<ir::Literal, LowerError> {
        match &value.kind {
            ExprKind::Lit(Literal::Int { value: v, .. }) => Ok(ir::Literal::Int { bits: *v, ty }),
            ExprKind::Lit(Literal::Bool(b)) => Ok(ir::Literal::Bool(*b)),
            ExprKind::Unary {
                op: UnaryOp::Neg,
                operand,
            } => match &operand.kind {
                ExprKind::Lit(Literal::Int { value: v, .. }) => Ok(ir::Literal::Int {
                    bits: v.wrapping_neg(),
                    ty,
                }),
                _ => Err(LowerError::new(
                    value.span,
                    "const arguments are literals or const parameters",
                )),
            },
            // A const parameter of the caller, or a module constant (`pick::<STAGES>()`).
            ExprKind::Var(name) => match self
                .spec
                .constant(name)
                .or_else(|| self.constant_bindings.get(name).map(|(_, value)| *value))
            {
                Some(ir::Literal::Int { bits, .. }) => Ok(ir::Literal::Int { bits, ty }),
                Some(other) => Ok(other),
                None => Err(LowerError::new(
                    value.span,
                    format!("`{name}` is not a const parameter or a module constant"),
                )),
            },
            _ => Err(LowerError::new(
                value.span,
                "const arguments are literals or const parameters",
            )),
        }
    }

    fn resolve(&mut self, var: usize, span: Span) -> Result<Scalar, LowerError> {
        let root = self.find(var);
        match self.constraint[root] {
            Constraint::Known(s) => Ok(s),
            Constraint::AnyInt | Constraint::AnyNumber => Ok(Scalar::I32),
            Constraint::AnyFloat => Ok(Scalar::F64),
            Constraint::Unknown => Err(LowerError::new(
                span,
                "type annotations needed: give this variable a type or an initial value",
            )),
        }
    }

    fn finish(mut self) -> Result<TypeTable, LowerError> {
        let mut table = TypeTable::default();
        for (ptr, var, span) in std::mem::take(&mut self.exprs) {
            let scalar = self.resolve(var, span)?;
            table.exprs.insert(ptr, scalar);
        }
        for (ptr, var, span) in std::mem::take(&mut self.lets) {
            let scalar = self.resolve(var, span)?;
            table.lets.insert(ptr, scalar);
        }
        for (stmt, name) in std::mem::take(&mut self.structs_let) {
            table.struct_lets.insert(stmt, name);
        }
        for (expr, name) in std::mem::take(&mut self.structs) {
            table.struct_exprs.insert(expr, name);
        }
        table.array_exprs = std::mem::take(&mut self.array_branches)
            .into_iter()
            .collect();
        table.desugared = std::mem::take(&mut self.desugared).into_iter().collect();
        table.desugared_stmts = std::mem::take(&mut self.desugared_stmts)
            .into_iter()
            .collect();
        table.replaced_stmts = std::mem::take(&mut self.replaced_stmts)
            .into_iter()
            .collect();
        for call in std::mem::take(&mut self.calls) {
            let mut spec = Specialization {
                types: Vec::new(),
                consts: call.consts,
                structs: call.structs,
            };
            for (name, var) in call.types {
                let scalar = self.resolve(var, call.span)?;
                spec.types.push((name, scalar));
            }
            let mut closures = Vec::new();
            for pending in call.closures {
                let mut closure = pending.closure;
                for ((_, ty), inferred) in closure.captures.iter_mut().zip(pending.captures) {
                    *ty = match inferred {
                        InferTy::Scalar(var) => CaptureType::Scalar(self.resolve(var, call.span)?),
                        InferTy::Slice { elem, mutable } => CaptureType::Slice { elem, mutable },
                        InferTy::Struct(name) => CaptureType::Struct(name.to_owned()),
                        _ => {
                            return Err(LowerError::new(
                                call.span,
                                "internal: a capture of an unsupported kind",
                            ))
                        }
                    };
                }
                closures.push(closure);
            }
            table.calls.insert(
                call.expr,
                Instance {
                    name: call.name,
                    spec,
                    closures,
                },
            );
        }
        Ok(table)
    }
}

fn merge(a: Constraint, b: Constraint) -> Option<Constraint> {
    use Constraint::*;
    match (a, b) {
        (Unknown, x) | (x, Unknown) => Some(x),
        (AnyNumber, x) | (x, AnyNumber) if x != Known(Scalar::Bool) => Some(x),
        (AnyInt, AnyInt) => Some(AnyInt),
        (AnyFloat, AnyFloat) => Some(AnyFloat),
        (AnyInt, Known(s)) | (Known(s), AnyInt) if s.is_integer() => Some(Known(s)),
        (AnyFloat, Known(s)) | (Known(s), AnyFloat) if s.is_float() => Some(Known(s)),
        (Known(x), Known(y)) if x == y => Some(Known(x)),
        _ => None,
    }
}

fn describe(c: Constraint) -> String {
    match c {
        Constraint::Unknown => "an unknown type".into(),
        Constraint::AnyInt => "an integer".into(),
        Constraint::AnyFloat => "a float".into(),
        Constraint::AnyNumber => "a number".into(),
        Constraint::Known(s) => format!("`{s}`"),
    }
}

/// The name of a struct or enum type as written.
fn ty_name(ty: &ValueType) -> &str {
    match ty {
        ValueType::Struct(name) | ValueType::Generic(name) => name,
        ValueType::Scalar(scalar) => scalar.rust_name(),
        ValueType::Tuple(_) => "tuple",
        ValueType::Array { .. } => "array",
    }
}
