//! Program parts: device functions and kernel phases.

use super::*;

impl Generator {
    pub(super) fn device_fn(&mut self, index: usize) -> DeviceFn {
        let name = format!("d{index}");
        let mut params = Vec::new();
        let count = 1 + self.rng.below(4);
        let mut generics = 0;
        for _ in 0..count {
            let pname = self.fresh("q");
            let p = match self.rng.weighted(&[12, 2, 2, 5, 3]) {
                0 => Param::Scalar(pname, self.scalar_ty()),
                1 => Param::Array(pname, self.scalar_ty(), 2 + self.rng.below(3) as usize),
                2 => Param::Pt(pname),
                // Not of `bool`: kernels take no `&mut bool`.
                4 => Param::RefMut(pname, self.number_ty()),
                _ => {
                    generics += 1;
                    Param::Closure {
                        name: pname,
                        generic: format!("F{generics}"),
                        arg: self.scalar_ty(),
                        ret: self.scalar_ty(),
                    }
                }
            };
            params.push(p);
        }
        let ret = self.scalar_ty();
        let ctx = Context {
            returns: Some(ret),
            ..Context::default()
        };
        let (body, tail) = self.with_context(ctx, |g| {
            g.scoped(|g| {
                for p in &params {
                    match p {
                        Param::Scalar(n, t) => g.bind(n, Kind::Scalar(*t), false),
                        Param::RefMut(n, t) => g.bind(n, Kind::Scalar(*t), true),
                        Param::Array(n, t, len) => g.bind(n, Kind::Array(*t, *len), false),
                        Param::Pt(n) => g.bind(n, Kind::Pt, false),
                        Param::Closure { name, arg, ret, .. } => {
                            g.bind(name, Kind::ClosureParam(*arg, *ret), false)
                        }
                    }
                }
                g.budget = 2 + g.rng.below(6) as usize;
                let body = g.stmts(3);
                let tail = g.expr(ret, 3);
                (body, tail)
            })
        });
        DeviceFn {
            name,
            params,
            ret,
            body,
            tail,
        }
    }

    pub(super) fn phase(&mut self, k: usize, phases: usize) -> Vec<Stmt> {
        let ctx = Context {
            kernel: true,
            ..Context::default()
        };
        self.with_context(ctx, |g| {
            g.scoped(|g| {
                for (name, ty) in [
                    ("s_i32", Ty::I32),
                    ("s_u32", Ty::U32),
                    ("s_i64", Ty::I64),
                    ("s_u64", Ty::U64),
                    ("s_f32", Ty::F32),
                    ("s_f64", Ty::F64),
                    ("s_b", Ty::Bool),
                    ("tid", Ty::Usize),
                    ("gid", Ty::Usize),
                ] {
                    g.bind(name, Kind::Scalar(ty), false);
                }
                for (name, ty) in [
                    ("in_i8", Ty::I8),
                    ("in_u16", Ty::U16),
                    ("in_i32", Ty::I32),
                    ("in_u32", Ty::U32),
                    ("in_i64", Ty::I64),
                    ("in_u64", Ty::U64),
                    ("in_f32", Ty::F32),
                    ("in_f64", Ty::F64),
                ] {
                    g.bind(name, Kind::Slice(ty), false);
                }
                // The arrays the earlier phases wrote (pairs 0..k).
                for (name, ty) in crate::render::shared_arrays(k + 1) {
                    g.bind(&name, Kind::Slice(ty), false);
                }
                g.budget = 4 + g.rng.below(10) as usize;
                // Warp operations first, where every lane runs them (no branch yet).
                let mut body = Vec::new();
                if k > 0 {
                    for _ in 0..g.rng.below(3) {
                        body.push(g.warp_stmt(k));
                    }
                }
                body.extend(g.stmts(4));
                for _ in 0..2 {
                    body.push(g.output(3));
                }
                if k + 1 < phases {
                    for (array, ty) in crate::render::shared_arrays(k + 2).into_iter().skip(2 * k) {
                        let value = g.expr(ty, 3);
                        body.push(Stmt::Shared { array, value });
                    }
                }
                body
            })
        })
    }
}
