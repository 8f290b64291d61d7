//! Calls of earlier device functions and the closures passed to them.

use super::*;

impl Generator {
    /// A call of an earlier device function returning `ty`, if there is one whose
    /// arguments can be made here.
    pub(super) fn call(&mut self, ty: Ty, d: u32) -> Option<Expr> {
        let candidates: Vec<DeviceFn> = self.fns.iter().filter(|f| f.ret == ty).cloned().collect();
        if candidates.is_empty() {
            return None;
        }
        let f = self.rng.pick(&candidates).clone();
        let mut args = Vec::new();
        for p in &f.params {
            let a = match p {
                Param::Scalar(_, t) => Arg::Value(self.expr(*t, d)),
                Param::Pt(_) => Arg::Pt(self.pt_expr(d.min(2))),
                Param::Array(_, t, len) => {
                    let arrays = self.vars_of(|k| *k == Kind::Array(*t, *len));
                    if arrays.is_empty() {
                        return None;
                    }
                    Arg::Array(self.rng.pick(&arrays).name.clone())
                }
                // A closure's body makes no closures of its own.
                Param::Closure { .. } if self.ctx.closure => return None,
                Param::Closure { arg, ret, .. } => {
                    let named = self.vars_of(|k| *k == Kind::LocalClosure(*arg, *ret));
                    if !named.is_empty() && self.rng.chance(30) {
                        Arg::ClosureName(self.rng.pick(&named).name.clone())
                    } else {
                        let (param, body) = self.closure_body(*arg, *ret, d, false);
                        Arg::Closure {
                            param,
                            pty: *arg,
                            body,
                        }
                    }
                }
            };
            args.push(a);
        }
        Some(Expr::Call {
            func: f.name.clone(),
            args,
            ty,
        })
    }

    /// The context of a closure's body made here (bound with `let`, or held while it
    /// runs, when `let_bound`).
    pub(super) fn closure_context(&self, let_bound: bool) -> Context {
        Context {
            returns: None,
            labels: Vec::new(),
            closure: true,
            let_closure: let_bound,
            kernel: false,
            frozen: Vec::new(),
            closure_scope: self.scopes.len(),
        }
    }

    /// A closure's parameter name and body, in a closure's context.
    pub(super) fn closure_body(
        &mut self,
        arg: Ty,
        ret: Ty,
        d: u32,
        let_bound: bool,
    ) -> (String, Expr) {
        let param = self.fresh("x");
        let ctx = self.closure_context(let_bound);
        let body = self.with_context(ctx, |g| {
            g.scoped(|g| {
                g.bind(&param, Kind::Scalar(arg), false);
                // The parameter is used, mostly: a closure that ignores it tests less.
                let e = g.expr(ret, d.max(1));
                if g.rng.chance(60) && arg == ret && ret != Ty::Bool {
                    let op = if ret.is_float() {
                        BinOp::Mul
                    } else {
                        BinOp::Xor
                    };
                    Self::bin(
                        op,
                        Expr::Var {
                            name: param.clone(),
                            ty: arg,
                        },
                        e,
                        ret,
                    )
                } else {
                    e
                }
            })
        });
        (param, body)
    }
}
