//! The generated programs as a tree: what the generator builds, the renderer prints as Rust
//! source and the shrinker edits. Every name is unique within its program (`v3`, `j7`,
//! `c2`), so a closure's environment never changes between the closure and its call and a
//! name can be searched for as a word.

use crate::types::Ty;

/// The one struct type of every program (`oracle_prelude`'s `Pt`), with a `#[device]` impl.
pub const PT: &str = "Pt";

#[derive(Clone, Debug, PartialEq)]
pub enum Expr {
    /// A literal, rendered with its suffix (`-3i8` in parentheses, `i8::MIN`, `2.5f32`).
    Lit {
        ty: Ty,
        text: String,
    },
    Var {
        name: String,
        ty: Ty,
    },
    Bin {
        op: BinOp,
        lhs: Box<Expr>,
        rhs: Box<Expr>,
        ty: Ty,
    },
    Unary {
        op: UnOp,
        expr: Box<Expr>,
        ty: Ty,
    },
    Cast {
        expr: Box<Expr>,
        ty: Ty,
    },
    /// `recv.name(args)`, a scalar method of the standard library.
    Method {
        recv: Box<Expr>,
        name: &'static str,
        args: Vec<Expr>,
        ty: Ty,
    },
    /// `Ty::name(args)`, the same methods called by path (`f32::max(a, b)`).
    PathMethod {
        on: Ty,
        name: &'static str,
        args: Vec<Expr>,
        ty: Ty,
    },
    /// A call of one of the program's device functions.
    Call {
        func: String,
        args: Vec<Arg>,
        ty: Ty,
    },
    /// `name(arg)`: a closure local or a closure parameter.
    ClosureCall {
        name: String,
        arg: Box<Expr>,
        ty: Ty,
    },
    If {
        cond: Box<Expr>,
        then: Box<Expr>,
        els: Box<Expr>,
        ty: Ty,
    },
    Block {
        stmts: Vec<Stmt>,
        tail: Box<Expr>,
        ty: Ty,
    },
    /// `base[(index) % len]` of a local array (constant `len`) or a slice (`base.len()`).
    Index {
        base: String,
        index: Box<Expr>,
        len: Option<usize>,
        ty: Ty,
    },
    /// A field or method of a `Pt` value: `p.a`, `p.b`, `p.norm1()`, `p.key()`.
    PtScalar {
        pt: Box<PtExpr>,
        part: PtPart,
    },
    /// `match (scrutinee) & 3 { 0 => .., 1 => .., 2 => .., _ => .. }`.
    Match {
        scrutinee: Box<Expr>,
        arms: Vec<Expr>,
        ty: Ty,
    },
    /// `loop { c += 1; if c >= limit || cond { break value; } }` with its counter.
    LoopValue {
        counter: String,
        limit: u32,
        cond: Box<Expr>,
        value: Box<Expr>,
        ty: Ty,
    },
    /// An iterator chain ending in a consumer.
    Chain {
        chain: Box<Chain>,
        ty: Ty,
    },
    /// `a.dot(&b)`, or `Pt::dot(&a, &b)` by path: references to `Pt` locals.
    PtDot {
        a: String,
        b: String,
        by_path: bool,
    },
    /// `TABLE[(index) % len]` of one of the oracle crate's constant tables.
    Table {
        name: &'static str,
        index: Box<Expr>,
        len: usize,
        ty: Ty,
    },
    /// `w.0`, `w.1` or `w.total()` of a `Wr` tuple struct value.
    Wr {
        wr: Box<WrExpr>,
        part: WrPart,
    },
    /// `match w { Wr(lit, y) => y, Wr(k, y) if k > bound => y - k as f32, Wr(k, _) => k
    /// as f32 }` (an `f32`).
    WrMatch {
        wr: Box<WrExpr>,
        lit: i32,
        bound: i32,
        k: String,
        y: String,
    },
    /// A call of an `Option` function, consumed.
    Opt {
        call: OptCall,
        form: OptForm,
        ty: Ty,
    },
}

/// The tuple struct of every program (`oracle_prelude`'s `Wr(i32, f32)`).
pub const WR: &str = "Wr";

/// A `Wr` value.
#[derive(Clone, Debug, PartialEq)]
pub enum WrExpr {
    Var(String),
    /// `Wr(a, b)`.
    New(Box<Expr>, Box<Expr>),
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum WrPart {
    /// `.0`, the `i32`.
    First,
    /// `.1`, the `f32`.
    Second,
    /// `.total()`, a `&self` method (`f32`).
    Total,
}

impl WrPart {
    pub fn ty(self) -> Ty {
        match self {
            WrPart::First => Ty::I32,
            WrPart::Second | WrPart::Total => Ty::F32,
        }
    }
}

/// A call of one of the program's `Option` functions.
#[derive(Clone, Debug, PartialEq)]
pub struct OptCall {
    pub func: String,
    pub arg: Box<Expr>,
    /// The `Option` argument of a function that takes one.
    pub prev: Option<Box<OptArg>>,
}

/// An `Option` passed to a function: `None`, `Some(e)`, or a call's result passed straight
/// on (`o2(x, o1(y))`).
#[derive(Clone, Debug, PartialEq)]
pub enum OptArg {
    /// The function's own `Option` parameter (in its body, before `?`).
    Param(String),
    None,
    Some(Expr),
    Call(OptCall),
}

/// How an `Option` is consumed.
#[derive(Clone, Debug, PartialEq)]
pub enum OptForm {
    /// `.unwrap_or(default)`.
    UnwrapOr(Box<Expr>),
    /// `.map(|param: T| body).unwrap_or(default)`.
    MapUnwrapOr {
        param: String,
        pty: Ty,
        body: Box<Expr>,
        default: Box<Expr>,
    },
    /// `match o { Some(var) => some, None => none }`, or `if let Some(var) = o { some }
    /// else { none }` (`if_let`).
    Match {
        var: String,
        some: Box<Expr>,
        none: Box<Expr>,
        if_let: bool,
    },
    /// `.is_some()` (a `bool`).
    IsSome,
}

/// `fn name(param: T[, prev: Option<U>]) -> Option<U> { if guard { return None; } let
/// value_name = value; [let w = source?;] Some(result) }`.
#[derive(Clone, Debug, PartialEq)]
pub struct OptionFn {
    pub name: String,
    pub param: String,
    pub param_ty: Ty,
    pub inner: Ty,
    /// The name of the `Option<inner>` parameter, if it takes one.
    pub prev: Option<String>,
    pub guard: Expr,
    pub value_name: String,
    pub value: Expr,
    /// `let name = source?;`: the `Option` parameter, or a call of an earlier function.
    pub chained: Option<(String, OptArg)>,
    pub result: Expr,
}

/// An iterator chain: its source, adapters and consumer. Items are values or references
/// (`depth` is how many `&` a closure's pattern takes off: `|&v|`, `|&&v|`).
#[derive(Clone, Debug, PartialEq)]
pub struct Chain {
    pub source: ChainSource,
    pub stages: Vec<ChainStage>,
    pub consumer: Consumer,
}

#[derive(Clone, Debug, PartialEq)]
pub enum ChainSource {
    /// `(lo..hi)` of `u32`, reversed or not.
    Range { lo: u32, hi: u32, rev: bool },
    /// `name.iter()` of a slice parameter or local array, or of its sub-slice
    /// `name[(start % 8)..(start % 8) + len]` (in bounds: slices have at least 32
    /// elements).
    Slice {
        name: String,
        window: Option<(Box<Expr>, u32)>,
        rev: bool,
    },
}

#[derive(Clone, Debug, PartialEq)]
pub enum ChainStage {
    /// `.map(|pat| body)`: items become `body`'s values.
    Map {
        param: String,
        depth: u32,
        body: Expr,
    },
    /// `.filter(|pat| cond)` (the closure takes a reference to the item).
    Filter {
        param: String,
        depth: u32,
        body: Expr,
    },
    Take(u32),
    Skip(u32),
    StepBy(u32),
    /// `.copied()`: references become values.
    Copied,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Consumer {
    Sum(Ty),
    Product(Ty),
    Count,
    /// `.fold(init, |acc, pat| body)`.
    Fold {
        init: Box<Expr>,
        acc: String,
        param: String,
        depth: u32,
        body: Expr,
    },
    Any {
        param: String,
        depth: u32,
        body: Expr,
    },
    All {
        param: String,
        depth: u32,
        body: Expr,
    },
    /// `.min()`/`.max()` of integers, then `.unwrap_or(default)`.
    Extreme {
        max: bool,
        default: Box<Expr>,
    },
    /// `.min_by(..)`/`.max_by(..)` with a comparator giving an `Ordering`, then
    /// `.unwrap_or(default)`: `a.cmp(b)` of integers (`b.cmp(a)` when `reversed`);
    /// `a.partial_cmp(b).unwrap_or(Ordering::Equal)` of floats, which orders a NaN by its
    /// position, never by its sign (which Rust leaves to the platform).
    ExtremeBy {
        max: bool,
        reversed: bool,
        float: bool,
        default: Box<Expr>,
    },
    /// `.position(|pat| cond).unwrap_or(default)`.
    Position {
        param: String,
        depth: u32,
        body: Expr,
        default: u32,
    },
    /// `.find(|pat| cond).unwrap_or(default)`.
    Find {
        param: String,
        depth: u32,
        body: Expr,
        default: Box<Expr>,
    },
    /// `.last().unwrap_or(default)`.
    Last {
        default: Box<Expr>,
    },
}

/// A value of the struct `Pt { a: i32, b: f32 }`.
#[derive(Clone, Debug, PartialEq)]
pub enum PtExpr {
    Var(String),
    New(Box<Expr>, Box<Expr>),
    /// `p + q` through `impl Add for Pt`.
    Add(Box<PtExpr>, Box<PtExpr>),
    /// `p.mix(q)`.
    Mix(Box<PtExpr>, Box<PtExpr>),
    /// `p.scaled(k)`: `self` by value, an `i32` argument.
    Scaled(Box<PtExpr>, Box<Expr>),
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum PtPart {
    A,
    B,
    Norm1,
    Key,
}

impl PtPart {
    pub fn ty(self) -> Ty {
        match self {
            PtPart::A => Ty::I32,
            PtPart::B | PtPart::Norm1 => Ty::F32,
            PtPart::Key => Ty::I64,
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub enum Arg {
    Value(Expr),
    /// `&mut name` of a mutable scalar local no other argument of the call names.
    RefMut(String),
    /// `&mut (value)`: a reference to a temporary, which the callee writes and nobody reads.
    RefMutTemporary(Expr),
    /// An array local, passed by value.
    Array(String),
    Pt(PtExpr),
    /// `|p: pty| body`, written at the call.
    Closure {
        param: String,
        pty: Ty,
        body: Expr,
    },
    /// The name of a closure local.
    ClosureName(String),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BinOp {
    Add,
    Sub,
    Mul,
    /// `/` by `((rhs & 7) + 1)`: never zero, never `-1`.
    Div,
    /// `%` by `((rhs & 7) + 1)`.
    Rem,
    /// Float `/` and `%` as written (infinities and NaN are values).
    FDiv,
    FRem,
    And,
    Or,
    Xor,
    /// `<<` and `>>` by `rhs` as it is: the shift amount is taken modulo the width, as in
    /// release Rust (the oracle crate is built without overflow checks).
    Shl,
    Shr,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    LogicAnd,
    LogicOr,
}

impl BinOp {
    pub fn token(self) -> &'static str {
        match self {
            BinOp::Add => "+",
            BinOp::Sub => "-",
            BinOp::Mul => "*",
            BinOp::Div | BinOp::FDiv => "/",
            BinOp::Rem | BinOp::FRem => "%",
            BinOp::And => "&",
            BinOp::Or => "|",
            BinOp::Xor => "^",
            BinOp::Shl => "<<",
            BinOp::Shr => ">>",
            BinOp::Eq => "==",
            BinOp::Ne => "!=",
            BinOp::Lt => "<",
            BinOp::Le => "<=",
            BinOp::Gt => ">",
            BinOp::Ge => ">=",
            BinOp::LogicAnd => "&&",
            BinOp::LogicOr => "||",
        }
    }

    pub fn is_comparison(self) -> bool {
        matches!(
            self,
            BinOp::Eq | BinOp::Ne | BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge
        )
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UnOp {
    Neg,
    Not,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Place {
    Var(String),
    Index {
        base: String,
        index: Box<Expr>,
        len: usize,
    },
    PtField {
        base: String,
        part: PtPart,
    },
    /// `w.0` or `w.1` of a `Wr` local.
    WrField {
        base: String,
        part: WrPart,
    },
}

#[derive(Clone, Debug, PartialEq)]
pub enum Range {
    /// `lo..hi`
    Up { lo: u32, hi: u32 },
    /// `(lo..hi).rev()`
    Rev { lo: u32, hi: u32 },
    /// `(lo..hi).step_by(step)`
    Step { lo: u32, hi: u32, step: u32 },
    /// `lo..=hi`
    Inclusive { lo: u32, hi: u32 },
}

#[derive(Clone, Debug, PartialEq)]
pub enum Stmt {
    Let {
        name: String,
        ty: Ty,
        mutable: bool,
        init: Expr,
    },
    LetArray {
        name: String,
        ty: Ty,
        mutable: bool,
        elems: Vec<Expr>,
    },
    LetPt {
        name: String,
        mutable: bool,
        init: PtExpr,
    },
    LetClosure {
        name: String,
        param: String,
        pty: Ty,
        body: Expr,
    },
    /// `place = value` or `place op= value`.
    Assign {
        place: Place,
        op: Option<BinOp>,
        value: Expr,
    },
    If {
        cond: Expr,
        then: Vec<Stmt>,
        els: Vec<Stmt>,
    },
    For {
        label: String,
        var: String,
        range: Range,
        body: Vec<Stmt>,
    },
    /// `for &var in array.iter() { body }`.
    ForArray {
        var: String,
        array: String,
        ty: Ty,
        body: Vec<Stmt>,
    },
    /// `let mut counter = 0u32; while counter < limit { body; counter += 1; }`.
    While {
        counter: String,
        limit: u32,
        body: Vec<Stmt>,
    },
    /// `if cond { break 'label; }` / `continue 'label`.
    Jump {
        cond: Expr,
        label: String,
        continue_: bool,
    },
    /// `if cond { return value; }` (device functions only).
    Return { cond: Expr, value: Expr },
    /// `out_X[gid * SLOTS + slot] = value` (cast to the output's type).
    Out { slot: usize, value: Expr },
    /// `array[tid] = value` of a block-shared array.
    Shared { array: String, value: Expr },
    /// `atomic_OP(&mut cnt[counter], value)`, the operation fixed per counter.
    Atomic { counter: usize, value: Expr },
    /// `p.bump(by)`: a `&mut self` method.
    Bump { name: String, by: Expr },
    /// `let [mut] name = from;`: a copy of a local array.
    CopyArray {
        name: String,
        from: String,
        mutable: bool,
    },
    /// `to = from;` of two local arrays of one type and length.
    AssignArray { to: String, from: String },
    /// `let name: ty = warp operation;` at the top level of a phase after the first, where
    /// every thread of the warp runs it: on the GPU the warp instruction, in the host
    /// program the same value read from the shared array every lane wrote before the
    /// barrier.
    Warp { name: String, op: WarpOp },
    /// `let [mut] name = wr;` of the `Wr` tuple struct.
    LetWr {
        name: String,
        mutable: bool,
        init: WrExpr,
    },
    /// `let Wr(first, second) = from;`
    SplitWr {
        from: WrExpr,
        first: String,
        second: String,
    },
    /// `for pat in chain { body }` over a chain without a consumer.
    ForChain {
        param: String,
        depth: u32,
        source: ChainSource,
        stages: Vec<ChainStage>,
        body: Vec<Stmt>,
    },
}

/// A warp operation over the values the warp's lanes wrote to a shared array (`array`,
/// of element type `ty`) in an earlier phase.
#[derive(Clone, Debug, PartialEq)]
pub enum WarpOp {
    /// `shfl_xor_sync(FULL_WARP, array[tid], mask)`
    Xor { array: String, ty: Ty, mask: u32 },
    /// `shfl_down_sync(FULL_WARP, array[tid], delta)`
    Down { array: String, ty: Ty, delta: u32 },
    /// `shfl_up_sync(FULL_WARP, array[tid], delta)`
    Up { array: String, ty: Ty, delta: u32 },
    /// `shfl_idx_sync(FULL_WARP, array[tid], lane)`
    Idx { array: String, ty: Ty, lane: u32 },
    /// `ballot_sync(FULL_WARP, array[tid] > threshold)` (a `u32`)
    Ballot {
        array: String,
        ty: Ty,
        threshold: Expr,
    },
}

impl WarpOp {
    pub fn ty(&self) -> Ty {
        match self {
            WarpOp::Xor { ty, .. }
            | WarpOp::Down { ty, .. }
            | WarpOp::Up { ty, .. }
            | WarpOp::Idx { ty, .. } => *ty,
            WarpOp::Ballot { .. } => Ty::U32,
        }
    }
}

/// A parameter of a generated device function.
#[derive(Clone, Debug, PartialEq)]
pub enum Param {
    Scalar(String, Ty),
    /// `name_ref: &mut ty`: the body reads it into the mutable local `name` first and
    /// writes the local back through the reference before its tail.
    RefMut(String, Ty),
    Array(String, Ty, usize),
    Pt(String),
    /// A closure parameter `name: F` with `F: Fn(arg) -> ret`.
    Closure {
        name: String,
        generic: String,
        arg: Ty,
        ret: Ty,
    },
}

#[derive(Clone, Debug, PartialEq)]
pub struct DeviceFn {
    pub name: String,
    pub params: Vec<Param>,
    pub ret: Ty,
    pub body: Vec<Stmt>,
    pub tail: Expr,
}

/// One generated program: device functions and a kernel body in phases separated by
/// `sync_threads()` (no local crosses a barrier: phases talk through shared arrays).
#[derive(Clone, Debug, PartialEq)]
pub struct Program {
    pub seed: u64,
    pub grid: u32,
    pub block: u32,
    /// Threads that run (`gid < n`); the others return at once (single-phase programs).
    pub active: u32,
    /// Functions returning `Option`s, made first (device functions and phases call them).
    pub option_fns: Vec<OptionFn>,
    pub device_fns: Vec<DeviceFn>,
    pub phases: Vec<Vec<Stmt>>,
}

impl Expr {
    pub fn ty(&self) -> Ty {
        match self {
            Expr::Lit { ty, .. }
            | Expr::Var { ty, .. }
            | Expr::Bin { ty, .. }
            | Expr::Unary { ty, .. }
            | Expr::Cast { ty, .. }
            | Expr::Method { ty, .. }
            | Expr::PathMethod { ty, .. }
            | Expr::Call { ty, .. }
            | Expr::ClosureCall { ty, .. }
            | Expr::If { ty, .. }
            | Expr::Block { ty, .. }
            | Expr::Index { ty, .. }
            | Expr::Match { ty, .. }
            | Expr::LoopValue { ty, .. }
            | Expr::Chain { ty, .. }
            | Expr::Table { ty, .. } => *ty,
            Expr::PtScalar { part, .. } => part.ty(),
            Expr::PtDot { .. } => Ty::F32,
            Expr::Wr { part, .. } => part.ty(),
            Expr::WrMatch { .. } => Ty::F32,
            Expr::Opt { ty, .. } => *ty,
        }
    }
}

/// Output slots per thread of each output slice.
pub const INT_SLOTS: usize = 8;
pub const F32_SLOTS: usize = 4;
pub const F64_SLOTS: usize = 4;
/// Elements of the atomic counter slice `cnt` (u32).
pub const COUNTERS: usize = 6;
/// The operation of counter `k`: one per counter, so the result is independent of order.
pub const COUNTER_OPS: [&str; COUNTERS] = [
    "atomic_add",
    "atomic_or",
    "atomic_xor",
    "atomic_and",
    "atomic_min",
    "atomic_max",
];
