//! Type inference over the captured syntax.
//!
//! rustc has already type-checked the kernel body; this pass recovers the types rustc chose
//! so the IR can be typed: unsuffixed literals take the type their context gives them, and
//! fall back to `i32` and `f64` as in Rust. It is a small unification over scalar type
//! variables (union-find), run once over the body before lowering.

use std::collections::HashMap;

use super::error::LowerError;
use super::scope::Scopes;
use crate::ast::{
    BinaryOp, Block, Builtin, Else, Expr, ExprKind, IfStmt, KernelSource, Literal, ParamType, Stmt,
    UnaryOp,
};
use crate::{Scalar, Span};

/// What is known about a type variable.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Constraint {
    Unknown,
    /// Some integer type (an unsuffixed integer literal).
    AnyInt,
    /// Some float type (an unsuffixed float literal).
    AnyFloat,
    Known(Scalar),
}

/// The type of an expression during inference.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum InferTy {
    Scalar(usize),
    Slice { elem: Scalar, mutable: bool },
}

/// What a name refers to during inference.
#[derive(Clone, Copy, Debug)]
enum Binding {
    Var(usize),
    Slice { elem: Scalar, mutable: bool },
}

/// Resolved types of a kernel body: of every scalar expression, of every `let` and of every
/// `for` variable, keyed by the address of the syntax node (the AST is borrowed, unchanged,
/// for the whole lowering).
#[derive(Debug, Default)]
pub(super) struct TypeTable {
    exprs: HashMap<*const Expr, Scalar>,
    lets: HashMap<*const Stmt, Scalar>,
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
}

/// Infers the types of `kernel`'s body.
pub(super) fn infer(kernel: &KernelSource) -> Result<TypeTable, LowerError> {
    let mut inference = Inference::default();
    inference.scopes.push();
    for param in &kernel.params {
        let binding = match param.ty {
            ParamType::Scalar(s) => Binding::Var(inference.known(s)),
            ParamType::Slice { elem, mutable } => Binding::Slice { elem, mutable },
        };
        inference.scopes.bind(&param.name, binding);
    }
    inference.block(&kernel.body)?;
    inference.finish()
}

#[derive(Default)]
struct Inference {
    parent: Vec<usize>,
    constraint: Vec<Constraint>,
    scopes: Scopes<Binding>,
    exprs: Vec<(*const Expr, usize, Span)>,
    lets: Vec<(*const Stmt, usize, Span)>,
}

impl Inference {
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
        match self.expr(expr)? {
            InferTy::Scalar(var) => Ok(var),
            InferTy::Slice { .. } => Err(LowerError::new(
                expr.span,
                "a slice can only be indexed or asked for its `.len()` here",
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
                None => {
                    return Err(LowerError::new(
                        span,
                        format!("cannot find `{name}` in the kernel"),
                    ))
                }
            },
            ExprKind::Unary { op, operand } => {
                let var = self.scalar(operand)?;
                if *op == UnaryOp::Not {
                    let root = self.find(var);
                    if self.constraint[root] == Constraint::AnyFloat {
                        return Err(LowerError::new(span, "`!` does not apply to floats"));
                    }
                }
                var
            }
            ExprKind::Binary { op, left, right } => {
                let l = self.scalar(left)?;
                let r = self.scalar(right)?;
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
                let InferTy::Slice { elem, .. } = self.expr(base)? else {
                    return Err(LowerError::new(base.span, "only slices can be indexed"));
                };
                let i = self.scalar(index)?;
                self.require(i, Scalar::Usize, index.span)?;
                self.known(elem)
            }
            ExprKind::Len(base) => {
                if !matches!(self.expr(base)?, InferTy::Slice { .. }) {
                    return Err(LowerError::new(base.span, "`.len()` applies to slices"));
                }
                self.known(Scalar::Usize)
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
        };
        self.exprs.push((expr as *const Expr, var, span));
        Ok(InferTy::Scalar(var))
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
        match stmt {
            Stmt::Let {
                name,
                ty,
                init,
                span,
                ..
            } => {
                let var = match init {
                    Some(init) => self.scalar(init)?,
                    None => self.fresh(Constraint::Unknown),
                };
                if let Some(ty) = ty {
                    self.require(var, *ty, *span)?;
                }
                self.lets.push((stmt as *const Stmt, var, *span));
                self.scopes.bind(name, Binding::Var(var));
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
            Stmt::Break { .. } | Stmt::Continue { .. } | Stmt::Return { .. } => {}
            Stmt::Block(block) => self.block(block)?,
        }
        Ok(())
    }

    fn resolve(&mut self, var: usize, span: Span) -> Result<Scalar, LowerError> {
        let root = self.find(var);
        match self.constraint[root] {
            Constraint::Known(s) => Ok(s),
            Constraint::AnyInt => Ok(Scalar::I32),
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
        Ok(table)
    }
}

fn merge(a: Constraint, b: Constraint) -> Option<Constraint> {
    use Constraint::*;
    match (a, b) {
        (Unknown, x) | (x, Unknown) => Some(x),
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
        Constraint::Known(s) => format!("`{s}`"),
    }
}
