//! Iterator chains: a source, adapters and a consumer, with closures applied to items.

use super::*;

impl Generator {
    /// A chain's source and the type and reference depth of its items.
    pub(super) fn chain_source(&mut self) -> (ChainSource, Ty, u32) {
        let slices = self.vars_of(|k| matches!(k, Kind::Slice(_) | Kind::Array(..)));
        if slices.is_empty() || self.rng.chance(35) {
            let lo = self.rng.below(4) as u32;
            let hi = lo + self.rng.below(7) as u32;
            let rev = self.rng.chance(30);
            return (ChainSource::Range { lo, hi, rev }, Ty::U32, 0);
        }
        let b = self.rng.pick(&slices).clone();
        let (ty, window) = match b.kind {
            Kind::Slice(ty) if self.rng.chance(40) => {
                let start = self.index_expr(1);
                (ty, Some((Box::new(start), 1 + self.rng.below(4) as u32)))
            }
            Kind::Slice(ty) | Kind::Array(ty, _) => (ty, None),
            _ => unreachable!(),
        };
        let rev = self.rng.chance(30);
        (
            ChainSource::Slice {
                name: b.name,
                window,
                rev,
            },
            ty,
            1,
        )
    }

    /// A closure's parameter and body over an item of type `item`, giving `ret`. The
    /// chain holds its closures while it runs (a `for` body, a `fold`'s start), so they
    /// read no local that is assigned, as closures bound with `let`.
    pub(super) fn item_closure(&mut self, item: Ty, ret: Ty, d: u32) -> (String, Expr) {
        self.closure_body(item, ret, d.min(2), true)
    }

    /// Adapters after a source, and the type and depth of the items they give.
    pub(super) fn chain_stages(
        &mut self,
        mut item: Ty,
        mut depth: u32,
        d: u32,
    ) -> (Vec<ChainStage>, Ty, u32) {
        let mut stages = Vec::new();
        for _ in 0..self.rng.below(4) {
            let stage = match self.rng.below(7) {
                0 | 1 => {
                    let to = self.scalar_ty();
                    let (param, body) = self.item_closure(item, to, d);
                    let stage = ChainStage::Map { param, depth, body };
                    item = to;
                    depth = 0;
                    stage
                }
                2 | 3 => {
                    let (param, body) = self.item_closure(item, Ty::Bool, d);
                    ChainStage::Filter {
                        param,
                        depth: depth + 1,
                        body,
                    }
                }
                4 => ChainStage::Take(self.rng.below(5) as u32),
                5 => ChainStage::Skip(self.rng.below(3) as u32),
                _ if depth == 1 => {
                    depth = 0;
                    ChainStage::Copied
                }
                _ => ChainStage::StepBy(1 + self.rng.below(3) as u32),
            };
            stages.push(stage);
        }
        (stages, item, depth)
    }

    /// Makes the items of `want`, by value, for consumers that take the items themselves.
    pub(super) fn items_of(
        &mut self,
        want: Ty,
        d: u32,
        stages: &mut Vec<ChainStage>,
        item: &mut Ty,
        depth: &mut u32,
    ) {
        if *item != want {
            let (param, body) = self.item_closure(*item, want, d);
            stages.push(ChainStage::Map {
                param,
                depth: *depth,
                body,
            });
            *item = want;
            *depth = 0;
        }
        if *depth == 1 {
            stages.push(ChainStage::Copied);
            *depth = 0;
        }
    }

    /// A chain whose consumer gives a `want`.
    pub(super) fn chain(&mut self, want: Ty, d: u32) -> Option<Chain> {
        let (source, item, depth) = self.chain_source();
        let (mut stages, mut item, mut depth) = self.chain_stages(item, depth, d);
        let choice = self.rng.below(6);
        let consumer = match (want, choice) {
            (Ty::Bool, 0..=2) => {
                let (param, body) = self.item_closure(item, Ty::Bool, d);
                if self.rng.chance(50) {
                    Consumer::Any { param, depth, body }
                } else {
                    Consumer::All { param, depth, body }
                }
            }
            (Ty::Usize, 0) => Consumer::Count,
            (Ty::Usize, 1) => {
                let (param, body) = self.item_closure(item, Ty::Bool, d);
                Consumer::Position {
                    param,
                    depth,
                    body,
                    default: self.rng.below(50) as u32,
                }
            }
            (t, 0..=1) if t != Ty::Bool => {
                self.items_of(t, d, &mut stages, &mut item, &mut depth);
                if self.rng.chance(70) {
                    Consumer::Sum(t)
                } else {
                    Consumer::Product(t)
                }
            }
            (t, 2) if t.is_int() && self.rng.chance(60) => {
                self.items_of(t, d, &mut stages, &mut item, &mut depth);
                let default = self.literal(t);
                Consumer::Extreme {
                    max: self.rng.chance(50),
                    default: Box::new(default),
                }
            }
            (t, 2) => {
                self.items_of(t, d, &mut stages, &mut item, &mut depth);
                let default = self.literal(t);
                Consumer::ExtremeBy {
                    max: self.rng.chance(50),
                    reversed: self.rng.chance(30),
                    float: t.is_float(),
                    default: Box::new(default),
                }
            }
            (t, 3) => {
                self.items_of(t, d, &mut stages, &mut item, &mut depth);
                let (param, body) = self.item_closure(item, Ty::Bool, d);
                let default = self.literal(t);
                Consumer::Find {
                    param,
                    depth: depth + 1,
                    body,
                    default: Box::new(default),
                }
            }
            (t, 4) => {
                self.items_of(t, d, &mut stages, &mut item, &mut depth);
                let default = self.literal(t);
                Consumer::Last {
                    default: Box::new(default),
                }
            }
            (t, _) => {
                // Evaluated after the chain's closures are made: nothing that assigns.
                let init = self.leaf(t);
                let acc = self.fresh("y");
                let param = self.fresh("x");
                let ctx = self.closure_context(true);
                let body = self.with_context(ctx, |g| {
                    g.scoped(|g| {
                        g.bind(&acc, Kind::Scalar(t), false);
                        g.bind(&param, Kind::Scalar(item), false);
                        let e = g.expr(t, d.min(2));
                        if t == Ty::Bool {
                            return e;
                        }
                        let op = if t.is_float() { BinOp::Add } else { BinOp::Xor };
                        let acc = Expr::Var {
                            name: acc.clone(),
                            ty: t,
                        };
                        Self::bin(op, acc, e, t)
                    })
                });
                Consumer::Fold {
                    init: Box::new(init),
                    acc,
                    param,
                    depth,
                    body,
                }
            }
        };
        Some(Chain {
            source,
            stages,
            consumer,
        })
    }
}
