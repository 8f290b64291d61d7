//! Arrays of arrays of scalars as locals: `let mut m = [[0.0f32; 4]; 4];`, `m[i][j]` read,
//! written and compounded, `m.len()` and `m[i].len()`.
//!
//! As `float m[4][4]` in CUDA C++: one local of type `[N x [M x T]]`, `m[i]` the pointer to
//! row `i` (checked against `N`) and `m[i][j]` the element of that row (checked against
//! `M`, as Rust checks each index, not the flat one), so with constant indices after
//! unrolling every element is a register.

use super::*;

impl Lowerer<'_, '_> {
    /// `let name = [[value; columns]; rows];`: the local, every element set to `value`.
    pub(super) fn rows_let(
        &mut self,
        stmt: &Stmt,
        name: &str,
        value: &Expr,
        (columns, rows): (&Expr, &Expr),
        span: Span,
        out: &mut Block,
    ) -> Result<(), LowerError> {
        const MAX_ELEMENTS: u64 = 4096;
        let column_count = self.constant_value(columns)?;
        let row_count = self.constant_value(rows)?;
        let total = column_count.saturating_mul(row_count);
        if column_count == 0 || row_count == 0 || total > MAX_ELEMENTS {
            return Err(LowerError::new(
                span,
                format!("a local array holds 1 to {MAX_ELEMENTS} elements (registers or local memory), not {row_count} rows of {column_count}"),
            ));
        }
        let elem = self
            .types
            .binding(stmt)
            .ok_or_else(|| LowerError::new(span, "internal: array without an element type"))?;
        let elem_ty = self.scalar_type(elem);
        let row_ty = self.program.module.types.insert(Type {
            inner: TypeInner::Array {
                base: elem_ty,
                len: column_count as u32,
            },
        });
        let array_ty = self.program.module.types.insert(Type {
            inner: TypeInner::Array {
                base: row_ty,
                len: row_count as u32,
            },
        });
        let value = self.expr(value, out)?;
        let initial = self.local(&format!("{name}.init"), elem_ty, span);
        out.push(
            Statement::LocalStore {
                local: initial,
                value,
            },
            span,
        );
        let local = self.local(name, array_ty, span);
        for r in 0..row_count {
            for c in 0..column_count {
                let row_index = self.int(r, Scalar::Usize, span);
                let row = self.expr_node(
                    Expression::ArrayElement {
                        local,
                        index: row_index,
                    },
                    span,
                );
                let index = self.int(c, Scalar::Usize, span);
                let pointer = self.expr_node(Expression::MemberElement { array: row, index }, span);
                let value = self.load_local(initial, span);
                out.push(Statement::Store { pointer, value }, span);
            }
        }
        self.scopes
            .bind(name, Binding::Array(local, row_count as u32));
        Ok(())
    }

    /// The array of arrays `expr` names (a local, or a `[[T; M]; N]` / `&[[T; M]; N]`
    /// parameter, which points to one): its type and how to reach it.
    pub(super) fn rows_binding(&self, expr: &Expr) -> Option<(RowsBase, Handle<Type>)> {
        let ExprKind::Var(name) = &expr.kind else {
            return None;
        };
        let (base, array_ty) = match self.scopes.lookup(name)? {
            Binding::Array(local, _) => (RowsBase::Local(local), self.function.locals[local].ty),
            Binding::ArrayArgument(index, _) => {
                match self.program.module.types[self.function.arguments[index as usize].ty].inner {
                    TypeInner::Pointer { base, .. } => (RowsBase::Argument(index), base),
                    _ => return None,
                }
            }
            _ => return None,
        };
        let TypeInner::Array { base: row, .. } = self.program.module.types[array_ty].inner else {
            return None;
        };
        matches!(
            self.program.module.types[row].inner,
            TypeInner::Array { .. }
        )
        .then_some((base, array_ty))
    }

    /// The type of the array of arrays `rows`: a local or parameter by name
    /// ([`Self::rows_binding`]), or a struct's field of that type (`t.m` in `t.m[r][c]`).
    pub(super) fn rows_type(&mut self, rows: &Expr) -> Result<Option<Handle<Type>>, LowerError> {
        if let Some((_, array_ty)) = self.rows_binding(rows) {
            return Ok(Some(array_ty));
        }
        if !matches!(rows.kind, ExprKind::Field { .. }) {
            return Ok(None);
        }
        Ok(self
            .array_value_type(rows)?
            .filter(|&field_ty| self.columns_of(field_ty).is_some()))
    }

    /// Where the array of arrays `rows` is: a local or parameter by name
    /// ([`Self::rows_binding`]), or a struct's field of that type (`t.m` in `t.m[r][c]`).
    pub(super) fn rows_place(
        &mut self,
        rows: &Expr,
        block: &mut Block,
    ) -> Result<Option<RowsBase>, LowerError> {
        if let Some((base, _)) = self.rows_binding(rows) {
            return Ok(Some(base));
        }
        let ExprKind::Field { base, field } = &rows.kind else {
            return Ok(None);
        };
        if self.rows_type(rows)?.is_none() {
            return Ok(None);
        }
        Ok(Some(RowsBase::Pointer(
            self.field_pointer(base, field, rows.span, block)?,
        )))
    }

    /// The row length of the array of arrays of type `array_ty`.
    pub(super) fn columns_of(&self, array_ty: Handle<Type>) -> Option<u32> {
        let TypeInner::Array { base: row, .. } = self.program.module.types[array_ty].inner else {
            return None;
        };
        self.array_len_of(row)
    }

    /// A pointer to row `index` of the array of arrays at `base`.
    pub(super) fn row_pointer(
        &mut self,
        base: RowsBase,
        index: Handle<Expression>,
        span: Span,
    ) -> Handle<Expression> {
        match base {
            RowsBase::Local(local) => {
                self.expr_node(Expression::ArrayElement { local, index }, span)
            }
            RowsBase::Argument(argument) => {
                let array = self.expr_node(Expression::FunctionArgument(argument), span);
                self.expr_node(Expression::MemberElement { array, index }, span)
            }
            RowsBase::Pointer(array) => {
                self.expr_node(Expression::MemberElement { array, index }, span)
            }
        }
    }

    /// `m[i][j]` of an array of arrays: the pointer to the element, each index
    /// checked against its own length. `None` if `base` is not `m[i]` of one.
    pub(super) fn rows_element_pointer(
        &mut self,
        base: &Expr,
        index: &Expr,
        block: &mut Block,
    ) -> Result<Option<Handle<Expression>>, LowerError> {
        let ExprKind::Index {
            base: rows,
            index: row_index,
        } = &base.kind
        else {
            return Ok(None);
        };
        let Some(rows_base) = self.rows_place(rows, block)? else {
            return Ok(None);
        };
        let row_index = self.expr(row_index, block)?;
        let row = self.row_pointer(rows_base, row_index, base.span);
        let index = self.expr(index, block)?;
        Ok(Some(self.expr_node(
            Expression::MemberElement { array: row, index },
            base.span,
        )))
    }

    /// `m[i].len()` of a local array of arrays: its row length, a constant.
    pub(super) fn row_len(&self, expr: &Expr) -> Option<u32> {
        match &expr.kind {
            ExprKind::Index { base, .. } => self
                .rows_binding(base)
                .and_then(|(_, array_ty)| self.columns_of(array_ty)),
            _ => None,
        }
    }
}

/// Where an array of arrays is: a local, or behind an array parameter's pointer.
#[derive(Clone, Copy)]
pub(super) enum RowsBase {
    Local(Handle<LocalVariable>),
    Argument(u32),
    /// A pointer to it (a struct's field).
    Pointer(Handle<Expression>),
}
