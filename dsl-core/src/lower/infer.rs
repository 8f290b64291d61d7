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
    self, BinaryOp, Block, Builtin, ClosureParam, Else, Expr, ExprKind, FunctionSource, GenericArg,
    GenericKind, IfStmt, Literal, MatchArm, ParamType, Pattern, Stmt, UnaryOp, ValueType,
};
use crate::intrinsics::{Intrinsic, VoteOp};
use crate::math::MathFunction;
use crate::{ir, Scalar, Span};

mod arrays;
mod indexing;
mod methods;

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
    Array(usize),
    StructArray(&'static str),
    /// An array of arrays of scalars.
    Rows(usize),
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
        exprs: Vec::new(),
        lets: Vec::new(),
        calls: Vec::new(),
        structs: Vec::new(),
        structs_let: Vec::new(),
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
    }
    for generic in &function.generics {
        if let GenericKind::Const(_) = generic.kind {
            let value = spec.constant(&generic.name).ok_or_else(|| {
                LowerError::new(generic.span, format!("`{}` has no value", generic.name))
            })?;
            let var = inference.known(value.scalar());
            inference.scopes.bind(&generic.name, Binding::Var(var));
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
            ParamType::Reference { .. } => {
                return Err(LowerError::new(
                    param.span,
                    "device functions take structs by `&S` and `&mut S`, arrays by value and as `&[T; N]`/`&mut [T; N]`",
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
    exprs: Vec<(*const Expr, usize, Span)>,
    lets: Vec<(*const Stmt, usize, Span)>,
    calls: Vec<PendingCall>,
    /// Indexing of struct slices (the element's struct).
    structs: Vec<(*const Expr, &'static str)>,
    /// `let`s binding a struct value.
    structs_let: Vec<(*const Stmt, &'static str)>,
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

    fn scalar(&mut self, expr: &Expr) -> Result<usize, LowerError> {
        let ty = self.expr(expr)?;
        self.scalar_of(ty, expr)
    }

    /// The type variable of `expr`, whose type `ty` is, if it is a scalar.
    fn scalar_of(&mut self, ty: InferTy, expr: &Expr) -> Result<usize, LowerError> {
        match ty {
            InferTy::Scalar(var) => Ok(var),
            InferTy::Slice { .. }
            | InferTy::Array(_)
            | InferTy::StructSlice { .. }
            | InferTy::Rows(_)
            | InferTy::StructArray(_) => Err(LowerError::new(
                expr.span,
                "a slice or array can only be indexed or asked for its `.len()` here",
            )),
            InferTy::Struct(name) => Err(LowerError::new(
                expr.span,
                format!("a `{name}` is a struct: use one of its fields here"),
            )),
        }
    }

    fn expr(&mut self, expr: &Expr) -> Result<InferTy, LowerError> {
        let span = expr.span;
        let var = match &expr.kind {
            ExprKind::Lit(Literal::Bool(_)) => self.known(Scalar::Bool),
            ExprKind::Lit(Literal::Int { suffix, .. }) => match suffix {
                Some(s) => self.known(*s),
                None => self.fresh(Constraint::AnyInt),
            },
            ExprKind::Lit(Literal::Float { suffix, .. }) => match suffix {
                Some(s) => self.known(*s),
                None => self.fresh(Constraint::AnyFloat),
            },
            ExprKind::Var(name) => match self.scopes.lookup(name) {
                Some(Binding::Var(var)) => var,
                Some(Binding::Slice { elem, mutable }) => {
                    return Ok(InferTy::Slice { elem, mutable })
                }
                Some(Binding::Array(elem)) => return Ok(InferTy::Array(elem)),
                Some(Binding::StructArray(name)) => return Ok(InferTy::StructArray(name)),
                Some(Binding::Rows(elem)) => return Ok(InferTy::Rows(elem)),
                Some(Binding::Struct(name) | Binding::StructRef(name)) => {
                    return Ok(InferTy::Struct(name))
                }
                Some(Binding::StructSlice { name, mutable }) => {
                    return Ok(InferTy::StructSlice { name, mutable })
                }
                Some(Binding::TensorMap) => {
                    return Err(LowerError::new(
                        span,
                        format!("`{name}` is a tensor map, which kernels use only as `tensor_map_address(&{name})`"),
                    ))
                }
                None => {
                    return Err(LowerError::new(
                        span,
                        format!("cannot find `{name}` in the kernel"),
                    ))
                }
            },
            ExprKind::Unary { op, operand } => {
                let operand_ty = self.expr(operand)?;
                if let (UnaryOp::Neg, InferTy::Struct(name)) = (op, operand_ty) {
                    return self.negation(expr, name, operand);
                }
                let var = self.scalar_of(operand_ty, operand)?;
                if *op == UnaryOp::Not {
                    let root = self.find(var);
                    if self.constraint[root] == Constraint::AnyFloat {
                        return Err(LowerError::new(span, "`!` does not apply to floats"));
                    }
                }
                var
            }
            ExprKind::Binary { op, left, right } => {
                let left_ty = self.expr(left)?;
                if let InferTy::Struct(name) = left_ty {
                    if op.is_comparison() {
                        return self.struct_comparison(expr, *op, name, left, right);
                    }
                    if !op.is_logical() {
                        return self.binary_operator(expr, *op, name, right);
                    }
                }
                let l = self.scalar_of(left_ty, left)?;
                let right_ty = self.expr(right)?;
                if let InferTy::Struct(name) = right_ty {
                    return self.scalar_left_operator(expr, *op, left, l, name, right);
                }
                let r = self.scalar_of(right_ty, right)?;
                if op.is_logical() {
                    self.require(l, Scalar::Bool, left.span)?;
                    self.require(r, Scalar::Bool, right.span)?;
                    l
                } else if op.is_comparison() {
                    self.unify(l, r, span)?;
                    self.known(Scalar::Bool)
                } else if op.is_shift() {
                    l
                } else {
                    self.unify(l, r, span)?;
                    l
                }
            }
            ExprKind::Cast { value, ty } => {
                self.scalar(value)?;
                self.known(*ty)
            }
            ExprKind::Index { base, index } => {
                let elem = match self.expr(base)? {
                    InferTy::Slice { elem, .. } => self.known(elem),
                    InferTy::Array(elem) => elem,
                    InferTy::StructSlice { name, .. } | InferTy::StructArray(name) => {
                        let i = self.scalar(index)?;
                        self.require(i, Scalar::Usize, index.span)?;
                        self.structs.push((expr as *const Expr, name));
                        return Ok(InferTy::Struct(name));
                    }
                    InferTy::Struct(name) => return self.struct_index(expr, name, base, index),
                    // `m[i]` of an array of arrays: a row, which is indexed in turn.
                    InferTy::Rows(elem) => {
                        let i = self.scalar(index)?;
                        self.require(i, Scalar::Usize, index.span)?;
                        return Ok(InferTy::Array(elem));
                    }
                    InferTy::Scalar(_) => {
                        return Err(LowerError::new(base.span, "only slices and arrays can be indexed"))
                    }
                };
                let i = self.scalar(index)?;
                self.require(i, Scalar::Usize, index.span)?;
                elem
            }
            ExprKind::SplitAt { .. } => {
                return Err(LowerError::new(expr.span, super::views::SPLIT_AT_LET))
            }
            ExprKind::Closure { .. } => {
                return Err(LowerError::new(expr.span, super::closures::CLOSURE_PLACES))
            }
            ExprKind::ClosureCall { callee, .. } => {
                return Err(LowerError::new(
                    expr.span,
                    format!("internal: `{callee}(..)` outside an instance made for a closure"),
                ))
            }
            ExprKind::SubSlice {
                base,
                start,
                end,
                mutable,
            } => {
                for bound in start.iter().chain(end) {
                    let b = self.scalar(bound)?;
                    self.require(b, Scalar::Usize, bound.span)?;
                }
                return match self.expr(base)? {
                    InferTy::Slice { elem, .. } => Ok(InferTy::Slice {
                        elem,
                        mutable: *mutable,
                    }),
                    _ => Err(LowerError::new(
                        base.span,
                        "only slices of scalars can be sub-sliced (`&x[a..b]`): index a slice of structs whole",
                    )),
                };
            }
            ExprKind::Len(base) => {
                if matches!(self.expr(base)?, InferTy::Scalar(_)) {
                    return Err(LowerError::new(base.span, "`.len()` applies to slices and arrays"));
                }
                self.known(Scalar::Usize)
            }
            ExprKind::Repeat { .. } => {
                return Err(LowerError::new(
                    span,
                    "an array is only supported as the initial value of a local: `let mut acc = [0.0f32; 8];`",
                ))
            }
            ExprKind::Tuple(_) => {
                return Err(LowerError::new(
                    span,
                    "tuples are only supported as the values of `vstore4`/`vstore2` and as what a `#[device]` function returning a tuple returns",
                ))
            }
            ExprKind::StructLiteral { ty, fields } => {
                let name = self.struct_literal(ty, fields, span)?;
                self.structs.push((expr as *const Expr, name));
                return Ok(InferTy::Struct(name));
            }
            ExprKind::Builtin(builtin) => self.known(match builtin {
                Builtin::GlobalIndex | Builtin::GridStride => Scalar::Usize,
                _ => Scalar::U32,
            }),
            ExprKind::If {
                cond,
                then,
                otherwise,
            } => {
                let c = self.scalar(cond)?;
                self.require(c, Scalar::Bool, cond.span)?;
                let a = self.block_value(then, span)?;
                let b = self.block_value(otherwise, span)?;
                self.unify(a, b, span)?;
                a
            }
            ExprKind::Block(block) => self.block_value(block, span)?,
            ExprKind::Intrinsic {
                intrinsic, args, ..
            } => match self.intrinsic(*intrinsic, args, span)? {
                Some(var) => var,
                None => {
                    return Err(LowerError::new(
                        span,
                        format!("`{}()` produces no value", intrinsic.name()),
                    ))
                }
            },
            ExprKind::Reference { .. } => {
                return Err(LowerError::new(
                    span,
                    "references are only supported as the target of an atomic",
                ))
            }
            ExprKind::Match { scrutinee, arms } => {
                let s = self.scalar(scrutinee)?;
                let mut result = None;
                for arm in arms {
                    self.arm_patterns(s, arm)?;
                    let value = self.block_value(&arm.body, arm.span)?;
                    match result {
                        None => result = Some(value),
                        Some(r) => self.unify(r, value, arm.span)?,
                    }
                }
                result.ok_or_else(|| LowerError::new(span, "a `match` used as a value needs arms"))?
            }
            ExprKind::InlinePtx { result, args, .. } => {
                for arg in args {
                    self.ptx_argument(arg)?;
                }
                match result {
                    Some(ValueType::Tuple(elements)) => {
                        let scalars = elements
                            .iter()
                            .map(|element| self.library.scalar(self.spec, element, span))
                            .collect::<Result<Vec<_>, _>>()?;
                        let layout = crate::layout::tuple_layout(&scalars).ok_or_else(|| {
                            LowerError::new(span, "this `ptx!` has too many outputs for a tuple")
                        })?;
                        return Ok(InferTy::Struct(layout.name));
                    }
                    Some(ty) => {
                        let scalar = self.library.scalar(self.spec, ty, span)?;
                        self.known(scalar)
                    }
                    None => {
                        return Err(LowerError::new(
                            span,
                            "this `ptx!` has no result type, so it cannot be used as a value: write `ptx!(u32: \"..\")`",
                        ))
                    }
                }
            }
            ExprKind::EnumVariant { ty, variant } => {
                let literal = self.library.variant(ty, variant, span)?;
                self.known(literal.scalar())
            }
            ExprKind::Field { base, field } => {
                let InferTy::Struct(name) = self.expr(base)? else {
                    return Err(LowerError::new(
                        base.span,
                        format!("`.{field}`: only structs have fields"),
                    ));
                };
                let layout = self.library.struct_layout(name, span)?;
                let (_, member) = layout.field(field).ok_or_else(|| {
                    LowerError::new(span, format!("`{name}` has no field `{field}`"))
                })?;
                match self.field_type(&member.ty, span)? {
                    InferTy::Struct(nested) => {
                        self.structs.push((expr as *const Expr, nested));
                        return Ok(InferTy::Struct(nested));
                    }
                    InferTy::Scalar(var) => var,
                    other => return Ok(other),
                }
            }
            ExprKind::Constant { ty: Some(ty), .. } => {
                let scalar = self.library.scalar(self.spec, ty, span)?;
                self.known(scalar)
            }
            ExprKind::Constant { ty: None, .. } => self.fresh(Constraint::AnyNumber),
            ExprKind::Math {
                function,
                receiver,
                args,
            } => {
                // A struct's own method of the same name as a scalar one (`v.abs()`).
                if let InferTy::Struct(_) = self.expr(receiver)? {
                    return self.method_value(expr, receiver, function.name(), args);
                }
                self.math(*function, receiver, args, span)?
            }
            ExprKind::MethodCall {
                receiver,
                method,
                args,
            } => return self.method_value(expr, receiver, method, args),
            ExprKind::Call {
                callee,
                generic_args,
                args,
            } => match self.call(expr, callee, generic_args, args)? {
                Some(InferTy::Scalar(var)) => var,
                Some(InferTy::Struct(name)) => {
                    self.structs.push((expr as *const Expr, name));
                    return Ok(InferTy::Struct(name));
                }
                Some(other) => return Ok(other),
                None => {
                    return Err(LowerError::new(
                        span,
                        format!(
                            "`{callee}` returns nothing, so its call cannot be used as a value"
                        ),
                    ))
                }
            },
        };
        self.exprs.push((expr as *const Expr, var, span));
        Ok(InferTy::Scalar(var))
    }

    /// How a field of type `ty` reads: a scalar (an enum as its integer), a struct, or an
    /// array of scalars or structs.
    fn field_type(
        &mut self,
        ty: &crate::layout::FieldType,
        span: Span,
    ) -> Result<InferTy, LowerError> {
        use crate::layout::FieldType;
        Ok(match ty {
            FieldType::Scalar(scalar) => InferTy::Scalar(self.known(*scalar)),
            FieldType::Struct(layout) => match layout.enum_repr {
                Some(repr) => InferTy::Scalar(self.known(repr)),
                None => InferTy::Struct(layout.name),
            },
            FieldType::Array { elem, .. } => match elem {
                FieldType::Scalar(scalar) => InferTy::Array(self.known(*scalar)),
                FieldType::Struct(layout) => match layout.enum_repr {
                    Some(repr) => InferTy::Array(self.known(repr)),
                    None => InferTy::StructArray(layout.name),
                },
                FieldType::Array { .. } => {
                    return Err(LowerError::new(
                        span,
                        "arrays of arrays are local arrays only (`let mut m = [[0.0f32; 4]; 4];`), not struct fields yet: use a flat array field indexed `[r * n + c]`",
                    ))
                }
            },
        })
    }

    /// The value of field `name` (of type `ty`) in a struct literal: a value of the field's
    /// scalar or struct type; for an array field, `[value; N]` or a local array.
    fn field_value(
        &mut self,
        ty: &crate::layout::FieldType,
        value: &Expr,
        name: &str,
    ) -> Result<(), LowerError> {
        let wanted = self.field_type(ty, value.span)?;
        let wrong = || {
            LowerError::new(
                value.span,
                format!("the field `{name}` takes a value of its type"),
            )
        };
        match wanted {
            InferTy::Scalar(var) => {
                let v = self.scalar(value)?;
                self.unify(v, var, value.span)
            }
            InferTy::Struct(nested) => match self.expr(value)? {
                InferTy::Struct(given) if given == nested => Ok(()),
                _ => Err(wrong()),
            },
            InferTy::Array(elem) => match &value.kind {
                ExprKind::Repeat {
                    value: element,
                    len,
                } => {
                    let v = self.scalar(element)?;
                    let l = self.scalar(len)?;
                    self.require(l, Scalar::Usize, len.span)?;
                    self.unify(v, elem, element.span)
                }
                _ => match self.expr(value)? {
                    InferTy::Array(given) => self.unify(given, elem, value.span),
                    _ => Err(LowerError::new(
                        value.span,
                        format!("the array field `{name}` takes `[value; N]` or a local array"),
                    )),
                },
            },
            InferTy::StructArray(nested) => match &value.kind {
                ExprKind::Repeat {
                    value: element,
                    len,
                } => {
                    let l = self.scalar(len)?;
                    self.require(l, Scalar::Usize, len.span)?;
                    match self.expr(element)? {
                        InferTy::Struct(given) if given == nested => Ok(()),
                        _ => Err(wrong()),
                    }
                }
                _ => match self.expr(value)? {
                    InferTy::StructArray(given) if given == nested => Ok(()),
                    _ => Err(LowerError::new(
                        value.span,
                        format!("the array field `{name}` takes `[value; N]` or a local array"),
                    )),
                },
            },
            _ => Err(wrong()),
        }
    }

    /// `Name { field: value, .. }`: every field of the `#[derive(DeviceCopy)]` struct once,
    /// each value of the field's type.
    fn struct_literal(
        &mut self,
        ty: &str,
        fields: &[(String, Expr)],
        span: Span,
    ) -> Result<&'static str, LowerError> {
        let layout = *self.library.struct_layout(ty, span)?;
        if layout.enum_repr.is_some() {
            return Err(LowerError::new(
                span,
                format!("`{ty}` is an enum, not a struct"),
            ));
        }
        for (index, (name, value)) in fields.iter().enumerate() {
            let (_, member) = layout.field(name).ok_or_else(|| {
                LowerError::new(value.span, format!("`{ty}` has no field `{name}`"))
            })?;
            if fields[..index].iter().any(|(earlier, _)| earlier == name) {
                return Err(LowerError::new(
                    value.span,
                    format!("the field `{name}` is given twice"),
                ));
            }
            self.field_value(&member.ty, value, name)?;
        }
        let missing: Vec<&str> = layout
            .fields
            .iter()
            .filter(|f| !fields.iter().any(|(name, _)| name == f.name))
            .map(|f| f.name)
            .collect();
        if !missing.is_empty() {
            return Err(LowerError::new(
                span,
                format!("missing fields of `{ty}`: {}", missing.join(", ")),
            ));
        }
        Ok(layout.name)
    }

    /// A value the function returns as the struct (or tuple) `name`: a struct value of
    /// that type, or, for a tuple, `(a, b, ..)` with elements of its element types.
    fn struct_value(&mut self, value: &Expr, name: &'static str) -> Result<(), LowerError> {
        if let ExprKind::Tuple(elements) = &value.kind {
            let layout = self.library.struct_layout(name, value.span)?;
            if !name.starts_with('(') || layout.fields.len() != elements.len() {
                return Err(LowerError::new(
                    value.span,
                    format!("this function returns a `{name}`"),
                ));
            }
            for (element, field) in elements.iter().zip(layout.fields) {
                let v = self.scalar(element)?;
                let scalar = field
                    .ty
                    .scalar()
                    .ok_or_else(|| LowerError::new(element.span, "tuples hold scalars"))?;
                self.require(v, scalar, element.span)?;
            }
            return Ok(());
        }
        match self.expr(value)? {
            InferTy::Struct(given) if given == name => Ok(()),
            _ => Err(LowerError::new(
                value.span,
                format!("this function returns a `{name}`"),
            )),
        }
    }

    /// The tuple type a call of `callee` returns: its element types with the call's type
    /// parameters, which the arguments must have decided.
    fn tuple_result(
        &mut self,
        callee: &str,
        elements: &[ValueType],
        types: &[(String, usize)],
        span: Span,
    ) -> Result<&'static str, LowerError> {
        let mut scalars = Vec::new();
        for element in elements {
            let scalar = match element {
                ValueType::Generic(name) => {
                    let var = types.iter().find(|(n, _)| n == name).map(|(_, v)| *v);
                    let root = var.map(|v| self.find(v));
                    match root.map(|r| self.constraint[r]) {
                        Some(Constraint::Known(scalar)) => scalar,
                        _ => {
                            return Err(LowerError::new(
                                span,
                                format!("the type `{name}` of the tuple `{callee}` returns is not known here: give it with a turbofish (`{callee}::<f32>(..)`)"),
                            ))
                        }
                    }
                }
                other => self.library.scalar(self.spec, other, span)?,
            };
            scalars.push(scalar);
        }
        let layout = crate::layout::tuple_layout(&scalars).ok_or_else(|| {
            LowerError::new(
                span,
                format!("`{callee}` returns a tuple of too many elements"),
            )
        })?;
        Ok(layout.name)
    }

    fn block_value(&mut self, block: &Block, span: Span) -> Result<usize, LowerError> {
        self.scopes.push();
        for stmt in &block.stmts {
            self.stmt(stmt)?;
        }
        let result = match &block.tail {
            Some(tail) => self.scalar(tail),
            None => Err(LowerError::new(span, "this block must end in a value")),
        };
        self.scopes.pop();
        result
    }

    fn block(&mut self, block: &Block) -> Result<(), LowerError> {
        self.scopes.push();
        let result = block.stmts.iter().try_for_each(|stmt| self.stmt(stmt));
        self.scopes.pop();
        result?;
        match &block.tail {
            Some(tail) => Err(LowerError::new(
                tail.span,
                "a kernel block cannot produce a value here: add `;`",
            )),
            None => Ok(()),
        }
    }

    fn if_stmt(&mut self, stmt: &IfStmt) -> Result<(), LowerError> {
        let c = self.scalar(&stmt.cond)?;
        self.require(c, Scalar::Bool, stmt.cond.span)?;
        self.block(&stmt.then)?;
        match stmt.otherwise.as_deref() {
            Some(Else::If(nested)) => self.if_stmt(nested),
            Some(Else::Block(block)) => self.block(block),
            None => Ok(()),
        }
    }

    fn stmt(&mut self, stmt: &Stmt) -> Result<(), LowerError> {
        if self.struct_index_assignment(stmt)?.is_some() {
            return Ok(());
        }
        match stmt {
            Stmt::Let {
                name,
                ty,
                init,
                span,
                ..
            } => {
                if let Some(Expr {
                    kind:
                        ExprKind::Intrinsic {
                            intrinsic,
                            ty: Some(elem),
                            args,
                        },
                    span: init_span,
                }) = init
                {
                    if intrinsic.is_slice() {
                        // Lengths and, for `slice_at`, the address: all `usize`.
                        for arg in args {
                            let len = self.scalar(arg)?;
                            self.require(len, Scalar::Usize, arg.span)?;
                        }
                        let elem = self.library.scalar(self.spec, elem, *init_span)?;
                        let mutable = match intrinsic {
                            Intrinsic::SliceAt { mutable } => *mutable,
                            _ => true,
                        };
                        self.scopes.bind(name, Binding::Slice { elem, mutable });
                        return Ok(());
                    }
                }
                if let Some(Expr {
                    kind: ExprKind::Repeat { value, len },
                    ..
                }) = init
                {
                    if let ExprKind::Repeat {
                        value: element,
                        len: columns,
                    } = &value.kind
                    {
                        // `[[value; M]; N]`: N rows of M elements.
                        let elem = self.scalar(element)?;
                        for length in [len, columns] {
                            let l = self.scalar(length)?;
                            self.require(l, Scalar::Usize, length.span)?;
                        }
                        if let Some(ty) = ty {
                            let scalar = self.library.scalar(self.spec, ty, *span)?;
                            self.require(elem, scalar, *span)?;
                        }
                        self.lets.push((stmt as *const Stmt, elem, *span));
                        self.scopes.bind(name, Binding::Rows(elem));
                        return Ok(());
                    }
                    let value_ty = self.expr(value)?;
                    if let InferTy::Struct(struct_name) = value_ty {
                        // An array of structs: every element a copy of the value.
                        let l = self.scalar(len)?;
                        self.require(l, Scalar::Usize, len.span)?;
                        self.structs_let.push((stmt as *const Stmt, struct_name));
                        self.scopes.bind(name, Binding::StructArray(struct_name));
                        return Ok(());
                    }
                    let elem = self.scalar_of(value_ty, value)?;
                    let l = self.scalar(len)?;
                    self.require(l, Scalar::Usize, len.span)?;
                    if let Some(ty) = ty {
                        let scalar = self.library.scalar(self.spec, ty, *span)?;
                        self.require(elem, scalar, *span)?;
                    }
                    self.lets.push((stmt as *const Stmt, elem, *span));
                    self.scopes.bind(name, Binding::Array(elem));
                    return Ok(());
                }
                if let Some(
                    init @ Expr {
                        kind: ExprKind::SubSlice { .. },
                        ..
                    },
                ) = init
                {
                    let binding = match self.expr(init)? {
                        InferTy::Slice { elem, mutable } => Binding::Slice { elem, mutable },
                        _ => return Err(LowerError::new(init.span, "sub-slices of slices of structs are not supported: index the whole slice")),
                    };
                    self.scopes.bind(name, binding);
                    return Ok(());
                }
                if let Some(init) = init {
                    // An array a call returned (`let r = tile(acc);`).
                    match self.expr(init)? {
                        InferTy::Array(_) if matches!(init.kind, ExprKind::Index { .. }) => {
                            return Err(LowerError::new(
                                init.span,
                                "a row of an array of arrays is not copied whole: index its elements (`m[i][j]`) or copy them into a local array",
                            ))
                        }
                        InferTy::Array(var) => {
                            self.lets.push((stmt as *const Stmt, var, *span));
                            self.scopes.bind(name, Binding::Array(var));
                            return Ok(());
                        }
                        InferTy::StructArray(struct_name) => {
                            self.structs_let.push((stmt as *const Stmt, struct_name));
                            self.scopes.bind(name, Binding::StructArray(struct_name));
                            return Ok(());
                        }
                        _ => {}
                    }
                    if let InferTy::Struct(struct_name) = self.expr(init)? {
                        if let Some(ty) = ty {
                            if *ty != ValueType::Struct(struct_name.to_owned()) {
                                return Err(LowerError::new(*span, "mismatched types in `let`"));
                            }
                        }
                        self.structs_let.push((stmt as *const Stmt, struct_name));
                        self.scopes.bind(name, Binding::Struct(struct_name));
                        return Ok(());
                    }
                }
                let var = match init {
                    Some(init) => self.scalar(init)?,
                    None => self.fresh(Constraint::Unknown),
                };
                if let Some(ty) = ty {
                    let scalar = self.library.scalar(self.spec, ty, *span)?;
                    self.require(var, scalar, *span)?;
                }
                self.lets.push((stmt as *const Stmt, var, *span));
                self.scopes.bind(name, Binding::Var(var));
            }
            Stmt::LetTuple { names, init, span }
                if matches!(
                    init.kind,
                    ExprKind::Call { .. } | ExprKind::InlinePtx { .. }
                ) =>
            {
                let InferTy::Struct(name) = self.expr(init)? else {
                    let what = if matches!(init.kind, ExprKind::InlinePtx { .. }) {
                        "this `ptx!` does not return a tuple: give it a tuple type, `ptx!((u32, u32): ..)`"
                    } else {
                        "this call does not return a tuple"
                    };
                    return Err(LowerError::new(init.span, what));
                };
                let layout = self.library.struct_layout(name, *span)?;
                if !name.starts_with('(') {
                    return Err(LowerError::new(
                        *span,
                        format!("this call returns the struct `{name}`, not a tuple: bind it to one name"),
                    ));
                }
                if layout.fields.len() != names.len() {
                    return Err(LowerError::new(
                        *span,
                        format!(
                            "this call returns a tuple of {}, {} names given",
                            layout.fields.len(),
                            names.len()
                        ),
                    ));
                }
                self.structs_let.push((stmt as *const Stmt, name));
                for ((binding, _), field) in names.iter().zip(layout.fields) {
                    let scalar = field
                        .ty
                        .scalar()
                        .ok_or_else(|| LowerError::new(*span, "tuples hold scalars"))?;
                    let var = self.known(scalar);
                    self.scopes.bind(binding, Binding::Var(var));
                }
            }
            Stmt::LetTuple {
                names,
                init:
                    Expr {
                        kind: ExprKind::SplitAt { base, mid, mutable },
                        span,
                    },
                ..
            } => {
                let m = self.scalar(mid)?;
                self.require(m, Scalar::Usize, mid.span)?;
                let InferTy::Slice { elem, .. } = self.expr(base)? else {
                    return Err(LowerError::new(
                        base.span,
                        "only slices of scalars can be split (`x.split_at(mid)`): index a slice of structs whole",
                    ));
                };
                if names.len() != 2 {
                    return Err(LowerError::new(
                        *span,
                        format!("`split_at` gives two slices, {} names given", names.len()),
                    ));
                }
                for (name, _) in names {
                    self.scopes.bind(
                        name,
                        Binding::Slice {
                            elem,
                            mutable: *mutable,
                        },
                    );
                }
            }
            Stmt::LetTuple { names, init, span } => {
                let ExprKind::Intrinsic {
                    intrinsic: Intrinsic::VectorLoad(n),
                    args,
                    ..
                } = &init.kind
                else {
                    return Err(LowerError::new(
                        *span,
                        "tuples come from `vload4`/`vload2` and from calls of `#[device]` functions returning tuples",
                    ));
                };
                let elem = self.vector_access(args, *n, *span)?;
                if names.len() != usize::from(*n) {
                    return Err(LowerError::new(
                        *span,
                        format!("`vload{n}` gives {n} values, {} names given", names.len()),
                    ));
                }
                let var = self.known(elem);
                self.lets.push((stmt as *const Stmt, var, *span));
                for (name, _) in names {
                    let v = self.known(elem);
                    self.scopes.bind(name, Binding::Var(v));
                }
            }
            Stmt::Assign {
                place,
                op: Some(op),
                value,
                ..
            } if matches!(self.expr(place)?, InferTy::Struct(_)) => {
                let name = match self.expr(place)? {
                    InferTy::Struct(name) => name,
                    _ => return Err(LowerError::new(place.span, "a struct is expected here")),
                };
                self.compound_assignment(stmt, place, *op, value, name)?;
            }
            Stmt::Assign {
                place,
                op: None,
                value,
                span,
            } if matches!(self.expr(place)?, InferTy::Struct(_)) => {
                let (InferTy::Struct(a), InferTy::Struct(b)) =
                    (self.expr(place)?, self.expr(value)?)
                else {
                    return Err(LowerError::new(*span, "assign a struct of the same type"));
                };
                if a != b {
                    return Err(LowerError::new(
                        *span,
                        format!("mismatched types: `{a}` and `{b}`"),
                    ));
                }
            }
            // `c = b;` of arrays: a copy of every element.
            Stmt::Assign {
                place,
                op: None,
                value,
                span,
            } if matches!(
                self.expr(place)?,
                InferTy::Array(_) | InferTy::StructArray(_)
            ) =>
            {
                match (self.expr(place)?, self.expr(value)?) {
                    (InferTy::Array(a), InferTy::Array(b)) => self.unify(a, b, value.span)?,
                    (InferTy::StructArray(a), InferTy::StructArray(b)) if a == b => {}
                    _ => {
                        return Err(LowerError::new(
                            *span,
                            "assign an array of the same element type",
                        ))
                    }
                }
            }
            Stmt::Assign {
                place, op, value, ..
            } => {
                let p = self.scalar(place)?;
                let v = self.scalar(value)?;
                if !op.is_some_and(BinaryOp::is_shift) {
                    self.unify(p, v, value.span)?;
                }
            }
            Stmt::If(if_stmt) => self.if_stmt(if_stmt)?,
            Stmt::While { cond, body, .. } => {
                let c = self.scalar(cond)?;
                self.require(c, Scalar::Bool, cond.span)?;
                self.block(body)?;
            }
            Stmt::Loop { body, .. } => self.block(body)?,
            Stmt::For {
                var,
                range,
                body,
                span,
                ..
            } => {
                let start = self.scalar(&range.start)?;
                let end = self.scalar(&range.end)?;
                self.unify(start, end, range.span)?;
                if let Some(step) = &range.step {
                    let s = self.scalar(step)?;
                    self.require(s, Scalar::Usize, step.span)?;
                }
                self.lets.push((stmt as *const Stmt, start, *span));
                self.scopes.push();
                self.scopes.bind(var, Binding::Var(start));
                let result = self.block(body);
                self.scopes.pop();
                result?;
            }
            Stmt::Break { .. } | Stmt::Continue { .. } => {}
            Stmt::Match {
                scrutinee, arms, ..
            } => {
                let s = self.scalar(scrutinee)?;
                for arm in arms {
                    self.arm_patterns(s, arm)?;
                    self.block(&arm.body)?;
                }
            }
            Stmt::Print { args, .. } => {
                for arg in args {
                    self.scalar(arg)?;
                }
            }
            Stmt::Assert { cond, message, .. } => {
                let c = self.scalar(cond)?;
                self.require(c, Scalar::Bool, cond.span)?;
                for arg in message.iter().flat_map(|(_, args)| args) {
                    self.scalar(arg)?;
                }
            }
            Stmt::Return {
                value: Some(value), ..
            } if self.result_array.is_some() => {
                if let Some(wanted) = self.result_array {
                    self.array_value(value, wanted)?;
                }
            }
            Stmt::Return {
                value: Some(value), ..
            } if self.result_struct.is_some() => {
                let name = self.result_struct.unwrap_or_default();
                self.struct_value(value, name)?;
            }
            Stmt::Return { value, span } => match (value, self.result) {
                (None, None) if self.result_struct.is_some() => {
                    return Err(LowerError::new(*span, "`return` needs a value here"))
                }
                (None, None) => {}
                (Some(value), Some(result)) => {
                    let v = self.scalar(value)?;
                    self.unify(v, result, *span)?;
                }
                (Some(_), None) => {
                    return Err(LowerError::new(*span, "this function returns nothing"))
                }
                (None, Some(_)) => {
                    return Err(LowerError::new(*span, "`return` needs a value here"))
                }
            },
            Stmt::Block(block) => self.block(block)?,
            Stmt::Expr(expr) => match &expr.kind {
                ExprKind::Call {
                    callee,
                    generic_args,
                    args,
                } => {
                    self.call(expr, callee, generic_args, args)?;
                }
                ExprKind::MethodCall {
                    receiver,
                    method,
                    args,
                } => {
                    self.method_call(expr, receiver, method, args)?;
                }
                ExprKind::Intrinsic {
                    intrinsic, args, ..
                } => {
                    self.intrinsic(*intrinsic, args, expr.span)?;
                }
                ExprKind::InlinePtx { args, .. } => {
                    for arg in args {
                        self.ptx_argument(arg)?;
                    }
                }
                _ => return Err(LowerError::new(expr.span, "this expression has no effect")),
            },
        }
        Ok(())
    }

    /// Patterns have the scrutinee's type; guards are `bool`.
    fn arm_patterns(&mut self, scrutinee: usize, arm: &MatchArm) -> Result<(), LowerError> {
        for pattern in &arm.patterns {
            let literals = match pattern {
                Pattern::Literal(l) => vec![*l],
                Pattern::Range { start, end, .. } => vec![*start, *end],
                Pattern::Variant { ty, variant } => {
                    let repr = self.library.variant(ty, variant, arm.span)?.scalar();
                    let var = self.known(repr);
                    self.unify(var, scrutinee, arm.span)?;
                    vec![]
                }
                Pattern::Wildcard => vec![],
            };
            for literal in literals {
                let var = match literal {
                    Literal::Bool(_) => self.known(Scalar::Bool),
                    Literal::Int {
                        suffix: Some(s), ..
                    } => self.known(s),
                    Literal::Int { suffix: None, .. } => self.fresh(Constraint::AnyInt),
                    Literal::Float { .. } => {
                        return Err(LowerError::new(
                            arm.span,
                            "float patterns are not supported",
                        ))
                    }
                };
                self.unify(var, scrutinee, arm.span)?;
            }
        }
        if let Some(guard) = &arm.guard {
            let g = self.scalar(guard)?;
            self.require(g, Scalar::Bool, guard.span)?;
        }
        Ok(())
    }

    /// The types of an intrinsic's arguments and result (`None`: no value).
    fn intrinsic(
        &mut self,
        intrinsic: Intrinsic,
        args: &[Expr],
        span: Span,
    ) -> Result<Option<usize>, LowerError> {
        Ok(match intrinsic {
            Intrinsic::SyncThreads | Intrinsic::GridSync | Intrinsic::Fence(_) => None,
            Intrinsic::SharedArray | Intrinsic::DynamicShared | Intrinsic::SliceAt { .. } => {
                return Err(LowerError::new(
                    span,
                    format!(
                        "bind `{}` to a name: `let tile = {}::<f32>(..);`",
                        intrinsic.name(),
                        intrinsic.name()
                    ),
                ))
            }
            Intrinsic::Atomic(..) => {
                let Some(ExprKind::Reference { place, .. }) = args.first().map(|a| &a.kind) else {
                    return Err(LowerError::new(span, "an atomic takes `&mut x[i]` first"));
                };
                let target = self.scalar(place)?;
                for value in &args[1..] {
                    let v = self.scalar(value)?;
                    self.unify(v, target, value.span)?;
                }
                Some(target)
            }
            Intrinsic::OrderedAtomic { access, .. } => {
                let Some(ExprKind::Reference { place, .. }) = args.first().map(|a| &a.kind) else {
                    return Err(LowerError::new(
                        span,
                        format!("`{}` takes the element first (`&x[i]` or `&mut x[i]`)", intrinsic.name()),
                    ));
                };
                let target = self.scalar(place)?;
                // The ordering and scope, last, are variants read by lowering.
                let values = args.len().saturating_sub(2);
                for value in args.get(1..values).unwrap_or_default() {
                    let v = self.scalar(value)?;
                    self.unify(v, target, value.span)?;
                }
                (access != crate::intrinsics::AtomicAccess::Store).then_some(target)
            }
            Intrinsic::Volatile { store } => {
                let Some(ExprKind::Reference { place, .. }) = args.first().map(|a| &a.kind) else {
                    return Err(LowerError::new(
                        span,
                        format!("`{}` takes the element first (`&x[i]` or `&mut x[i]`)", intrinsic.name()),
                    ));
                };
                let target = self.scalar(place)?;
                for value in &args[1..] {
                    let v = self.scalar(value)?;
                    self.unify(v, target, value.span)?;
                }
                (!store).then_some(target)
            }
            Intrinsic::Clock64 | Intrinsic::GlobalTimer => Some(self.known(Scalar::U64)),
            Intrinsic::NanoSleep => {
                let [ns] = args else {
                    return Err(LowerError::new(span, "`nanosleep` takes the nanoseconds (`u32`)"));
                };
                let n = self.scalar(ns)?;
                self.require(n, Scalar::U32, ns.span)?;
                None
            }
            Intrinsic::Address(space) => {
                let Some(ExprKind::Reference { place, .. }) = args.first().map(|a| &a.kind) else {
                    return Err(LowerError::new(
                        span,
                        format!("`{}` takes `&x[i]`", intrinsic.name()),
                    ));
                };
                self.scalar(place)?;
                Some(self.known(match space {
                    crate::intrinsics::AddressSpace::Shared => Scalar::U32,
                    crate::intrinsics::AddressSpace::Global => Scalar::U64,
                }))
            }
            Intrinsic::TensorMapAddress => {
                let map = match args {
                    [Expr {
                        kind: ExprKind::Reference { place, .. },
                        ..
                    }] => match &place.kind {
                        ExprKind::Var(name) => Some(name),
                        _ => None,
                    },
                    _ => None,
                };
                match map.map(|name| self.scopes.lookup(name)) {
                    Some(Some(Binding::TensorMap)) => Some(self.known(Scalar::U64)),
                    _ => {
                        return Err(LowerError::new(
                            span,
                            "`tensor_map_address` takes a tensor-map parameter of the kernel: `tensor_map_address(&map)` with `map: TensorMap`",
                        ))
                    }
                }
            }
            Intrinsic::Shuffle(_) => {
                let [mask, value, lane] = args else {
                    return Err(LowerError::new(span, "a shuffle takes (mask, value, lane)"));
                };
                let m = self.scalar(mask)?;
                self.require(m, Scalar::U32, mask.span)?;
                let l = self.scalar(lane)?;
                self.require(l, Scalar::U32, lane.span)?;
                Some(self.scalar(value)?)
            }
            Intrinsic::Vote(op) => {
                let [mask, predicate] = args else {
                    return Err(LowerError::new(span, "a vote takes (mask, predicate)"));
                };
                let m = self.scalar(mask)?;
                self.require(m, Scalar::U32, mask.span)?;
                let p = self.scalar(predicate)?;
                self.require(p, Scalar::Bool, predicate.span)?;
                Some(self.known(if op == VoteOp::Ballot {
                    Scalar::U32
                } else {
                    Scalar::Bool
                }))
            }
            Intrinsic::ActiveMask | Intrinsic::LaneId => Some(self.known(Scalar::U32)),
            Intrinsic::VectorLoad(n) => {
                return Err(LowerError::new(
                    span,
                    format!("bind the values of `vload{n}` with a tuple: `let (a, b, ..) = vload{n}(x, i);`"),
                ))
            }
            Intrinsic::VectorStore(n) => {
                let elem = self.vector_access(&args[..2.min(args.len())], n, span)?;
                let Some(Expr { kind: ExprKind::Tuple(values), .. }) = args.get(2) else {
                    return Err(LowerError::new(span, format!("`vstore{n}` takes its values as a tuple: `vstore{n}(y, i, (a, b, ..))`")));
                };
                if values.len() != usize::from(n) {
                    return Err(LowerError::new(span, format!("`vstore{n}` stores {n} values, {} given", values.len())));
                }
                for value in values {
                    let v = self.scalar(value)?;
                    self.require(v, elem, value.span)?;
                }
                None
            }
        })
    }

    /// The slice and index arguments of a vector access; returns the element type, which
    /// must make `n` elements 16 bytes (or 8 for two 32-bit values).
    fn vector_access(&mut self, args: &[Expr], n: u8, span: Span) -> Result<Scalar, LowerError> {
        let [slice, index] = args else {
            return Err(LowerError::new(
                span,
                "a vector access takes (slice, index)",
            ));
        };
        let InferTy::Slice { elem, .. } = self.expr(slice)? else {
            return Err(LowerError::new(
                slice.span,
                "vector accesses apply to slices",
            ));
        };
        let i = self.scalar(index)?;
        self.require(i, Scalar::Usize, index.span)?;
        let bytes = elem.size_bytes() * u32::from(n);
        if !(bytes == 16 || bytes == 8) || elem == Scalar::Bool {
            return Err(LowerError::new(
                span,
                format!("`{n}` elements of `{elem}` are {bytes} bytes; vector accesses move 8 or 16 bytes (`vload8` of 16-bit values, `vload4` of 32-bit values, `vload2` of 64-bit values)"),
            ));
        }
        Ok(elem)
    }

    /// `receiver.function(args)`: arguments have the receiver's type, except `powi`'s
    /// (`i32`) and the shift amounts and exponents (`u32`); the result is the receiver's
    /// type, `bool`, `u32`, or one derived from the receiver's (`abs_diff`, `to_bits`).
    fn math(
        &mut self,
        function: MathFunction,
        receiver: &Expr,
        args: &[Expr],
        span: Span,
    ) -> Result<usize, LowerError> {
        let r = self.scalar(receiver)?;
        if let MathFunction::FromBits(float) = function {
            if let Some(bits) = crate::math::bits_type(float) {
                self.require(r, bits, receiver.span)?;
            }
            return Ok(self.known(float));
        }
        for arg in args {
            let a = self.scalar(arg)?;
            match function {
                MathFunction::Powi => self.require(a, Scalar::I32, arg.span)?,
                MathFunction::WrappingShl
                | MathFunction::WrappingShr
                | MathFunction::RotateLeft
                | MathFunction::RotateRight
                | MathFunction::Pow => self.require(a, Scalar::U32, arg.span)?,
                _ => self.unify(a, r, arg.span)?,
            }
        }
        Ok(match function {
            MathFunction::IsNan => self.known(Scalar::Bool),
            MathFunction::CountOnes | MathFunction::LeadingZeros | MathFunction::TrailingZeros => {
                self.known(Scalar::U32)
            }
            MathFunction::AbsDiff | MathFunction::ToBits => {
                // The result's type follows from the receiver's, which must be known here,
                // as rustc requires of a method call on a number.
                let root = self.find(r);
                let Constraint::Known(ty) = self.constraint[root] else {
                    return Err(LowerError::new(
                        span,
                        format!(
                            "`{}` needs the type of its value: give it a suffix (`1.5f32`) or a typed `let`",
                            function.name()
                        ),
                    ));
                };
                let result = function.result(ty);
                self.known(result)
            }
            _ => r,
        })
    }

    /// A call of a device function: its type parameters become fresh variables (or take
    /// the turbofish's types), its parameters unify with the arguments. Returns the
    /// variable of the result, `None` for functions returning nothing.
    fn call(
        &mut self,
        expr: &Expr,
        callee: &str,
        generic_args: &[GenericArg],
        args: &[Expr],
    ) -> Result<Option<InferTy>, LowerError> {
        let span = expr.span;
        let library = self.library;
        let function = library.get(callee).ok_or_else(|| {
            LowerError::new(
                span,
                format!("`{callee}` is not a known `#[device]` function"),
            )
        })?;
        if !generic_args.is_empty() && generic_args.len() != function.generics.len() {
            return Err(LowerError::new(
                span,
                format!(
                    "`{callee}` has {} generic parameters, {} given",
                    function.generics.len(),
                    generic_args.len()
                ),
            ));
        }
        let mut types = Vec::new();
        let mut consts = Vec::new();
        for (index, generic) in function.generics.iter().enumerate() {
            let given = generic_args.get(index);
            match (&generic.kind, given) {
                (GenericKind::Type { .. }, Some(GenericArg::Type(ty))) => {
                    let scalar = self.library.scalar(self.spec, ty, span)?;
                    types.push((generic.name.clone(), self.known(scalar)));
                }
                (GenericKind::Type { .. }, None) => {
                    types.push((generic.name.clone(), self.fresh(Constraint::Unknown)));
                }
                (GenericKind::Const(ty), Some(GenericArg::Const(value))) => {
                    consts.push((generic.name.clone(), self.const_value(value, *ty)?));
                }
                (GenericKind::Const(_), None) => {
                    return Err(LowerError::new(
                        span,
                        format!("give `{callee}`'s const parameter `{}` with a turbofish: `{callee}::<..>(..)`", generic.name),
                    ))
                }
                _ => {
                    return Err(LowerError::new(
                        span,
                        format!("generic argument {} of `{callee}` is of the wrong kind", index + 1),
                    ))
                }
            }
        }
        if let Some(error) = args.iter().find_map(|arg| self.tuple_value_passed(arg)) {
            return Err(error);
        }
        if args.len() != function.params.len() {
            return Err(LowerError::new(
                span,
                format!(
                    "`{callee}` takes {} arguments, {} given",
                    function.params.len(),
                    args.len()
                ),
            ));
        }
        let external = function.external.is_some();
        let var_of = |this: &mut Self, ty: &ValueType| -> Result<usize, LowerError> {
            match ty {
                ValueType::Scalar(s) => Ok(this.known(*s)),
                // Enums pass as their integer (`repr`) to external functions.
                ValueType::Struct(name) if external => {
                    match this.library.resolve_value(this.spec, ty, span)? {
                        Resolved::Scalar(s) => Ok(this.known(s)),
                        Resolved::Struct(_) => Err(LowerError::new(
                            span,
                            format!("the struct `{name}` is not a scalar"),
                        )),
                    }
                }
                ValueType::Generic(name) => types
                    .iter()
                    .find(|(n, _)| n == name)
                    .map(|(_, v)| *v)
                    .ok_or_else(|| {
                        LowerError::new(span, format!("unknown type `{name}` in `{callee}`"))
                    }),
                ValueType::Struct(name) => Err(LowerError::new(
                    span,
                    format!(
                        "device functions cannot take the struct `{name}` yet: pass its fields"
                    ),
                )),
                ValueType::Tuple(_) => Err(LowerError::new(
                    span,
                    "a tuple here is not supported: pass its elements",
                )),
                ValueType::Array { .. } => Err(LowerError::new(
                    span,
                    "an array here is not supported: arrays are not nested",
                )),
            }
        };
        let mut closures = Vec::new();
        for (param, arg) in function.params.iter().zip(args) {
            if let ParamType::Closure { arity } = param.ty {
                closures.push(self.closure_argument(callee, param, arity, arg)?);
                continue;
            }
            // `[T; N]` by value: an array of the element type (the caller's copy is made
            // when lowering).
            if let (ParamType::Value(ValueType::Array { elem, .. }), false) = (&param.ty, external)
            {
                let wanted = match elem.as_ref() {
                    ValueType::Struct(_) => self.array_type(elem, arg.span)?,
                    scalar => InferTy::Array(var_of(self, scalar)?),
                };
                self.array_value(arg, wanted)?;
                continue;
            }
            if let ParamType::Reference {
                target,
                len,
                mutable,
            } = &param.ty
            {
                self.reference_argument(callee, param, target, len.as_ref(), *mutable, arg)?;
                continue;
            }
            if let ParamType::Value(ty @ ValueType::Struct(name)) = &param.ty {
                if let Resolved::Struct(handle) =
                    self.library.resolve_value(self.spec, ty, arg.span)?
                {
                    match self.expr(arg)? {
                        InferTy::Struct(given) if given == handle => continue,
                        _ => {
                            return Err(LowerError::new(
                                arg.span,
                                format!("`{callee}` takes a `{name}` here"),
                            ))
                        }
                    }
                }
            }
            match (&param.ty, self.expr(arg)?) {
                (ParamType::Value(ty), InferTy::Scalar(a)) => {
                    let p = var_of(self, ty)?;
                    self.unify(a, p, arg.span)?;
                }
                (
                    ParamType::Slice { elem, mutable },
                    InferTy::Slice {
                        elem: given,
                        mutable: given_mut,
                    },
                ) => {
                    if *mutable && !given_mut {
                        return Err(LowerError::new(
                            arg.span,
                            format!(
                                "`{callee}` writes through `{}`: pass a `&mut` slice",
                                param.name
                            ),
                        ));
                    }
                    let p = var_of(self, elem)?;
                    self.require(p, given, arg.span)?;
                }
                // A slice of structs: the same struct, and `&mut` where it is written.
                (
                    ParamType::Slice { elem, mutable },
                    InferTy::StructSlice {
                        name: given,
                        mutable: given_mut,
                    },
                ) => {
                    let wanted = match self.library.resolve_value(self.spec, elem, arg.span)? {
                        Resolved::Struct(name) => name,
                        Resolved::Scalar(_) => "",
                    };
                    if wanted != given {
                        return Err(LowerError::new(
                            arg.span,
                            format!(
                                "`{callee}` takes a slice of `{}` as `{}`, not of `{given}`",
                                ty_name(elem),
                                param.name
                            ),
                        ));
                    }
                    if *mutable && !given_mut {
                        return Err(LowerError::new(
                            arg.span,
                            format!(
                                "`{callee}` writes through `{}`: pass a `&mut` slice",
                                param.name
                            ),
                        ));
                    }
                }
                _ => {
                    return Err(LowerError::new(
                        arg.span,
                        format!(
                            "argument `{}` of `{callee}` has the wrong kind (slice or scalar)",
                            param.name
                        ),
                    ))
                }
            }
        }
        let result = match &function.result {
            Some(ValueType::Array { elem, .. }) => Some(match elem.as_ref() {
                ValueType::Struct(_) => self.array_type(elem, span)?,
                scalar => InferTy::Array(var_of(self, scalar)?),
            }),
            Some(ValueType::Tuple(elements)) => Some(InferTy::Struct(
                self.tuple_result(callee, elements, &types, span)?,
            )),
            Some(ty @ ValueType::Struct(name)) => {
                match self.library.resolve_value(self.spec, ty, span)? {
                    Resolved::Struct(name) => Some(InferTy::Struct(name)),
                    Resolved::Scalar(_) if external => Some(InferTy::Scalar(var_of(self, ty)?)),
                    Resolved::Scalar(_) => {
                        return Err(LowerError::new(
                            span,
                            format!("`{callee}` returns the enum `{name}`, which device functions cannot return yet: return its integer (`as u32`)"),
                        ))
                    }
                }
            }
            Some(ty) => Some(InferTy::Scalar(var_of(self, ty)?)),
            None => None,
        };
        self.calls.push(PendingCall {
            expr: expr as *const Expr,
            name: callee.to_owned(),
            types,
            consts,
            closures,
            span,
        });
        Ok(result)
    }

    /// The closure passed for `callee`'s closure parameter `param`: its parameters'
    /// written types resolved here (the caller's generics mean nothing in the callee), and
    /// the types of the names it captures.
    fn closure_argument(
        &mut self,
        callee: &str,
        param: &ast::Param,
        arity: usize,
        arg: &Expr,
    ) -> Result<PendingClosure, LowerError> {
        let ExprKind::Closure {
            params,
            body,
            captures,
        } = &arg.kind
        else {
            return Err(LowerError::new(
                arg.span,
                format!(
                    "`{callee}` takes a closure for `{}`: pass one (`|a, b| a + b`) or the name of a closure local",
                    param.name
                ),
            ));
        };
        if params.len() != arity {
            return Err(LowerError::new(
                arg.span,
                format!(
                    "`{callee}`'s `{}` takes a closure of {arity} parameters, this one has {}",
                    param.name,
                    params.len()
                ),
            ));
        }
        let mut resolved = Vec::new();
        for p in params {
            let ty = match &p.ty {
                Some(ty) => Some(ValueType::Scalar(
                    self.library.scalar(self.spec, ty, arg.span)?,
                )),
                None => None,
            };
            resolved.push(ClosureParam {
                name: p.name.clone(),
                ty,
            });
        }
        let mut names = Vec::new();
        let mut types = Vec::new();
        for capture in captures {
            let ExprKind::Var(name) = &capture.kind else {
                return Err(LowerError::new(
                    capture.span,
                    "internal: a capture is a name",
                ));
            };
            let ty = self.expr(capture)?;
            if !matches!(
                ty,
                InferTy::Scalar(_) | InferTy::Slice { .. } | InferTy::Struct(_)
            ) {
                return Err(LowerError::new(
                    capture.span,
                    format!("a closure passed to a `#[device]` function captures scalars, slices of scalars and structs; `{name}` is none of them: copy what the closure needs into a local first"),
                ));
            }
            names.push(name.clone());
            types.push(ty);
        }
        // The caller's constants the body names, which the instance is given.
        let named = body.variables();
        let constants = self
            .constants
            .iter()
            .filter(|c| named.iter().any(|n| n == c.name))
            .copied()
            .collect();
        Ok(PendingClosure {
            closure: ClosureArg {
                param: param.name.clone(),
                params: resolved,
                body: (**body).clone(),
                constants,
                // Placeholders, replaced when the types are known.
                captures: names
                    .into_iter()
                    .map(|n| (n, CaptureType::Scalar(Scalar::Bool)))
                    .collect(),
            },
            captures: types,
        })
    }

    /// A name bound to a returned tuple without a pattern or type (`let t = f(x);`) passed
    /// to a function: its elements can be read (`t.0`), but the caller's tuple parameters
    /// take a tuple local's elements, which only a pattern or annotation makes.
    fn tuple_value_passed(&self, arg: &Expr) -> Option<LowerError> {
        let ExprKind::Var(name) = &arg.kind else {
            return None;
        };
        match self.scopes.lookup(name) {
            Some(Binding::Struct(ty)) if ty.starts_with('(') => Some(LowerError::new(
                arg.span,
                format!(
                    "`{name}` holds the tuple `{ty}` a function returned; to pass it on as a tuple, bind it with its type (`let {name}: {ty} = ..`) or a pattern (`let (a, b) = ..`)"
                ),
            )),
            _ => None,
        }
    }

    /// An argument of `ptx!`: a scalar, or a local array as a register list (`acc`, or
    /// `&mut acc` for registers the instruction reads and replaces).
    fn ptx_argument(&mut self, arg: &Expr) -> Result<(), LowerError> {
        let (place, read_write) = match &arg.kind {
            ExprKind::Reference {
                mutable: true,
                place,
            } => (&**place, true),
            _ => (arg, false),
        };
        if let ExprKind::Var(name) = &place.kind {
            if let Some(Binding::Array(_)) = self.scopes.lookup(name) {
                return Ok(());
            }
        }
        if read_write {
            return Err(LowerError::new(
                arg.span,
                "`&mut` in `ptx!` passes a local array as in/out registers (`&mut acc` of `let mut acc = [0.0f32; N];`); a scalar output is the `ptx!`'s result",
            ));
        }
        self.scalar(arg)?;
        Ok(())
    }

    /// `&name` / `&mut name` passed to an `#[extern_device]` reference parameter: a struct
    /// of the parameter's type, or a local array of its element type and length.
    fn reference_argument(
        &mut self,
        callee: &str,
        param: &crate::ast::Param,
        target: &ValueType,
        len: Option<&crate::ast::ArrayLen>,
        mutable: bool,
        arg: &Expr,
    ) -> Result<(), LowerError> {
        let wrong = |what: String| Err(LowerError::new(arg.span, what));
        // An array reference of a device function passed on by name (`acc`, itself a
        // reference or an array parameter), or a local array passed as Rust reborrows.
        if let (ExprKind::Var(_), Some(_)) = (&arg.kind, len) {
            match self.expr(arg)? {
                InferTy::Array(elem) => {
                    let wanted = self.library.scalar(self.spec, target, arg.span)?;
                    return self.require(elem, wanted, arg.span);
                }
                InferTy::StructArray(_) => return Ok(()),
                _ => {}
            }
        }
        // A `&S` parameter passed on as it is (`comm`, already a reference).
        if let ExprKind::Var(name) = &arg.kind {
            if let (Some(Binding::StructRef(given)), None, false) =
                (self.scopes.lookup(name), len, mutable)
            {
                return match self.library.resolve_value(self.spec, target, arg.span)? {
                    Resolved::Struct(wanted) if wanted == given => Ok(()),
                    _ => wrong(format!("`{callee}` takes `&{}` here", ty_name(target))),
                };
            }
        }
        let ExprKind::Reference {
            mutable: given_mut,
            place,
        } = &arg.kind
        else {
            let amp = if mutable { "&mut " } else { "&" };
            return wrong(format!(
                "`{}` of `{callee}` is a reference: pass `{amp}name`",
                param.name
            ));
        };
        if mutable && !given_mut {
            return wrong(format!(
                "`{callee}` writes through `{}`: pass `&mut ..`",
                param.name
            ));
        }
        let given = self.expr(place)?;
        match (len, given) {
            (None, InferTy::Struct(name)) => {
                match self.library.resolve_value(self.spec, target, arg.span)? {
                    Resolved::Struct(wanted) if wanted == name => Ok(()),
                    _ => wrong(format!("`{callee}` takes `&{}` here", ty_name(target))),
                }
            }
            (Some(_), InferTy::Array(elem)) => {
                let wanted = self.library.scalar(self.spec, target, arg.span)?;
                self.require(elem, wanted, arg.span)
            }
            (Some(_), InferTy::StructArray(name)) => {
                match self.library.resolve_value(self.spec, target, arg.span)? {
                    Resolved::Struct(wanted) if wanted == name => Ok(()),
                    _ => wrong(format!("`{callee}` takes `&[{}; N]` here", ty_name(target))),
                }
            }
            _ => wrong(format!(
                "`{}` of `{callee}` takes a reference to a {}",
                param.name,
                if len.is_some() {
                    "local array (`let mut a = [0u64; N];`)"
                } else {
                    "struct"
                }
            )),
        }
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
            ExprKind::Var(name) => match self.spec.constant(name) {
                Some(ir::Literal::Int { bits, .. }) => Ok(ir::Literal::Int { bits, ty }),
                Some(other) => Ok(other),
                None => Err(LowerError::new(
                    value.span,
                    format!("`{name}` is not a const parameter"),
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
