//! `Option`s: functions returning one (an early `return None`, `?` on an `Option`
//! parameter or on a call of an earlier such function), and their results consumed with
//! `unwrap_or`, `map`, `match`, `if let` and `is_some`, or passed straight on to a
//! function taking an `Option` (`o2(x, o1(y))`).

use super::*;

impl Generator {
    /// The `index`th function returning an `Option`; it may call the earlier ones.
    pub(super) fn option_fn(&mut self, index: usize) -> OptionFn {
        let name = format!("o{index}");
        let param = self.fresh("q");
        let param_ty = self.scalar_ty();
        let inner = self.scalar_ty();
        let prev = self.rng.chance(40).then(|| self.fresh("r"));
        self.with_context(Context::default(), |g| {
            g.scoped(|g| {
                g.bind(&param, Kind::Scalar(param_ty), false);
                let guard = g.expr(Ty::Bool, 2);
                let value = g.expr(inner, 3);
                let value_name = g.fresh("v");
                g.bind(&value_name, Kind::Scalar(inner), false);
                let chained = match &prev {
                    Some(prev) if g.rng.chance(70) => Some(OptArg::Param(prev.clone())),
                    _ => g.opt_call(inner, 2).map(OptArg::Call),
                };
                let chained = chained.map(|source| {
                    let w = g.fresh("w");
                    g.bind(&w, Kind::Scalar(inner), false);
                    (w, source)
                });
                let result = g.expr(inner, 3);
                OptionFn {
                    name,
                    param: param.clone(),
                    param_ty,
                    inner,
                    prev: prev.clone(),
                    guard,
                    value_name,
                    value,
                    chained,
                    result,
                }
            })
        })
    }

    /// A call of an `Option` function made so far giving `Option<inner>`, if there is one.
    pub(super) fn opt_call(&mut self, inner: Ty, d: u32) -> Option<OptCall> {
        let candidates: Vec<OptionFn> = self
            .option_fns
            .iter()
            .filter(|f| f.inner == inner)
            .cloned()
            .collect();
        if candidates.is_empty() {
            return None;
        }
        let f = self.rng.pick(&candidates).clone();
        let arg = self.expr(f.param_ty, d.min(2));
        let prev = f.prev.as_ref().map(|_| {
            Box::new(match self.rng.below(3) {
                0 => OptArg::None,
                1 if d > 0 => match self.opt_call(inner, d - 1) {
                    Some(call) => OptArg::Call(call),
                    None => OptArg::Some(self.expr(inner, d.min(1))),
                },
                _ => OptArg::Some(self.expr(inner, d.min(2))),
            })
        });
        Some(OptCall {
            func: f.name,
            arg: Box::new(arg),
            prev,
        })
    }

    /// An `Option` consumed into a value of type `ty`.
    pub(super) fn opt_expr(&mut self, ty: Ty, d: u32) -> Option<Expr> {
        let inners: Vec<Ty> = self.option_fns.iter().map(|f| f.inner).collect();
        if inners.is_empty() {
            return None;
        }
        let form = self.rng.below(5);
        let inner = match form {
            // `unwrap_or` keeps the type.
            0 if inners.contains(&ty) => ty,
            0 => return None,
            4 if ty != Ty::Bool => return None,
            _ => *self.rng.pick(&inners),
        };
        let call = self.opt_call(inner, d)?;
        let form = match form {
            0 => OptForm::UnwrapOr(Box::new(self.expr(ty, d))),
            // A closure inside a closure's body is not generated.
            1 if self.ctx.closure => return None,
            1 => {
                let (param, body) = self.closure_body(inner, ty, d.min(2), false);
                OptForm::MapUnwrapOr {
                    param,
                    pty: inner,
                    body: Box::new(body),
                    default: Box::new(self.expr(ty, d)),
                }
            }
            2 | 3 => {
                let var = self.fresh("s");
                let some = self.scoped(|g| {
                    g.bind(&var, Kind::Scalar(inner), false);
                    g.expr(ty, d)
                });
                OptForm::Match {
                    var,
                    some: Box::new(some),
                    none: Box::new(self.expr(ty, d)),
                    if_let: form == 3,
                }
            }
            _ => OptForm::IsSome,
        };
        Some(Expr::Opt { call, form, ty })
    }
}
