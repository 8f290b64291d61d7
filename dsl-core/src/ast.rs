//! The kernel body as the `#[kernel]` macro captured it.
//!
//! This is plain data that mirrors the supported subset of Rust syntax, with the user's
//! spans. The macro checks the subset and serialises a [`FunctionSource`] into the program;
//! at run time [`crate::lower`] infers types and lowers it to the IR. Nothing here is typed
//! beyond what the user wrote: literals keep their suffix (if any) and `let` its annotation.

use serde::{Deserialize, Serialize};

use crate::intrinsics::Intrinsic;
use crate::math::MathFunction;
use crate::{Scalar, Span};

/// Version of this captured form. Part of every cache key, so a change of the format
/// misses the cache instead of misreading it.
pub const FORMAT_VERSION: u32 = 15;

/// A captured `#[kernel]` or `#[device]` function.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FunctionSource {
    /// The Rust name of the function.
    pub name: String,
    /// Type and const generic parameters, resolved per specialisation.
    pub generics: Vec<GenericParam>,
    /// Parameters in declaration order.
    pub params: Vec<Param>,
    /// The return type of a device function; `None` for `()` (always for kernels).
    pub result: Option<ValueType>,
    /// The body.
    pub body: Block,
    /// Where the function starts.
    pub span: Span,
    /// For an `#[extern_device]` function: the symbol it binds to in its device library
    /// (the body is then empty). Absent from the text of other functions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub external: Option<String>,
    /// A kernel's `#[kernel(max_threads = N)]`: the most threads per block it is launched
    /// with, which lets the register allocator give each thread up to `65536 / N`
    /// registers (CUDA C++'s `__launch_bounds__(N)`). Absent from other functions' text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_threads: Option<u32>,
    /// For a function of a generic impl block (`impl<T> Pair<T>`): the block's type, as
    /// lowering names it (`Pair<T>`), whose arguments a call through an instance binds
    /// (`Pair::<f32>::new`, `p.sum()` of a `Pair<f32>`). Absent from other functions' text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub self_type: Option<String>,
    /// The values of the Rust constants the body names (`TILE`, `u32::MAX`, its own `const`
    /// items), as rustc evaluated them: not in the captured text, which the macro wrote
    /// before rustc knew them, but attached from [`crate::CapturedFunction::constants`]
    /// when the text is read. The body names each as an [`ExprKind::Var`].
    #[serde(skip)]
    pub constants: Vec<crate::constant::ConstantValue>,
    /// The file that defines the function (`file!()`), attached like `constants` when the
    /// text is read: spans are lines of this file.
    #[serde(skip)]
    pub file: String,
}

impl FunctionSource {
    /// Serialises to the compact text the macro embeds in the program.
    pub fn to_json(&self) -> String {
        // Serialising plain data with string keys cannot fail.
        serde_json::to_string(self).unwrap_or_default()
    }

    /// Reads the text produced by [`FunctionSource::to_json`].
    pub fn from_json(text: &str) -> Result<Self, serde_json::Error> {
        serde_json::from_str(text)
    }
}

/// A generic parameter: `T: Float` or `const N: usize`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GenericParam {
    pub name: String,
    pub kind: GenericKind,
    pub span: Span,
}

/// What a generic parameter stands for.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum GenericKind {
    /// A scalar type, with the names of its trait bounds (`Float`, `Int`, `Scalar`).
    Type { bounds: Vec<String> },
    /// A constant of a scalar type.
    Const(Scalar),
}

/// A scalar type as written: concrete, or a generic parameter resolved per specialisation.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum ValueType {
    Scalar(Scalar),
    Generic(String),
    /// A `#[derive(DeviceCopy)]` struct, by name; its layout comes with the captured form.
    Struct(String),
    /// A tuple of scalars, the result type of a `#[device]` function (`-> (f32, u32)`): an
    /// anonymous `#[repr(C)]` struct with fields `0`, `1`, .. on the device.
    Tuple(Vec<ValueType>),
    /// `[T; N]`, a parameter or the result of a `#[device]` function: passed as a pointer
    /// to the caller's copy (the result to the caller's array), which inlining dissolves.
    Array {
        elem: Box<ValueType>,
        len: ArrayLen,
    },
}

/// The length of an array type: a literal or a const generic parameter (`[f32; N]`).
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum ArrayLen {
    Literal(u32),
    Generic(String),
}

/// A function parameter.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Param {
    pub name: String,
    pub ty: ParamType,
    /// `mut name: T`: the function may assign to its copy of the value.
    pub mutable: bool,
    /// `#[comptime] name: T`: the launch value becomes a constant of the specialisation.
    pub comptime: bool,
    pub span: Span,
}

/// The type of a parameter.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum ParamType {
    /// A scalar passed by value.
    Value(ValueType),
    /// `&[T]` (`mutable: false`) or `&mut [T]` (`mutable: true`).
    Slice { elem: ValueType, mutable: bool },
    /// `&S`/`&mut S` (a `#[derive(DeviceCopy)]` struct) or `&[T; N]`/`&mut [T; N]` (`len`
    /// is `Some(N)`, a literal or, in a `#[device]` function, a const generic parameter):
    /// passed as a pointer, as C passes `const S*` and `T*`. The caller writes `&value` or
    /// `&mut array`.
    Reference {
        target: ValueType,
        len: Option<ArrayLen>,
        mutable: bool,
    },
    /// `map: TensorMap`: a TMA descriptor passed by value as a grid-constant kernel
    /// parameter; the body reads only its address (`tensor_map_address(&map)`).
    TensorMap,
    /// `op: F` with `F: Fn(A, B) -> R` (or `op: impl Fn(..)`) in a device function: a
    /// closure of `arity` parameters, compiled into each instance made for a closure.
    Closure { arity: usize },
}

/// A parameter of a closure: its name and, when written, its type.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ClosureParam {
    pub name: String,
    pub ty: Option<ValueType>,
}

/// A `{ ... }` block. Blocks produce no value unless `tail` is set (in `if` expressions
/// and at the end of a device function that returns a value).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Block {
    pub stmts: Vec<Stmt>,
    /// The final expression without `;`, when the block is used as a value.
    pub tail: Option<Box<Expr>>,
    pub span: Span,
}

/// A statement.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum Stmt {
    /// `let [mut] name[: ty] [= init];`
    Let {
        name: String,
        mutable: bool,
        ty: Option<ValueType>,
        init: Option<Expr>,
        span: Span,
    },
    /// `let (a, b, c, d) = vload4(x, i);`: one vector load into several names.
    LetTuple {
        names: Vec<(String, bool)>,
        init: Expr,
        span: Span,
    },
    /// `place = value;` or `place op= value;`
    Assign {
        place: Expr,
        op: Option<BinaryOp>,
        value: Expr,
        span: Span,
    },
    /// `if cond { .. } [else ..]` used as a statement.
    If(IfStmt),
    /// `[label:] while cond { .. }`
    While {
        label: Option<String>,
        cond: Expr,
        body: Block,
        span: Span,
    },
    /// `[label:] loop { .. }`
    Loop {
        label: Option<String>,
        body: Block,
        span: Span,
    },
    /// `[label:] for var in range { .. }`
    For {
        label: Option<String>,
        var: String,
        range: Box<RangeExpr>,
        body: Block,
        span: Span,
    },
    /// `break ['label];`
    Break { label: Option<String>, span: Span },
    /// `continue ['label];`
    Continue { label: Option<String>, span: Span },
    /// `return;` or, in a device function, `return value;`
    Return { value: Option<Expr>, span: Span },
    /// A nested `{ .. }` block.
    Block(Block),
    /// An expression evaluated for its effect: a call of a device function returning `()`.
    Expr(Expr),
    /// `match` used as a statement.
    Match {
        scrutinee: Expr,
        arms: Vec<MatchArm>,
        span: Span,
    },
    /// `print!`/`println!`: formatted output through the device's `vprintf`.
    Print {
        pieces: Vec<FormatPiece>,
        args: Vec<Expr>,
        span: Span,
    },
    /// `assert!`, `assert_eq!`, `assert_ne!` and their `debug_` forms: if `cond` is false,
    /// print the message and stop the kernel with a device-side assertion failure.
    Assert {
        cond: Expr,
        /// The condition as written, for the message.
        text: String,
        /// The user's formatted message, if any.
        message: Option<(Vec<FormatPiece>, Vec<Expr>)>,
        /// `debug_assert!`: checked only when debug assertions are on.
        debug_only: bool,
        span: Span,
    },
}

/// One arm of a `match` on an integer (or `bool`) value.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MatchArm {
    /// The arm matches when any of these does (`1 | 2 | 5..=9`).
    pub patterns: Vec<Pattern>,
    /// `if` guard.
    pub guard: Option<Expr>,
    /// The arm's code; its tail is the value when the `match` is used as a value.
    pub body: Block,
    pub span: Span,
}

/// A pattern of a `match` arm.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum Pattern {
    /// A literal (`3`, `-1`, `true`).
    Literal(Literal),
    /// `a..b` or `a..=b` of literals.
    Range {
        start: Literal,
        end: Literal,
        inclusive: bool,
    },
    /// `Enum::Variant`.
    Variant { ty: String, variant: String },
    /// `_`.
    Wildcard,
}

/// A piece of a format string: literal text, or argument `index` formatted by `spec`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum FormatPiece {
    Text(String),
    Arg { index: usize, spec: FormatSpec },
}

/// The supported part of Rust's format specs: `{}`, `{:?}`, `{:.3}`, `{:x}`, `{:X}`,
/// `{:8}`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct FormatSpec {
    pub width: Option<u32>,
    pub precision: Option<u32>,
    /// `Some(false)` for `x`, `Some(true)` for `X`.
    pub hex: Option<bool>,
}

/// `if cond { then } else { .. }`, with `else if` chains nested in `otherwise`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct IfStmt {
    pub cond: Expr,
    pub then: Block,
    pub otherwise: Option<Box<Else>>,
    pub span: Span,
}

/// The `else` part of an `if`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum Else {
    If(IfStmt),
    Block(Block),
}

/// The iterator of a `for` loop: `start..end`, `start..=end`, optionally `.rev()` and
/// `.step_by(step)`. Loops over slices and arrays (`x.iter().enumerate()`, `zip`) are
/// loops over an index range that the macro writes.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RangeExpr {
    pub start: Expr,
    pub end: Expr,
    pub inclusive: bool,
    pub step: Option<Expr>,
    /// `.rev()`: from the last element down to `start`; a `step` then counts from the last.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub reverse: bool,
    pub span: Span,
}

/// An expression and where it was written.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Expr {
    pub kind: ExprKind,
    pub span: Span,
}

/// The kinds of expression of the kernel language.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum ExprKind {
    /// A literal; integer and float literals carry their suffix if the user wrote one.
    Lit(Literal),
    /// A local variable or parameter.
    Var(String),
    Unary {
        op: UnaryOp,
        operand: Box<Expr>,
    },
    Binary {
        op: BinaryOp,
        left: Box<Expr>,
        right: Box<Expr>,
    },
    /// `value as ty`
    Cast {
        value: Box<Expr>,
        ty: Scalar,
    },
    /// `T::from_f32(v)` of a generic scalar type `T`: `v` as the type the specialisation
    /// gives `T` (the `as` cast of the value, as `Real::from_f32` is on the host).
    ConvertTo {
        value: Box<Expr>,
        ty: ValueType,
    },
    /// `base[index]` on a slice.
    Index {
        base: Box<Expr>,
        index: Box<Expr>,
    },
    /// `slice.len()`
    Len(Box<Expr>),
    /// `&base[start..end]` or `&mut base[start..end]`, either bound absent (`&x[a..]`,
    /// `&x[..b]`, `&x[..]`): a view of the slice's elements `start..end`.
    SubSlice {
        base: Box<Expr>,
        start: Option<Box<Expr>>,
        end: Option<Box<Expr>>,
        mutable: bool,
    },
    /// `base.split_at(mid)` or `base.split_at_mut(mid)`: the views `..mid` and `mid..`,
    /// bound with `let (lo, hi) = ..`.
    SplitAt {
        base: Box<Expr>,
        mid: Box<Expr>,
        mutable: bool,
    },
    /// A closure passed to a `#[device]` function's `F: Fn(..) -> ..` parameter:
    /// `|a, b| a + b * scale`. `captures` are the caller's names the body reads (each an
    /// [`ExprKind::Var`]), passed to the function instance as hidden arguments. Closures
    /// the body calls itself are inlined by the macro and never appear here.
    Closure {
        params: Vec<ClosureParam>,
        body: Box<Expr>,
        captures: Vec<Expr>,
    },
    /// `op(a, b)` in a device function whose parameter `op` is a closure: the closure the
    /// instance was made for, inlined (see `lower::closures`).
    ClosureCall {
        callee: String,
        args: Vec<Expr>,
    },
    /// A device intrinsic such as `thread_idx().x` or `global_index()`.
    Builtin(Builtin),
    /// `if cond { a } else { b }` used as a value.
    If {
        cond: Box<Expr>,
        then: Block,
        otherwise: Block,
    },
    /// A `{ stmts; tail }` block used as a value.
    Block(Block),
    /// A call of a `#[device]` function by name, with explicit generic arguments if the
    /// user wrote a turbofish (`f::<f32, 4>(x)`); an associated function of a struct is
    /// named `Struct::function` (`Vec3::new`, see [`crate::methods`]).
    Call {
        callee: String,
        generic_args: Vec<GenericArg>,
        args: Vec<Expr>,
    },
    /// `receiver.method(args)` of a method the language does not define: a `#[device]`
    /// method of the receiver's struct, found once its type is known (lowering calls
    /// `Struct::method` with the receiver, or a reference to it, first).
    MethodCall {
        receiver: Box<Expr>,
        method: String,
        args: Vec<Expr>,
    },
    /// A method of the language's scalar types, `x.sqrt()` or `a.min(b)`; also
    /// `f32::sqrt(x)`, which is the same call.
    Math {
        function: MathFunction,
        receiver: Box<Expr>,
        args: Vec<Expr>,
    },
    /// `T::zero()` or `T::one()` of a scalar type. Without a type, of whatever numeric type
    /// inference gives it: the start of an iterator's `sum()` (`-0.0` for floats, where
    /// Rust's `Sum` starts, so that the sum of `[-0.0]` is `-0.0`) or `product()` (`1`).
    Constant {
        ty: Option<ValueType>,
        one: bool,
    },
    /// A device intrinsic called like a function (`sync_threads()`, `atomic_add(..)`,
    /// `shared_array::<f32>(256)`), with its explicit type argument if it takes one.
    Intrinsic {
        intrinsic: Intrinsic,
        ty: Option<ValueType>,
        args: Vec<Expr>,
    },
    /// `match` used as a value.
    Match {
        scrutinee: Box<Expr>,
        arms: Vec<MatchArm>,
    },
    /// `ptx!(u32: "mov.u32 $0, %smid;")` or `ptx!("membar.gl;")`: inline PTX. The result
    /// (if a type is given) comes first: `$0` for a scalar, `$0`..`$(n-1)` for a tuple of
    /// `n` scalars (`ptx!((f32, f32): ..)`, several outputs of one instruction); the
    /// arguments follow.
    InlinePtx {
        result: Option<ValueType>,
        template: String,
        args: Vec<Expr>,
        /// A typed tensor-core operation (`wgmma::<bf16, false, false>(..)`), whose template
        /// lowering makes from the operation once its arguments are resolved; `None` for
        /// `ptx!`.
        op: Option<Box<TensorOpCall>>,
    },
    /// `Enum::Variant` of a `#[derive(DeviceCopy)]` enum: its discriminant.
    EnumVariant {
        ty: String,
        variant: String,
    },
    /// `value.field` of a struct.
    Field {
        base: Box<Expr>,
        field: String,
    },
    /// `[value; len]`, only as the initial value of a local array.
    Repeat {
        value: Box<Expr>,
        len: Box<Expr>,
    },
    /// `(a, b, ..)`: the value argument of `vstore4`/`vstore2`, or the value a `#[device]`
    /// function returning a tuple returns.
    Tuple(Vec<Expr>),
    /// `Name { field: value, .. }`: a `#[derive(DeviceCopy)]` struct built from a value for
    /// every field.
    StructLiteral {
        ty: String,
        fields: Vec<(String, Expr)>,
    },
    /// `&mut place` or `&place`: the first argument of an atomic, or an argument of an
    /// `#[extern_device]` function that takes a reference.
    Reference {
        mutable: bool,
        place: Box<Expr>,
    },
}

impl Expr {
    /// The names this expression reads as variables ([`ExprKind::Var`]), each once, in
    /// order, wherever the syntax nests them: what a closure's body may capture. (It walks
    /// the serde form, so no construct added later is missed. A name the expression binds
    /// itself may be among them.)
    pub fn variables(&self) -> Vec<String> {
        fn walk(value: &serde_json::Value, out: &mut Vec<String>) {
            match value {
                serde_json::Value::Object(fields) => {
                    if let (1, Some(serde_json::Value::String(name))) =
                        (fields.len(), fields.get("Var"))
                    {
                        if !out.contains(name) {
                            out.push(name.clone());
                        }
                    }
                    fields.values().for_each(|field| walk(field, out));
                }
                serde_json::Value::Array(items) => items.iter().for_each(|item| walk(item, out)),
                _ => {}
            }
        }
        let mut out = Vec::new();
        if let Ok(value) = serde_json::to_value(self) {
            walk(&value, &mut out);
        }
        out
    }
}

/// An explicit generic argument of a call.
/// A call of a typed tensor-core operation, as written: its name and generic arguments.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TensorOpCall {
    pub name: crate::tensor_op::TensorOpName,
    pub generic_args: Vec<GenericArg>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum GenericArg {
    Type(ValueType),
    /// A const argument: a literal or a const generic parameter of the caller.
    Const(Expr),
}

/// A literal value.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub enum Literal {
    Bool(bool),
    /// An integer literal; values above `u64::MAX` are rejected by the macro.
    Int {
        value: u64,
        suffix: Option<Scalar>,
    },
    Float {
        value: f64,
        suffix: Option<Scalar>,
    },
}

/// Unary operators.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum UnaryOp {
    /// `-x`
    Neg,
    /// `!x` (logical on `bool`, bitwise on integers)
    Not,
}

/// Binary operators, with Rust's meaning.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum BinaryOp {
    Add,
    Sub,
    Mul,
    Div,
    Rem,
    BitAnd,
    BitOr,
    BitXor,
    Shl,
    Shr,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    /// `&&` (short-circuit)
    And,
    /// `||` (short-circuit)
    Or,
}

impl BinaryOp {
    /// Whether the operator compares and yields `bool`.
    pub fn is_comparison(self) -> bool {
        matches!(
            self,
            BinaryOp::Eq | BinaryOp::Ne | BinaryOp::Lt | BinaryOp::Le | BinaryOp::Gt | BinaryOp::Ge
        )
    }

    /// Whether the operator is a short-circuit logical operator.
    pub fn is_logical(self) -> bool {
        matches!(self, BinaryOp::And | BinaryOp::Or)
    }

    /// Whether the operator is a shift (whose right operand may have another type).
    pub fn is_shift(self) -> bool {
        matches!(self, BinaryOp::Shl | BinaryOp::Shr)
    }

    /// The operator as Rust writes it.
    pub fn symbol(self) -> &'static str {
        match self {
            BinaryOp::Add => "+",
            BinaryOp::Sub => "-",
            BinaryOp::Mul => "*",
            BinaryOp::Div => "/",
            BinaryOp::Rem => "%",
            BinaryOp::BitAnd => "&",
            BinaryOp::BitOr => "|",
            BinaryOp::BitXor => "^",
            BinaryOp::Shl => "<<",
            BinaryOp::Shr => ">>",
            BinaryOp::Eq => "==",
            BinaryOp::Ne => "!=",
            BinaryOp::Lt => "<",
            BinaryOp::Le => "<=",
            BinaryOp::Gt => ">",
            BinaryOp::Ge => ">=",
            BinaryOp::And => "&&",
            BinaryOp::Or => "||",
        }
    }
}

/// Device intrinsics known to the language.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Builtin {
    /// `thread_idx().{x,y,z}`: `u32`
    ThreadIdx(Axis),
    /// `block_idx().{x,y,z}`: `u32`
    BlockIdx(Axis),
    /// `block_dim().{x,y,z}`: `u32`
    BlockDim(Axis),
    /// `grid_dim().{x,y,z}`: `u32`
    GridDim(Axis),
    /// `global_index()`: `block_idx().x * block_dim().x + thread_idx().x` as `usize`
    GlobalIndex,
    /// `grid_stride()`: `grid_dim().x * block_dim().x` as `usize`
    GridStride,
}

/// A component of a three-dimensional index.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Axis {
    X,
    Y,
    Z,
}

impl Axis {
    /// `x`, `y` or `z`.
    pub fn name(self) -> &'static str {
        match self {
            Axis::X => "x",
            Axis::Y => "y",
            Axis::Z => "z",
        }
    }
}
