//! Random programs over the kernel language, free of what Rust leaves undefined or makes
//! panic: integer division by `((d & 7) + 1)`, indices reduced modulo their length, loops
//! with small constant trip counts, atomics whose old values are unused and whose
//! operation is fixed per counter (so their order does not matter), shared arrays written
//! by each thread at its own index in one phase and read in later ones. Integer overflow
//! is allowed: both sides wrap (the oracle crate is built without overflow checks).
//!
//! Features are combined, not tried one by one: closures capturing locals, parameters,
//! slices and structs, passed in any position to generic device functions that call them
//! in loops and early returns; struct methods and operators; arrays passed by value; loops
//! with labels, `break` values and `continue`; `match`, `if` values and blocks.

use crate::ast::*;
use crate::rng::Rng;
use crate::types::Ty;

/// The oracle crate's constant tables: name, length, element type.
const TABLES: [(&str, usize, Ty); 5] = [
    ("TABLE_I32", 8, Ty::I32),
    ("TABLE_U8", 4, Ty::U8),
    ("TABLE_F32", 5, Ty::F32),
    ("TABLE_F64", 3, Ty::F64),
    ("TABLE_BOOL", 3, Ty::Bool),
];

/// What a name in scope is.
#[derive(Clone, Debug, PartialEq)]
enum Kind {
    Scalar(Ty),
    Array(Ty, usize),
    Pt,
    /// A slice of the kernel's (`in_*`) or a shared array of an earlier phase.
    Slice(Ty),
    LocalClosure(Ty, Ty),
    ClosureParam(Ty, Ty),
}

#[derive(Clone, Debug)]
struct Binding {
    name: String,
    kind: Kind,
    mutable: bool,
}

/// Where the code being generated sits, which decides what it may contain.
#[derive(Clone, Default)]
struct Context {
    /// The enclosing device function's result type: `return` is allowed.
    returns: Option<Ty>,
    /// Labels of the enclosing `for` loops (the targets of `break` and `continue`).
    labels: Vec<String>,
    /// Inside a closure's body: no closure calls, no arrays, no mutable locals of a
    /// closure local's environment.
    closure: bool,
    /// Inside the body of a closure bound with `let` (it may outlive assignments).
    let_closure: bool,
    /// A kernel phase (outputs and atomics may be written).
    kernel: bool,
    /// In a closure: the first scope the closure's body opened. A closure passed as
    /// `F: Fn` (or bound with `let` and called) writes only its own locals.
    closure_scope: usize,
    /// Arrays being walked by a `for` loop, which the body must not write.
    frozen: Vec<String>,
}

pub struct Generator {
    rng: Rng,
    next_name: usize,
    scopes: Vec<Vec<Binding>>,
    /// The device functions made so far (a function calls only earlier ones).
    fns: Vec<DeviceFn>,
    ctx: Context,
    /// Statements left to generate in the current program part.
    budget: usize,
}

/// The program of `seed`.
pub fn program(seed: u64) -> Program {
    let mut g = Generator {
        rng: Rng::new(seed),
        next_name: 0,
        scopes: Vec::new(),
        fns: Vec::new(),
        ctx: Context::default(),
        budget: 0,
    };
    let fn_count = g.rng.weighted(&[2, 3, 3, 2]);
    for k in 0..fn_count {
        let f = g.device_fn(k);
        g.fns.push(f);
    }
    let phases = 1 + g.rng.weighted(&[6, 3, 2]);
    let block = 32 * (1 + g.rng.below(3) as u32);
    let grid = 1 + g.rng.below(3) as u32;
    let total = grid * block;
    let active = if phases == 1 {
        total - g.rng.below(5) as u32
    } else {
        total
    };
    let mut bodies = Vec::new();
    for k in 0..phases {
        bodies.push(g.phase(k, phases));
    }
    Program {
        seed,
        grid,
        block,
        active,
        device_fns: std::mem::take(&mut g.fns),
        phases: bodies,
    }
}

impl Generator {
    fn fresh(&mut self, prefix: &str) -> String {
        self.next_name += 1;
        format!("{prefix}{}", self.next_name)
    }

    fn bind(&mut self, name: &str, kind: Kind, mutable: bool) {
        self.scopes.last_mut().expect("a scope").push(Binding {
            name: name.to_owned(),
            kind,
            mutable,
        });
    }

    /// Every binding in scope that the current context may name.
    fn visible(&self) -> Vec<Binding> {
        self.visible_from(0)
    }

    /// The bindings of scope `first` and the scopes inside it that the context may name.
    fn visible_from(&self, first: usize) -> Vec<Binding> {
        let mut out = Vec::new();
        for scope in &self.scopes[first.min(self.scopes.len())..] {
            for b in scope {
                let allowed = match b.kind {
                    _ if !self.ctx.closure => true,
                    Kind::Array(..) | Kind::LocalClosure(..) | Kind::ClosureParam(..) => false,
                    // A closure bound with `let` borrows what it reads until its last
                    // call, so it reads no local that is assigned later.
                    _ if self.ctx.let_closure => !b.mutable,
                    _ => true,
                };
                if allowed {
                    out.push(b.clone());
                }
            }
        }
        out
    }

    fn vars_of(&self, want: impl Fn(&Kind) -> bool) -> Vec<Binding> {
        self.visible()
            .into_iter()
            .filter(|b| want(&b.kind))
            .collect()
    }

    fn scoped<T>(&mut self, f: impl FnOnce(&mut Self) -> T) -> T {
        self.scopes.push(Vec::new());
        let out = f(self);
        self.scopes.pop();
        out
    }

    fn with_context<T>(&mut self, ctx: Context, f: impl FnOnce(&mut Self) -> T) -> T {
        let saved = std::mem::replace(&mut self.ctx, ctx);
        let out = f(self);
        self.ctx = saved;
        out
    }

    // ---- types and literals ----

    fn scalar_ty(&mut self) -> Ty {
        *self.rng.pick(&Ty::ALL)
    }

    fn number_ty(&mut self) -> Ty {
        if self.rng.chance(70) {
            *self.rng.pick(&Ty::INTS)
        } else {
            *self.rng.pick(&Ty::FLOATS)
        }
    }

    pub fn literal(&mut self, ty: Ty) -> Expr {
        let text = match ty {
            Ty::Bool => if self.rng.chance(50) { "true" } else { "false" }.to_owned(),
            Ty::F32 | Ty::F64 => {
                let values = [
                    "0.0", "-0.0", "1.0", "-1.0", "0.5", "2.25", "-3.75", "1.0e3", "1.5e-3", "0.1",
                    "-7.3", "65504.0", "1.0e30", "3.4e38",
                ];
                let v = if self.rng.chance(25) {
                    let k = self.rng.below(2001);
                    let sign = if self.rng.chance(50) { "-" } else { "" };
                    format!("{sign}{}.{}", k / 10, k % 10)
                } else {
                    (*self.rng.pick(&values)).to_owned()
                };
                if v.starts_with('-') {
                    format!("({v}{})", ty.name())
                } else {
                    format!("{v}{}", ty.name())
                }
            }
            _ => {
                let bits = ty.bits();
                let choice = self.rng.below(10);
                if choice == 0 {
                    format!("{}::MAX", ty.name())
                } else if choice == 1 {
                    format!("{}::MIN", ty.name())
                } else {
                    let raw = match choice {
                        2..=5 => self.rng.below(17) as i128 - if ty.is_signed() { 8 } else { 0 },
                        _ => {
                            let v = self.rng.next_u64() as u128 & ((1u128 << bits) - 1);
                            if ty.is_signed() && v >> (bits - 1) == 1 {
                                v as i128 - (1i128 << bits)
                            } else {
                                v as i128
                            }
                        }
                    };
                    if raw < 0 {
                        format!("({raw}{})", ty.name())
                    } else {
                        format!("{raw}{}", ty.name())
                    }
                }
            }
        };
        Expr::Lit { ty, text }
    }

    // ---- expressions ----

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

    fn leaf(&mut self, ty: Ty) -> Expr {
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
    fn index_expr(&mut self, depth: u32) -> Expr {
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

    fn literal_small(&mut self, ty: Ty) -> Expr {
        Expr::Lit {
            ty,
            text: format!("{}{}", self.rng.below(9), ty.name()),
        }
    }

    /// Some value of another type, cast to `ty` (or a value of `ty`).
    fn cast_to(&mut self, ty: Ty, depth: u32) -> Expr {
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

    fn bin(op: BinOp, lhs: Expr, rhs: Expr, ty: Ty) -> Expr {
        Expr::Bin {
            op,
            lhs: Box::new(lhs),
            rhs: Box::new(rhs),
            ty,
        }
    }

    fn method(recv: Expr, name: &'static str, args: Vec<Expr>, ty: Ty) -> Expr {
        Expr::Method {
            recv: Box::new(recv),
            name,
            args,
            ty,
        }
    }

    fn compound(&mut self, ty: Ty, depth: u32) -> Option<Expr> {
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

    fn block_expr(&mut self, ty: Ty, d: u32) -> Expr {
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

    fn bool_expr(&mut self, d: u32) -> Expr {
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

    fn float_expr(&mut self, ty: Ty, d: u32) -> Expr {
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

    fn int_expr(&mut self, ty: Ty, d: u32) -> Expr {
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

    fn pt_expr(&mut self, d: u32) -> PtExpr {
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

    /// A call of an earlier device function returning `ty`, if there is one whose
    /// arguments can be made here.
    fn call(&mut self, ty: Ty, d: u32) -> Option<Expr> {
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
    fn closure_context(&self, let_bound: bool) -> Context {
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
    fn closure_body(&mut self, arg: Ty, ret: Ty, d: u32, let_bound: bool) -> (String, Expr) {
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

    // ---- iterator chains ----

    /// A chain's source and the type and reference depth of its items.
    fn chain_source(&mut self) -> (ChainSource, Ty, u32) {
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
    fn item_closure(&mut self, item: Ty, ret: Ty, d: u32) -> (String, Expr) {
        self.closure_body(item, ret, d.min(2), true)
    }

    /// Adapters after a source, and the type and depth of the items they give.
    fn chain_stages(&mut self, mut item: Ty, mut depth: u32, d: u32) -> (Vec<ChainStage>, Ty, u32) {
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
    fn items_of(
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
    fn chain(&mut self, want: Ty, d: u32) -> Option<Chain> {
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
            (t, 2) if t.is_int() => {
                self.items_of(t, d, &mut stages, &mut item, &mut depth);
                let default = self.literal(t);
                Consumer::Extreme {
                    max: self.rng.chance(50),
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

    // ---- statements ----

    fn stmts(&mut self, depth: u32) -> Vec<Stmt> {
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
    fn nested(&mut self, depth: u32, bind: impl FnOnce(&mut Self)) -> Vec<Stmt> {
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

    fn stmt(&mut self, depth: u32) -> Option<Stmt> {
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
        ]);
        match choice {
            0 => {
                let ty = self.scalar_ty();
                let init = self.expr(ty, d);
                let name = self.fresh("v");
                let mutable = self.rng.chance(50);
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
            _ => None,
        }
    }

    /// The mutable locals this context may write: not an array a loop walks, and in a
    /// closure only the closure's own.
    fn writable(&self) -> Vec<Binding> {
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

    fn output(&mut self, d: u32) -> Stmt {
        let ty = self.scalar_ty();
        let value = self.expr(ty, d);
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

    fn assign(&mut self, d: u32) -> Option<Stmt> {
        let targets: Vec<Binding> = self
            .writable()
            .into_iter()
            .filter(|b| matches!(b.kind, Kind::Scalar(_) | Kind::Array(..) | Kind::Pt))
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
    fn warp_stmt(&mut self, phase: usize) -> Stmt {
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

    // ---- program parts ----

    fn device_fn(&mut self, index: usize) -> DeviceFn {
        let name = format!("d{index}");
        let mut params = Vec::new();
        let count = 1 + self.rng.below(4);
        let mut generics = 0;
        for _ in 0..count {
            let pname = self.fresh("q");
            let p = match self.rng.weighted(&[12, 2, 2, 5]) {
                0 => Param::Scalar(pname, self.scalar_ty()),
                1 => Param::Array(pname, self.scalar_ty(), 2 + self.rng.below(3) as usize),
                2 => Param::Pt(pname),
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

    fn phase(&mut self, k: usize, phases: usize) -> Vec<Stmt> {
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
