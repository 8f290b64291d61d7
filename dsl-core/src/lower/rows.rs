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

    /// The local array of arrays `expr` names and its row length, if it names one.
    pub(super) fn rows_binding(&self, expr: &Expr) -> Option<(Handle<LocalVariable>, u32)> {
        let (local, _) = self.array_binding(expr)?;
        let array_ty = self.function.locals[local].ty;
        let TypeInner::Array { base, .. } = self.program.module.types[array_ty].inner else {
            return None;
        };
        match self.program.module.types[base].inner {
            TypeInner::Array { len, .. } => Some((local, len)),
            _ => None,
        }
    }

    /// `m[i][j]` of a local array of arrays: the pointer to the element, each index
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
        let Some((local, _)) = self.rows_binding(rows) else {
            return Ok(None);
        };
        let row_index = self.expr(row_index, block)?;
        let row = self.expr_node(
            Expression::ArrayElement {
                local,
                index: row_index,
            },
            base.span,
        );
        let index = self.expr(index, block)?;
        Ok(Some(self.expr_node(
            Expression::MemberElement { array: row, index },
            base.span,
        )))
    }

    /// `m[i].len()` of a local array of arrays: its row length, a constant.
    pub(super) fn row_len(&self, expr: &Expr) -> Option<u32> {
        match &expr.kind {
            ExprKind::Index { base, .. } => self.rows_binding(base).map(|(_, columns)| columns),
            _ => None,
        }
    }
}
