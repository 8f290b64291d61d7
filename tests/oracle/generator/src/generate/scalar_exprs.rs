//! Expressions of each type: `bool`, floats, integers and the `Pt` struct.

use super::*;

impl Generator {
    pub(super) fn bool_expr(&mut self, d: u32) -> Expr {
        match self.rng.below(10) {
            0..=4 => {
                let t = self.number_ty();
                let ops = [
                    BinOp::Eq,
                    BinOp::Ne,
                    BinOp::Lt,
                    BinOp::Le,
                    BinOp::Gt,
                    BinOp::Ge,
                ];
                let op = *self.rng.pick(&ops);
                let (l, r) = (self.expr(t, d), self.expr(t, d));
                Self::bin(op, l, r, Ty::Bool)
            }
            5 | 6 => {
                let op = if self.rng.chance(50) {
                    BinOp::LogicAnd
                } else {
                    BinOp::LogicOr
                };
                let (l, r) = (self.expr(Ty::Bool, d), self.expr(Ty::Bool, d));
                Self::bin(op, l, r, Ty::Bool)
            }
            7 => {
                let inner = self.expr(Ty::Bool, d);
                Expr::Unary {
                    op: UnOp::Not,
                    expr: Box::new(inner),
                    ty: Ty::Bool,
                }
            }
            8 => {
                let t = *self.rng.pick(&Ty::FLOATS);
                let inner = self.expr(t, d);
                Self::method(inner, "is_nan", vec![], Ty::Bool)
            }
            _ => {
                let ops = [BinOp::And, BinOp::Or, BinOp::Xor, BinOp::Eq, BinOp::Ne];
                let op = *self.rng.pick(&ops);
                let (l, r) = (self.expr(Ty::Bool, d), self.expr(Ty::Bool, d));
                Self::bin(op, l, r, Ty::Bool)
            }
        }
    }

    pub(super) fn float_expr(&mut self, ty: Ty, d: u32) -> Expr {
        match self.rng.below(14) {
            0..=5 => {
                let ops = [BinOp::Add, BinOp::Sub, BinOp::Mul, BinOp::FDiv, BinOp::FRem];
                let op = *self.rng.pick(&ops);
                let (l, r) = (self.expr(ty, d), self.expr(ty, d));
                Self::bin(op, l, r, ty)
            }
            6 => {
                let inner = self.expr(ty, d);
                Expr::Unary {
                    op: UnOp::Neg,
                    expr: Box::new(inner),
                    ty,
                }
            }
            7 | 8 => {
                let names = ["abs", "floor", "ceil", "trunc", "round", "sqrt"];
                let name = *self.rng.pick(&names);
                let inner = self.expr(ty, d);
                Self::method(inner, name, vec![], ty)
            }
            9 | 10 => {
                let names = ["min", "max", "copysign"];
                let name = *self.rng.pick(&names);
                let a = self.expr(ty, d);
                // The sign of a NaN is unspecified in Rust (x86 gives `sqrt(-1.0)` a
                // negative one, GPUs a positive one): `copysign` takes its sign from a
                // literal, never from a value that may be NaN.
                let b = if name == "copysign" {
                    self.literal(ty)
                } else {
                    self.expr(ty, d)
                };
                let call = if self.rng.chance(25) && name != "copysign" {
                    Expr::PathMethod {
                        on: ty,
                        name,
                        args: vec![a, b],
                        ty,
                    }
                } else {
                    Self::method(a, name, vec![b], ty)
                };
                if name == "copysign" {
                    return call;
                }
                // Rust leaves the sign of `max(-0.0, 0.0)` open (x86 gives the first
                // operand, GPUs +0): `+ 0.0` makes every zero +0 and changes nothing else.
                let zero = Expr::Lit {
                    ty,
                    text: format!("0.0{}", ty.name()),
                };
                Self::bin(BinOp::Add, call, zero, ty)
            }
            11 => {
                let (a, b, c) = (self.expr(ty, d), self.expr(ty, d), self.expr(ty, d));
                Self::method(a, "mul_add", vec![b, c], ty)
            }
            _ => self.cast_to(ty, d),
        }
    }

    pub(super) fn int_expr(&mut self, ty: Ty, d: u32) -> Expr {
        match self.rng.below(20) {
            0..=7 => {
                let ops = [
                    BinOp::Add,
                    BinOp::Sub,
                    BinOp::Mul,
                    BinOp::And,
                    BinOp::Or,
                    BinOp::Xor,
                    BinOp::Div,
                    BinOp::Rem,
                ];
                let op = *self.rng.pick(&ops);
                let (l, r) = (self.expr(ty, d), self.expr(ty, d));
                Self::bin(op, l, r, ty)
            }
            8 | 9 => {
                let op = if self.rng.chance(50) {
                    BinOp::Shl
                } else {
                    BinOp::Shr
                };
                let l = self.expr(ty, d);
                let r = if self.rng.chance(50) {
                    self.expr(ty, d.min(1))
                } else {
                    self.expr(Ty::U32, d.min(1))
                };
                Self::bin(op, l, r, ty)
            }
            10 => {
                let op = if ty.is_signed() && self.rng.chance(60) {
                    UnOp::Neg
                } else {
                    UnOp::Not
                };
                let inner = self.expr(ty, d);
                Expr::Unary {
                    op,
                    expr: Box::new(inner),
                    ty,
                }
            }
            11..=13 => {
                let names = [
                    "wrapping_add",
                    "wrapping_sub",
                    "wrapping_mul",
                    "min",
                    "max",
                    "saturating_add",
                    "saturating_sub",
                ];
                let name = *self.rng.pick(&names);
                let (a, b) = (self.expr(ty, d), self.expr(ty, d));
                if self.rng.chance(25) {
                    Expr::PathMethod {
                        on: ty,
                        name,
                        args: vec![a, b],
                        ty,
                    }
                } else {
                    Self::method(a, name, vec![b], ty)
                }
            }
            14 => {
                let names = ["rotate_left", "rotate_right"];
                let name = *self.rng.pick(&names);
                let (a, b) = (self.expr(ty, d), self.expr(Ty::U32, d.min(1)));
                Self::method(a, name, vec![b], ty)
            }
            15 => {
                let names = ["swap_bytes", "reverse_bits"];
                let name = *self.rng.pick(&names);
                let a = self.expr(ty, d);
                Self::method(a, name, vec![], ty)
            }
            16 if ty == Ty::U32 => {
                let names = ["count_ones", "leading_zeros", "trailing_zeros"];
                let name = *self.rng.pick(&names);
                let t = *self.rng.pick(&Ty::INTS);
                let a = self.expr(t, d);
                Self::method(a, name, vec![], Ty::U32)
            }
            17 => {
                let a = self.expr(ty, d);
                let e = self.expr(Ty::U32, d.min(1));
                let seven = Expr::Lit {
                    ty: Ty::U32,
                    text: "7u32".into(),
                };
                Self::method(a, "pow", vec![Self::bin(BinOp::And, e, seven, Ty::U32)], ty)
            }
            18 if ty.is_signed() => {
                let names = ["abs", "signum", "wrapping_neg"];
                let name = *self.rng.pick(&names);
                let a = self.expr(ty, d);
                Self::method(a, name, vec![], ty)
            }
            _ => self.cast_to(ty, d),
        }
    }

    pub(super) fn pt_expr(&mut self, d: u32) -> PtExpr {
        let pts = self.vars_of(|k| *k == Kind::Pt);
        if d == 0 || self.rng.chance(30) {
            if !pts.is_empty() && self.rng.chance(70) {
                return PtExpr::Var(self.rng.pick(&pts).name.clone());
            }
            let (a, b) = (self.expr(Ty::I32, d), self.expr(Ty::F32, d));
            return PtExpr::New(Box::new(a), Box::new(b));
        }
        match self.rng.below(4) {
            0 => {
                let (a, b) = (self.expr(Ty::I32, d - 1), self.expr(Ty::F32, d - 1));
                PtExpr::New(Box::new(a), Box::new(b))
            }
            1 => PtExpr::Add(Box::new(self.pt_expr(d - 1)), Box::new(self.pt_expr(d - 1))),
            2 => PtExpr::Mix(Box::new(self.pt_expr(d - 1)), Box::new(self.pt_expr(d - 1))),
            _ => {
                let k = self.expr(Ty::I32, d - 1);
                PtExpr::Scaled(Box::new(self.pt_expr(d - 1)), Box::new(k))
            }
        }
    }
}
