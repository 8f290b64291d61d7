//! `let` bindings: what kind of name each initializer binds (a scalar, a slice, an array, a
//! struct, a tuple's parts) and the type it takes.

use super::{Binding, Constraint, InferTy, Inference};
use crate::ast::{Expr, ExprKind, Stmt, ValueType};
use crate::intrinsics::Intrinsic;
use crate::lower::error::LowerError;
use crate::{Scalar, Span};

impl Inference<'_> {
    /// `let name: ty = init;`: the binding's type from its annotation, its initializer, or its
    /// first use; a slice, array, struct or tuple initializer binds a name of that kind.
    pub(super) fn let_binding(
        &mut self,
        stmt: &Stmt,
        name: &str,
        ty: &Option<ValueType>,
        init: &Option<Expr>,
        span: &Span,
    ) -> Result<(), LowerError> {
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
            let known_len = match self.const_value(len, Scalar::Usize) {
                Ok(crate::ir::Literal::Int { bits, .. }) => Some(bits),
                _ => None,
            };
            self.scopes.bind(name, Binding::Array(elem, known_len));
            return Ok(());
        }
        if let Some(
            init @ Expr {
                kind: ExprKind::SubSlice { .. },
                ..
            },
        ) = init
        {
            let binding =
                match self.expr(init)? {
                    InferTy::Slice { elem, mutable } => Binding::Slice { elem, mutable },
                    _ => return Err(LowerError::new(
                        init.span,
                        "sub-slices of slices of structs are not supported: index the whole slice",
                    )),
                };
            self.scopes.bind(name, binding);
            return Ok(());
        }
        if let Some(init) = init {
            // An array a call returned (`let r = tile(acc);`), a copy of one, or of a row
            // of an array of arrays (`let r = m[i];`).
            match self.expr(init)? {
                InferTy::Array(var) => {
                    self.lets.push((stmt as *const Stmt, var, *span));
                    self.scopes.bind(name, Binding::Array(var, None));
                    return Ok(());
                }
                // A copy of an array of arrays (`let m2 = m;`) or one a call returned.
                InferTy::Rows(var) => {
                    self.lets.push((stmt as *const Stmt, var, *span));
                    self.scopes.bind(name, Binding::Rows(var));
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
        Ok(())
    }

    /// `let (a, b) = ..;`: a tuple returned by a call or `ptx!`, the halves of `split_at`, the
    /// lanes of a vector load.
    pub(super) fn let_tuple(&mut self, stmt: &Stmt) -> Result<(), LowerError> {
        match stmt {
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
                    // `(bool, Hit)` of an `Option<Hit>`: elements are scalars, structs and
                    // arrays, each bound as a local of its type.
                    let bound = match self.field_type(&field.ty, *span)? {
                        InferTy::Scalar(var) => Binding::Var(var),
                        InferTy::Struct(name) => Binding::Struct(name),
                        InferTy::Array(var) => {
                            Binding::Array(var, Some(field.ty.element_count() as u64))
                        }
                        InferTy::StructArray(name) => Binding::StructArray(name),
                        InferTy::Rows(var) => Binding::Rows(var),
                        _ => {
                            return Err(LowerError::new(*span, "internal: a tuple element's type"))
                        }
                    };
                    self.scopes.bind(binding, bound);
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
            _ => {}
        }
        Ok(())
    }
}
