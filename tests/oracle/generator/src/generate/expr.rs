//! Expressions: the entry point, leaves (names, table and slice reads, literals) and compound forms.

use super::*;

impl Generator {
    /// An expression of type `ty`, at most `depth` levels deep.
    pub fn expr(&mut self, ty: Ty, depth: u32) -> Expr {
        if depth == 0 || self.rng.chance(20) {
            return self.leaf(ty);
        }
        for _ in 0..8 {
            if let Some(e) = self.compound(ty, depth) {
                return e;
            }
        }
        self.leaf(ty)
    }

    pub(super) fn leaf(&mut self, ty: Ty) -> Expr {
        let scalars = self.vars_of(|k| *k == Kind::Scalar(ty));
        let arrays = self.vars_of(|k| matches!(k, Kind::Array(t, _) | Kind::Slice(t) if *t == ty));
        let pts = self.vars_of(|k| *k == Kind::Pt);
        let parts: Vec<PtPart> = [PtPart::A, PtPart::B, PtPart::Norm1, PtPart::Key]
            .into_iter()
            .filter(|p| p.ty() == ty)
            .collect();
        let table = TABLES.iter().find(|t| t.2 == ty).copied();
        let weights = [
            3,
            if scalars.is_empty() { 0 } else { 6 },
            if arrays.is_empty() { 0 } else { 3 },
            if pts.is_empty() || parts.is_empty() {
                0
            } else {
                2
            },
            if table.is_some() { 1 } else { 0 },
        ];
        match self.rng.weighted(&weights) {
            4 => {
                let (name, len, ty) = table.expect("a table of this type");
                let index = self.index_expr(0);
                Expr::Table {
                    name,
                    index: Box::new(index),
                    len,
                    ty,
                }
            }
            1 => {
                let b = self.rng.pick(&scalars).clone();
                Expr::Var { name: b.name, ty }
            }
            2 => {
                let b = self.rng.pick(&arrays).clone();
                let len = match b.kind {
                    Kind::Array(_, len) => Some(len),
                    _ => None,
                };
                let index = self.index_expr(0);
                Expr::Index {
                    base: b.name,
                    index: Box::new(index),
                    len,
                    ty,
                }
            }
            3 => {
                let b = self.rng.pick(&pts).clone();
                let part = *self.rng.pick(&parts);
                Expr::PtScalar {
                    pt: Box::new(PtExpr::Var(b.name)),
                    part,
                }
            }
            _ => self.literal(ty),
        }
    }

    /// A `usize` for an index (reduced modulo the length where it is used).
    pub(super) fn index_expr(&mut self, depth: u32) -> Expr {
        let threads = self.vars_of(|k| *k == Kind::Scalar(Ty::Usize));
        let threads: Vec<Binding> = threads
            .into_iter()
            .filter(|b| b.name == "tid" || b.name == "gid")
            .collect();
        if threads.is_empty() || self.rng.chance(40) {
            return self.cast_to(Ty::Usize, depth);
        }
        let base = Expr::Var {
            name: self.rng.pick(&threads).name.clone(),
            ty: Ty::Usize,
        };
        if self.rng.chance(50) {
            let lit = self.literal_small(Ty::Usize);
            Expr::Bin {
                op: BinOp::Add,
                lhs: Box::new(base),
                rhs: Box::new(lit),
                ty: Ty::Usize,
            }
        } else {
            base
        }
    }

    pub(super) fn literal_small(&mut self, ty: Ty) -> Expr {
        Expr::Lit {
            ty,
            text: format!("{}{}", self.rng.below(9), ty.name()),
        }
    }

    /// Some value of another type, cast to `ty` (or a value of `ty`).
    pub(super) fn cast_to(&mut self, ty: Ty, depth: u32) -> Expr {
        let from = self.number_ty();
        let from = if ty == Ty::Bool || (ty.is_int() && self.rng.chance(10)) {
            Ty::Bool
        } else {
            from
        };
        let inner = self.expr(from, depth);
        if from == ty {
            inner
        } else {
            Expr::Cast {
                expr: Box::new(inner),
                ty,
            }
        }
    }

    pub(super) fn bin(op: BinOp, lhs: Expr, rhs: Expr, ty: Ty) -> Expr {
        Expr::Bin {
            op,
            lhs: Box::new(lhs),
            rhs: Box::new(rhs),
            ty,
        }
    }

    pub(super) fn method(recv: Expr, name: &'static str, args: Vec<Expr>, ty: Ty) -> Expr {
        Expr::Method {
            recv: Box::new(recv),
            name,
            args,
            ty,
        }
    }

    pub(super) fn compound(&mut self, ty: Ty, depth: u32) -> Option<Expr> {
        let d = depth - 1;
        // Shared forms: if, block, match, loop values, calls, closures, casts.
        let shared = self.rng.below(100);
        if shared < 6 {
            let cond = self.expr(Ty::Bool, d.min(2));
            let then = self.expr(ty, d);
            let els = self.expr(ty, d);
            return Some(Expr::If {
                cond: Box::new(cond),
                then: Box::new(then),
                els: Box::new(els),
                ty,
            });
        }
        if shared < 9 {
            return Some(self.block_expr(ty, d));
        }
        if shared < 12 {
            let t = *self.rng.pick(&Ty::INTS);
            let scrutinee = self.expr(t, d.min(2));
            let arms = (0..1 + self.rng.below(4))
                .map(|_| self.expr(ty, d))
                .collect();
            return Some(Expr::Match {
                scrutinee: Box::new(scrutinee),
                arms,
                ty,
            });
        }
        if shared < 14 && !self.ctx.closure {
            let counter = self.fresh("k");
            let limit = 1 + self.rng.below(5) as u32;
            let (cond, value) = self.scoped(|g| {
                g.bind(&counter, Kind::Scalar(Ty::U32), false);
                (g.expr(Ty::Bool, d.min(2)), g.expr(ty, d))
            });
            return Some(Expr::LoopValue {
                counter,
                limit,
                cond: Box::new(cond),
                value: Box::new(value),
                ty,
            });
        }
        if shared < 22 {
            if let Some(call) = self.call(ty, d) {
                return Some(call);
            }
        }
        if shared < 27 && !self.ctx.closure {
            let closures = self.vars_of(
                |k| matches!(k, Kind::LocalClosure(_, r) | Kind::ClosureParam(_, r) if *r == ty),
            );
            if !closures.is_empty() {
                let b = self.rng.pick(&closures).clone();
                let (Kind::LocalClosure(arg, _) | Kind::ClosureParam(arg, _)) = b.kind else {
                    unreachable!()
                };
                let a = self.expr(arg, d);
                return Some(Expr::ClosureCall {
                    name: b.name,
                    arg: Box::new(a),
                    ty,
                });
            }
        }
        if shared < 35 && ty != Ty::Bool {
            return Some(self.cast_to(ty, d));
        }
        if shared < 40 && !self.ctx.closure {
            if let Some(chain) = self.chain(ty, d) {
                return Some(Expr::Chain {
                    chain: Box::new(chain),
                    ty,
                });
            }
        }
        if shared < 42 && ty == Ty::F32 {
            let pts = self.vars_of(|k| *k == Kind::Pt);
            if !pts.is_empty() {
                let a = self.rng.pick(&pts).name.clone();
                let b = self.rng.pick(&pts).name.clone();
                return Some(Expr::PtDot {
                    a,
                    b,
                    by_path: self.rng.chance(40),
                });
            }
        }
        if (42..47).contains(&shared) {
            if let Some(e) = self.opt_expr(ty, d) {
                return Some(e);
            }
        }
        if (47..50).contains(&shared) {
            if let Some(e) = self.wr_value(ty, d) {
                return Some(e);
            }
        }
        if shared < 39 && ty != Ty::Bool {
            let pts = self.vars_of(|k| *k == Kind::Pt);
            let parts: Vec<PtPart> = [PtPart::A, PtPart::B, PtPart::Norm1, PtPart::Key]
                .into_iter()
                .filter(|p| p.ty() == ty)
                .collect();
            if !parts.is_empty() && (!pts.is_empty() || self.rng.chance(50)) {
                let pt = self.pt_expr(d.min(2));
                let part = *self.rng.pick(&parts);
                return Some(Expr::PtScalar {
                    pt: Box::new(pt),
                    part,
                });
            }
        }
        match ty {
            Ty::Bool => Some(self.bool_expr(d)),
            t if t.is_float() => Some(self.float_expr(t, d)),
            t => Some(self.int_expr(t, d)),
        }
    }

    pub(super) fn block_expr(&mut self, ty: Ty, d: u32) -> Expr {
        let ctx = Context {
            labels: Vec::new(),
            returns: None,
            ..self.ctx.clone()
        };
        self.with_context(ctx, |g| {
            g.scoped(|g| {
                let saved = g.budget;
                g.budget = 1 + g.rng.below(3) as usize;
                let stmts = g.stmts(d.min(2));
                g.budget = saved;
                let tail = g.expr(ty, d);
                Expr::Block {
                    stmts,
                    tail: Box::new(tail),
                    ty,
                }
            })
        })
    }
}
