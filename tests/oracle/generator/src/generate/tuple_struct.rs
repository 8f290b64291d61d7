//! The `Wr(i32, f32)` tuple struct: built (`Wr(a, b)`), bound, destructured
//! (`let Wr(a, b) = w;`), its fields read and assigned (`w.0`), its method called
//! (`w.total()`) and matched (`match w { Wr(3, y) => .., Wr(k, y) if k > 1 => .., .. }`).

use super::*;

impl Generator {
    /// A `Wr` value: a local in scope, or one built from two expressions.
    pub(super) fn wr_expr(&mut self, d: u32) -> WrExpr {
        let locals = self.vars_of(|k| *k == Kind::Wr);
        if !locals.is_empty() && self.rng.chance(60) {
            return WrExpr::Var(self.rng.pick(&locals).name.clone());
        }
        let a = self.expr(Ty::I32, d.min(2));
        let b = self.expr(Ty::F32, d.min(2));
        WrExpr::New(Box::new(a), Box::new(b))
    }

    /// An expression of type `ty` read from a `Wr`, if `ty` is one a `Wr` gives.
    pub(super) fn wr_value(&mut self, ty: Ty, d: u32) -> Option<Expr> {
        let parts: Vec<WrPart> = [WrPart::First, WrPart::Second, WrPart::Total]
            .into_iter()
            .filter(|p| p.ty() == ty)
            .collect();
        if parts.is_empty() {
            return None;
        }
        if ty == Ty::F32 && self.rng.chance(30) {
            let wr = self.wr_expr(d);
            return Some(Expr::WrMatch {
                wr: Box::new(wr),
                lit: self.rng.below(6) as i32,
                bound: self.rng.below(8) as i32 - 4,
                k: self.fresh("k"),
                y: self.fresh("y"),
            });
        }
        let part = *self.rng.pick(&parts);
        let wr = self.wr_expr(d);
        Some(Expr::Wr {
            wr: Box::new(wr),
            part,
        })
    }

    /// `let [mut] w = Wr(a, b);` or `let Wr(a, b) = w;`.
    pub(super) fn wr_stmt(&mut self, d: u32) -> Stmt {
        let locals = self.vars_of(|k| *k == Kind::Wr);
        if !locals.is_empty() && self.rng.chance(40) {
            let from = self.wr_expr(d);
            let (first, second) = (self.fresh("v"), self.fresh("v"));
            self.bind(&first, Kind::Scalar(Ty::I32), false);
            self.bind(&second, Kind::Scalar(Ty::F32), false);
            return Stmt::SplitWr {
                from,
                first,
                second,
            };
        }
        let init = self.wr_expr(d);
        let name = self.fresh("w");
        let mutable = self.rng.chance(50);
        self.bind(&name, Kind::Wr, mutable);
        Stmt::LetWr {
            name,
            mutable,
            init,
        }
    }
}
