//! Statements: `let`, assignments, outputs, control flow, loops and warp operations.

use super::*;

impl Generator {
    pub(super) fn stmts(&mut self, depth: u32) -> Vec<Stmt> {
        let mut out = Vec::new();
        while self.budget > 0 {
            self.budget -= 1;
            if let Some(s) = self.stmt(depth) {
                out.push(s);
            }
        }
        out
    }

    /// A nested block's statements, with a share of the budget.
    pub(super) fn nested(&mut self, depth: u32, bind: impl FnOnce(&mut Self)) -> Vec<Stmt> {
        let share = (self.budget / 2).min(4);
        self.budget -= share;
        self.scoped(|g| {
            bind(g);
            let saved = g.budget;
            g.budget = share;
            let body = g.stmts(depth);
            g.budget = saved;
            body
        })
    }

    pub(super) fn stmt(&mut self, depth: u32) -> Option<Stmt> {
        let d = depth;
        let choice = self.rng.weighted(&[
            14, // let scalar
            3,  // let array
            3,  // let Pt
            3,  // let closure
            10, // assign
            5,  // if
            5,  // for
            2,  // for over an array
            2,  // while
            3,  // jump
            3,  // return
            8,  // output
            2,  // atomic
            2,  // bump
            2,  // array copy
            2,  // array assignment
            3,  // for over a chain
            3,  // let Wr, let Wr(a, b)
            3,  // a call passing fresh locals by `&mut`
        ]);
        match choice {
            18 => self.reference_call(d),
            0 => {
                let mutable = self.rng.chance(50);
                // A mutable local is often of a type a device function takes `&mut`, so
                // that calls pass locals by reference, not only temporaries.
                let referenced: Vec<Ty> = self
                    .fns
                    .iter()
                    .flat_map(|f| f.params.iter())
                    .filter_map(|p| match p {
                        Param::RefMut(_, t) => Some(*t),
                        _ => None,
                    })
                    .collect();
                let ty = if mutable && !referenced.is_empty() && self.rng.chance(50) {
                    *self.rng.pick(&referenced)
                } else {
                    self.scalar_ty()
                };
                let init = self.expr(ty, d);
                let name = self.fresh("v");
                self.bind(&name, Kind::Scalar(ty), mutable);
                Some(Stmt::Let {
                    name,
                    ty,
                    mutable,
                    init,
                })
            }
            1 => {
                let ty = self.scalar_ty();
                let len = 2 + self.rng.below(4) as usize;
                let elems = (0..len).map(|_| self.expr(ty, d.min(2))).collect();
                let name = self.fresh("a");
                let mutable = self.rng.chance(60);
                self.bind(&name, Kind::Array(ty, len), mutable);
                Some(Stmt::LetArray {
                    name,
                    ty,
                    mutable,
                    elems,
                })
            }
            2 => {
                let init = self.pt_expr(d.min(2));
                let name = self.fresh("p");
                let mutable = self.rng.chance(50);
                self.bind(&name, Kind::Pt, mutable);
                Some(Stmt::LetPt {
                    name,
                    mutable,
                    init,
                })
            }
            3 if !self.ctx.closure => {
                let (pty, ret) = (self.scalar_ty(), self.scalar_ty());
                let (param, body) = self.closure_body(pty, ret, d.min(2), true);
                let name = self.fresh("c");
                self.bind(&name, Kind::LocalClosure(pty, ret), false);
                Some(Stmt::LetClosure {
                    name,
                    param,
                    pty,
                    body,
                })
            }
            4 => self.assign(d),
            5 => {
                let cond = self.expr(Ty::Bool, d.min(2));
                let then = self.nested(d, |_| {});
                let els = if self.rng.chance(50) {
                    self.nested(d, |_| {})
                } else {
                    Vec::new()
                };
                Some(Stmt::If { cond, then, els })
            }
            6 => {
                let (var, label) = (self.fresh("j"), self.fresh("l"));
                let lo = self.rng.below(3) as u32;
                let hi = lo + self.rng.below(5) as u32;
                let range = match self.rng.below(4) {
                    0 => Range::Rev { lo, hi },
                    1 => Range::Step {
                        lo,
                        hi: hi + 3,
                        step: 1 + self.rng.below(3) as u32,
                    },
                    2 => Range::Inclusive { lo, hi },
                    _ => Range::Up { lo, hi },
                };
                self.ctx.labels.push(label.clone());
                let v = var.clone();
                let body = self.nested(d, |g| g.bind(&v, Kind::Scalar(Ty::U32), false));
                self.ctx.labels.pop();
                Some(Stmt::For {
                    label,
                    var,
                    range,
                    body,
                })
            }
            7 => {
                let arrays = self.vars_of(|k| matches!(k, Kind::Array(..)));
                if arrays.is_empty() {
                    return None;
                }
                let b = self.rng.pick(&arrays).clone();
                let Kind::Array(ty, _) = b.kind else {
                    unreachable!()
                };
                let var = self.fresh("e");
                self.ctx.frozen.push(b.name.clone());
                let v = var.clone();
                let body = self.nested(d, |g| g.bind(&v, Kind::Scalar(ty), false));
                self.ctx.frozen.pop();
                Some(Stmt::ForArray {
                    var,
                    array: b.name,
                    ty,
                    body,
                })
            }
            8 => {
                let counter = self.fresh("w");
                let limit = 1 + self.rng.below(4) as u32;
                let c = counter.clone();
                // `continue` would skip the counter's step: no jumps to enclosing loops
                // from here either, which keeps the loop's shape simple.
                let saved = std::mem::take(&mut self.ctx.labels);
                let body = self.nested(d, |g| g.bind(&c, Kind::Scalar(Ty::U32), false));
                self.ctx.labels = saved;
                Some(Stmt::While {
                    counter,
                    limit,
                    body,
                })
            }
            9 => {
                if self.ctx.labels.is_empty() {
                    return None;
                }
                let label = self.rng.pick(&self.ctx.labels.clone()).clone();
                let cond = self.expr(Ty::Bool, d.min(2));
                Some(Stmt::Jump {
                    cond,
                    label,
                    continue_: self.rng.chance(50),
                })
            }
            10 => {
                let ty = self.ctx.returns?;
                let cond = self.expr(Ty::Bool, d.min(2));
                let value = self.expr(ty, d);
                Some(Stmt::Return { cond, value })
            }
            11 if self.ctx.kernel => Some(self.output(d)),
            12 if self.ctx.kernel => {
                let counter = self.rng.below(COUNTERS as u64) as usize;
                // The value borrows nothing the atomic borrows: no outputs or atomics in it.
                let ctx = Context {
                    kernel: false,
                    ..self.ctx.clone()
                };
                let value = self.with_context(ctx, |g| g.expr(Ty::U32, d.min(2)));
                Some(Stmt::Atomic { counter, value })
            }
            13 => {
                let pts: Vec<Binding> = self
                    .writable()
                    .into_iter()
                    .filter(|b| b.kind == Kind::Pt)
                    .collect();
                if pts.is_empty() {
                    return None;
                }
                let name = self.rng.pick(&pts).name.clone();
                // Evaluated while the receiver is reserved for `&mut self`: it may read
                // the receiver, never write it.
                let by = self.leaf(Ty::I32);
                Some(Stmt::Bump { name, by })
            }
            14 if !self.ctx.closure => {
                let arrays = self.vars_of(|k| matches!(k, Kind::Array(..)));
                if arrays.is_empty() {
                    return None;
                }
                let from = self.rng.pick(&arrays).clone();
                let name = self.fresh("a");
                let mutable = self.rng.chance(50);
                self.bind(&name, from.kind.clone(), mutable);
                Some(Stmt::CopyArray {
                    name,
                    from: from.name,
                    mutable,
                })
            }
            15 => {
                let targets: Vec<Binding> = self
                    .writable()
                    .into_iter()
                    .filter(|b| matches!(b.kind, Kind::Array(..)))
                    .collect();
                if targets.is_empty() {
                    return None;
                }
                let to = self.rng.pick(&targets).clone();
                let from: Vec<Binding> = self
                    .vars_of(|k| *k == to.kind)
                    .into_iter()
                    .filter(|b| b.name != to.name)
                    .collect();
                if from.is_empty() {
                    return None;
                }
                let from = self.rng.pick(&from).name.clone();
                Some(Stmt::AssignArray { to: to.name, from })
            }
            16 if !self.ctx.closure => {
                let (source, item, depth) = self.chain_source();
                let (stages, item, depth) = self.chain_stages(item, depth, d);
                let param = self.fresh("e");
                let walked = match &source {
                    ChainSource::Slice { name, .. } => Some(name.clone()),
                    ChainSource::Range { .. } => None,
                };
                self.ctx.frozen.extend(walked.clone());
                let p = param.clone();
                // Jumps target labelled loops of the program's own; this loop has none.
                let saved = std::mem::take(&mut self.ctx.labels);
                let body = self.nested(d, |g| g.bind(&p, Kind::Scalar(item), false));
                self.ctx.labels = saved;
                if walked.is_some() {
                    self.ctx.frozen.pop();
                }
                Some(Stmt::ForChain {
                    param,
                    depth,
                    source,
                    stages,
                    body,
                })
            }
            17 => Some(self.wr_stmt(d)),
            _ => None,
        }
    }

    /// The mutable locals this context may write: not an array a loop walks, and in a
    /// closure only the closure's own.
    pub(super) fn writable(&self) -> Vec<Binding> {
        let first = if self.ctx.closure {
            self.ctx.closure_scope
        } else {
            0
        };
        self.visible_from(first)
            .into_iter()
            .filter(|b| b.mutable && !self.ctx.frozen.contains(&b.name))
            .collect()
    }

    /// `if true { let mut v = ..; out = f(.., &mut v, ..); out = v; }`: a device function
    /// with `&mut` parameters called on fresh locals, which are read back after the call.
    fn reference_call(&mut self, d: u32) -> Option<Stmt> {
        // Outputs are the kernel's.
        if self.ctx.closure || !self.ctx.kernel {
            return None;
        }
        let fns: Vec<DeviceFn> = self
            .fns
            .iter()
            .filter(|f| f.params.iter().any(|p| matches!(p, Param::RefMut(..))))
            .cloned()
            .collect();
        if fns.is_empty() {
            return None;
        }
        let f = self.rng.pick(&fns).clone();
        let then = self.scoped(|g| {
            let mut body = Vec::new();
            let mut locals = Vec::new();
            for p in &f.params {
                if let Param::RefMut(_, ty) = p {
                    let init = g.expr(*ty, d.min(2));
                    let name = g.fresh("v");
                    g.bind(&name, Kind::Scalar(*ty), true);
                    body.push(Stmt::Let {
                        name: name.clone(),
                        ty: *ty,
                        mutable: true,
                        init,
                    });
                    locals.push((name, *ty));
                }
            }
            if let Some(call) = g.call_of(&f, d.min(2)) {
                body.push(g.output_of(f.ret, call));
            }
            for (name, ty) in locals {
                body.push(g.output_of(ty, Expr::Var { name, ty }));
            }
            body
        });
        Some(Stmt::If {
            cond: Expr::Lit {
                ty: Ty::Bool,
                text: "true".into(),
            },
            then,
            els: Vec::new(),
        })
    }

    /// `value` (of type `ty`) written to an output slot of its type.
    fn output_of(&mut self, ty: Ty, value: Expr) -> Stmt {
        let slots = match ty {
            Ty::F32 => F32_SLOTS,
            Ty::F64 => F64_SLOTS,
            _ => INT_SLOTS,
        };
        Stmt::Out {
            slot: self.rng.below(slots as u64) as usize,
            value,
        }
    }

    pub(super) fn output(&mut self, d: u32) -> Stmt {
        let ty = self.scalar_ty();
        let value = self.expr(ty, d);
        self.output_of(ty, value)
    }

    pub(super) fn assign(&mut self, d: u32) -> Option<Stmt> {
        let targets: Vec<Binding> = self
            .writable()
            .into_iter()
            .filter(|b| {
                matches!(
                    b.kind,
                    Kind::Scalar(_) | Kind::Array(..) | Kind::Pt | Kind::Wr
                )
            })
            .collect();
        if targets.is_empty() {
            return None;
        }
        let b = self.rng.pick(&targets).clone();
        let (place, ty) = match b.kind {
            Kind::Scalar(ty) => (Place::Var(b.name), ty),
            Kind::Array(ty, len) => {
                let index = self.index_expr(1);
                (
                    Place::Index {
                        base: b.name,
                        index: Box::new(index),
                        len,
                    },
                    ty,
                )
            }
            Kind::Wr => {
                let part = if self.rng.chance(50) {
                    WrPart::First
                } else {
                    WrPart::Second
                };
                (Place::WrField { base: b.name, part }, part.ty())
            }
            _ => {
                let part = if self.rng.chance(50) {
                    PtPart::A
                } else {
                    PtPart::B
                };
                (Place::PtField { base: b.name, part }, part.ty())
            }
        };
        let op = if self.rng.chance(40) && ty != Ty::Bool {
            let ops: &[BinOp] = if ty.is_float() {
                &[BinOp::Add, BinOp::Sub, BinOp::Mul]
            } else {
                &[
                    BinOp::Add,
                    BinOp::Sub,
                    BinOp::Mul,
                    BinOp::And,
                    BinOp::Or,
                    BinOp::Xor,
                    BinOp::Shl,
                    BinOp::Shr,
                ]
            };
            Some(*self.rng.pick(ops))
        } else {
            None
        };
        let value = match op {
            Some(BinOp::Shl | BinOp::Shr) => self.expr(Ty::U32, d.min(1)),
            _ => self.expr(ty, d),
        };
        Some(Stmt::Assign { place, op, value })
    }

    /// `let v = warp operation;` over a shared array an earlier phase wrote.
    pub(super) fn warp_stmt(&mut self, phase: usize) -> Stmt {
        let arrays = crate::render::shared_arrays(phase + 1);
        let (array, ty) = self.rng.pick(&arrays).clone();
        let op = match self.rng.below(5) {
            0 => WarpOp::Xor {
                array,
                ty,
                mask: 1 + self.rng.below(31) as u32,
            },
            1 => WarpOp::Down {
                array,
                ty,
                delta: self.rng.below(32) as u32,
            },
            2 => WarpOp::Up {
                array,
                ty,
                delta: self.rng.below(32) as u32,
            },
            3 => WarpOp::Idx {
                array,
                ty,
                lane: self.rng.below(32) as u32,
            },
            _ => {
                let threshold = self.literal(ty);
                WarpOp::Ballot {
                    array,
                    ty,
                    threshold,
                }
            }
        };
        let name = self.fresh("v");
        self.bind(&name, Kind::Scalar(op.ty()), false);
        Stmt::Warp { name, op }
    }
}
