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
//! with labels, `break` values and `continue`; `match`, `if` values and blocks; functions
//! returning `Option`s (`?`, `return None`) and their results consumed or passed on; a
//! tuple struct built, destructured, matched and assigned.

use crate::ast::*;
use crate::rng::Rng;
use crate::types::Ty;

mod calls;
mod chains;
mod expr;
mod literals;
mod options;
mod parts;
mod scalar_exprs;
mod stmt;
mod tuple_struct;

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
    /// A `Wr` tuple struct.
    Wr,
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
    /// The `Option` functions made so far (each calls only earlier ones).
    option_fns: Vec<OptionFn>,
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
        option_fns: Vec::new(),
        ctx: Context::default(),
        budget: 0,
    };
    for k in 0..g.rng.weighted(&[3, 3, 2]) {
        let f = g.option_fn(k);
        g.option_fns.push(f);
    }
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
        option_fns: std::mem::take(&mut g.option_fns),
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
}
