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
        // Mostly a function whose `&mut` parameters find mutable locals of their types, so
        // that callers' locals, not only temporaries, are passed by reference.
        let writable: Vec<Kind> = self.writable().into_iter().map(|b| b.kind).collect();
        let with_locals: Vec<DeviceFn> = candidates
            .iter()
            .filter(|f| {
                f.params.iter().all(|p| match p {
                    Param::RefMut(_, t) => writable.contains(&Kind::Scalar(*t)),
                    _ => true,
                }) && f.params.iter().any(|p| matches!(p, Param::RefMut(..)))
            })
            .cloned()
            .collect();
        let f = if !with_locals.is_empty() && self.rng.chance(80) {
            self.rng.pick(&with_locals).clone()
        } else {
            self.rng.pick(&candidates).clone()
        };
        self.call_of(&f, d)
    }

    /// A call of `f` with arguments made here.
    pub(super) fn call_of(&mut self, f: &DeviceFn, d: u32) -> Option<Expr> {
        let ty = f.ret;
        let mut args = Vec::new();
        let mut references = Vec::new();
        for (position, p) in f.params.iter().enumerate() {
            let a = match p {
                Param::Scalar(_, t) => Arg::Value(self.expr(*t, d)),
                // Chosen below, once the other arguments are known.
                Param::RefMut(_, t) => {
                    references.push((position, *t));
                    Arg::RefMut(String::new())
                }
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
        // `&mut x`: a local the context may write that no other argument names (Rust
        // forbids reading it while the call borrows it), each at most once.
        for (position, ty) in references {
            let named: Vec<String> = args.iter().map(crate::render::arg).collect();
            let free: Vec<Binding> = self
                .writable()
                .into_iter()
                .filter(|b| b.kind == Kind::Scalar(ty))
                .filter(|b| !named.iter().any(|text| mentions(text, &b.name)))
                .collect();
            args[position] = if free.is_empty() || self.rng.chance(25) {
                Arg::RefMutTemporary(self.expr(ty, d.min(2)))
            } else {
                Arg::RefMut(self.rng.pick(&free).name.clone())
            };
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

/// Whether the rendered `text` names `name` as a whole word.
fn mentions(text: &str, name: &str) -> bool {
    text.match_indices(name).any(|(at, _)| {
        let word = |c: char| c.is_ascii_alphanumeric() || c == '_';
        let before = text[..at].chars().next_back().is_some_and(word);
        let after = text[at + name.len()..].chars().next().is_some_and(word);
        !before && !after
    })
}
