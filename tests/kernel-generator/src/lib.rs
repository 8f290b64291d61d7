//! Random kernels for differential testing: IR modules built directly (random expression
//! trees over the scalar types, `if`s, bounded loops with `break`/`continue`, local
//! variables and arrays, device functions with early returns, atomics, and, where every
//! thread of the block runs them, warp shuffles and votes and exchanges through shared
//! memory), with a Rust-like rendering for reports.
//!
//! Every kernel has the same parameters ([`PARAMETERS`]), so one harness runs them all:
//! scalars, input slices of several types, and output slices each thread writes at
//! `i * slots + k`. The kernels are deterministic by construction: integer division never
//! divides by zero or `MIN` by `-1`, indices are reduced modulo their slice's length,
//! loops have small trip counts, and atomics are commutative and their old values unused.
//! Float results are exact IEEE operations (compile the GPU side without FMA contraction)
//! except the `approx` outputs, each one libdevice function of an exact argument, compared
//! within [`cudajit_sim::ulp_bound`].
//!
//! `tests/random_kernels.rs` and `examples/random_kernels.rs` run them on the simulator
//! and, with a GPU, on the GPU.

use cudajit_core::ast::{Axis, BinaryOp, UnaryOp};
use cudajit_core::intrinsics::{AtomicOp, AtomicScope, Intrinsic, ShuffleMode, VoteOp};
use cudajit_core::ir::{
    Block, BuiltinValue, EntryPoint, Expression, Function, FunctionArgument, Handle, Literal,
    LocalVariable, LoopId, Module, SharedVariable, Statement, Type, TypeInner,
};
use cudajit_core::math::MathFunction;
use cudajit_core::{Scalar, Span};

/// Output slots per thread: integers (as `i64`), `f32`, `f64`, approximate `f32` and `f64`.
pub const INT_SLOTS: usize = 8;
pub const F32_SLOTS: usize = 4;
pub const F64_SLOTS: usize = 4;
pub const APPROX_SLOTS: usize = 4;
/// Elements of each atomic counter slice.
pub const COUNTERS: usize = 8;

/// A kernel parameter of every random kernel.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RandomParameter {
    /// A scalar, with its name.
    Scalar(&'static str, Scalar),
    /// An input slice of `n` elements (one per thread).
    Input(&'static str, Scalar),
    /// An output slice of `n * slots` elements.
    Output(&'static str, Scalar, usize),
    /// An atomic counter slice of [`COUNTERS`] elements.
    Counters(&'static str, Scalar),
}

/// The parameters of every random kernel, in order.
pub const PARAMETERS: [RandomParameter; 22] = [
    RandomParameter::Scalar("n", Scalar::U32),
    RandomParameter::Scalar("p_i32", Scalar::I32),
    RandomParameter::Scalar("p_u64", Scalar::U64),
    RandomParameter::Scalar("p_f32", Scalar::F32),
    RandomParameter::Scalar("p_f64", Scalar::F64),
    RandomParameter::Scalar("p_bool", Scalar::Bool),
    RandomParameter::Input("in_i32", Scalar::I32),
    RandomParameter::Input("in_u32", Scalar::U32),
    RandomParameter::Input("in_i64", Scalar::I64),
    RandomParameter::Input("in_u64", Scalar::U64),
    RandomParameter::Input("in_f32", Scalar::F32),
    RandomParameter::Input("in_f64", Scalar::F64),
    RandomParameter::Input("in_u8", Scalar::U8),
    RandomParameter::Input("in_i16", Scalar::I16),
    RandomParameter::Input("in_bool", Scalar::Bool),
    RandomParameter::Output("out_int", Scalar::I64, INT_SLOTS),
    RandomParameter::Output("out_f32", Scalar::F32, F32_SLOTS),
    RandomParameter::Output("out_f64", Scalar::F64, F64_SLOTS),
    RandomParameter::Output("approx_f32", Scalar::F32, APPROX_SLOTS),
    RandomParameter::Output("approx_f64", Scalar::F64, APPROX_SLOTS),
    RandomParameter::Counters("counters_u32", Scalar::U32),
    RandomParameter::Counters("counters_u64", Scalar::U64),
];

/// A generated kernel.
#[derive(Clone, Debug)]
pub struct RandomKernel {
    pub seed: u64,
    pub module: Module,
    /// The entry symbol.
    pub symbol: String,
    /// The kernel as Rust-like text.
    pub source: String,
    /// Threads per block (a multiple of 32) and blocks; `n` is their product.
    pub block: u32,
    pub grid: u32,
    /// The function each `approx_f32`/`approx_f64` slot holds (`None`: unused).
    pub approx_f32: [Option<MathFunction>; APPROX_SLOTS],
    pub approx_f64: [Option<MathFunction>; APPROX_SLOTS],
}

impl RandomKernel {
    /// Threads in the launch.
    pub fn threads(&self) -> usize {
        self.block as usize * self.grid as usize
    }
}

/// A small, fast, seeded generator (xorshift64*).
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// A number below `n` (`n > 0`).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n.max(1)
    }

    /// True with probability `percent` / 100.
    pub fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }

    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len() as u64) as usize]
    }

    /// Register bits of a random value of `scalar`, edge values often.
    pub fn value(&mut self, scalar: Scalar) -> u64 {
        let bits = match scalar {
            Scalar::Bool => self.next_u64() & 1,
            Scalar::F32 => {
                let special = [
                    0.0f32,
                    -0.0,
                    1.0,
                    -1.0,
                    0.5,
                    3.0,
                    f32::MAX,
                    f32::MIN_POSITIVE,
                    1e-40,
                    f32::INFINITY,
                    f32::NEG_INFINITY,
                    f32::NAN,
                    1e10,
                    -7.25,
                ];
                let v = match self.below(4) {
                    0 => *self.pick(&special),
                    1 => f32::from_bits(self.next_u64() as u32),
                    2 => (self.below(2001) as f32 - 1000.0) * 0.125,
                    _ => (self.below(2_000_001) as f32 - 1_000_000.0) * 1e-3,
                };
                u64::from(v.to_bits())
            }
            Scalar::F64 => {
                let special = [
                    0.0f64,
                    -0.0,
                    1.0,
                    -1.0,
                    0.1,
                    f64::MAX,
                    f64::MIN_POSITIVE,
                    5e-324,
                    f64::INFINITY,
                    f64::NEG_INFINITY,
                    f64::NAN,
                    1e300,
                    -2.5,
                ];
                let v = match self.below(4) {
                    0 => *self.pick(&special),
                    1 => f64::from_bits(self.next_u64()),
                    2 => (self.below(2001) as f64 - 1000.0) * 0.125,
                    _ => (self.below(2_000_001) as f64 - 1_000_000.0) * 1e-3,
                };
                v.to_bits()
            }
            s => {
                let edges = [
                    0u64,
                    1,
                    u64::MAX,
                    2,
                    3,
                    7,
                    31,
                    32,
                    33,
                    63,
                    64,
                    1 << 31,
                    (1 << 31) - 1,
                ];
                match self.below(3) {
                    0 => *self.pick(&edges),
                    1 => self.below(100),
                    _ => {
                        let v = self.next_u64();
                        if s.bits() < 64 && s.is_signed() {
                            // Negative values as often as positive ones.
                            v >> self.below(u64::from(s.bits()))
                        } else {
                            v
                        }
                    }
                }
            }
        };
        cudajit_sim::canonical_bits(bits, scalar)
    }
}

/// The scalar types expressions use.
const TYPES: [Scalar; 12] = [
    Scalar::Bool,
    Scalar::I8,
    Scalar::I16,
    Scalar::I32,
    Scalar::I64,
    Scalar::U8,
    Scalar::U16,
    Scalar::U32,
    Scalar::U64,
    Scalar::Usize,
    Scalar::F32,
    Scalar::F64,
];

/// libdevice functions of the `approx` outputs.
const APPROXIMATE: [MathFunction; 22] = [
    MathFunction::Sin,
    MathFunction::Cos,
    MathFunction::Tan,
    MathFunction::Exp,
    MathFunction::Exp2,
    MathFunction::Ln,
    MathFunction::Log2,
    MathFunction::Log10,
    MathFunction::Asin,
    MathFunction::Acos,
    MathFunction::Atan,
    MathFunction::Sinh,
    MathFunction::Cosh,
    MathFunction::Tanh,
    MathFunction::Cbrt,
    MathFunction::Erf,
    MathFunction::Erfc,
    MathFunction::Rsqrt,
    MathFunction::Powf,
    MathFunction::Hypot,
    MathFunction::Atan2,
    MathFunction::Powi,
];

/// Exact float functions expressions may use anywhere.
const EXACT_FLOAT: [MathFunction; 11] = [
    MathFunction::Sqrt,
    MathFunction::Floor,
    MathFunction::Ceil,
    MathFunction::Round,
    MathFunction::Trunc,
    MathFunction::Abs,
    MathFunction::Recip,
    MathFunction::Min,
    MathFunction::Max,
    MathFunction::Copysign,
    MathFunction::MulAdd,
];

/// Generates kernel `seed`.
pub fn random_kernel(seed: u64) -> RandomKernel {
    let mut rng = Rng::new(seed);
    let mut module = Module::default();
    let mut source = String::new();
    let block = 32 * (1 + rng.below(4) as u32);
    let grid = 1 + rng.below(3) as u32;

    // Device functions first: each takes two scalars and returns one.
    let mut helpers = Vec::new();
    for k in 0..rng.below(3) {
        let args = [*rng.pick(&TYPES), *rng.pick(&TYPES)];
        let result = *rng.pick(&TYPES);
        let name = format!("helper{k}");
        let mut generator = Generator::new(&mut module, &mut rng, &helpers, false, block);
        let function = generator.device_function(&name, args, result);
        let text = std::mem::take(&mut generator.text);
        let handle = module.functions.append(function);
        helpers.push((handle, name, args, result));
        source.push_str(&text);
        source.push('\n');
    }

    let symbol = format!("random_kernel_{seed}");
    let mut generator = Generator::new(&mut module, &mut rng, &helpers, true, block);
    let kernel = generator.kernel(&symbol);
    let approx_f32 = generator.approx_f32;
    let approx_f64 = generator.approx_f64;
    source.push_str(&generator.text);
    let function = module.functions.append(kernel);
    module.entry_points.push(EntryPoint {
        symbol: symbol.clone(),
        function,
        max_threads: None,
    });
    RandomKernel {
        seed,
        module,
        symbol,
        source,
        block,
        grid,
        approx_f32,
        approx_f64,
    }
}

type Helper = (Handle<Function>, String, [Scalar; 2], Scalar);

/// Builds one function.
struct Generator<'a> {
    module: &'a mut Module,
    rng: &'a mut Rng,
    helpers: &'a [Helper],
    function: Function,
    text: String,
    indent: usize,
    /// Scalar locals with their types and names.
    locals: Vec<(Handle<LocalVariable>, Scalar, String)>,
    /// Local arrays of four elements.
    arrays: Vec<(Handle<LocalVariable>, Scalar, String)>,
    /// The function's scalar arguments (index, type, name).
    arguments: Vec<(u32, Scalar, String)>,
    is_kernel: bool,
    /// Whether every thread of the block runs the statement being generated.
    uniform: bool,
    block: u32,
    next_loop: u32,
    loops: Vec<LoopId>,
    budget: u32,
    approx_f32: [Option<MathFunction>; APPROX_SLOTS],
    approx_f64: [Option<MathFunction>; APPROX_SLOTS],
}

type Gen = (Handle<Expression>, String);

impl<'a> Generator<'a> {
    fn new(
        module: &'a mut Module,
        rng: &'a mut Rng,
        helpers: &'a [Helper],
        is_kernel: bool,
        block: u32,
    ) -> Self {
        Generator {
            module,
            rng,
            helpers,
            function: Function::default(),
            text: String::new(),
            indent: 1,
            locals: Vec::new(),
            arrays: Vec::new(),
            arguments: Vec::new(),
            is_kernel,
            uniform: is_kernel,
            block,
            next_loop: 0,
            loops: Vec::new(),
            budget: 0,
            approx_f32: [None; APPROX_SLOTS],
            approx_f64: [None; APPROX_SLOTS],
        }
    }

    fn ty(&mut self, inner: TypeInner) -> Handle<cudajit_core::ir::Type> {
        self.module.types.insert(Type { inner })
    }

    fn scalar_ty(&mut self, scalar: Scalar) -> Handle<cudajit_core::ir::Type> {
        self.ty(TypeInner::Scalar(scalar))
    }

    fn add(&mut self, expression: Expression) -> Handle<Expression> {
        self.function.add_expression(expression, Span::default())
    }

    fn line(&mut self, text: impl AsRef<str>) {
        for _ in 0..self.indent {
            self.text.push_str("    ");
        }
        self.text.push_str(text.as_ref());
        self.text.push('\n');
    }

    fn local(&mut self, scalar: Scalar, stem: &str) -> (Handle<LocalVariable>, String) {
        let name = format!("{stem}{}", self.function.locals.len());
        let ty = self.scalar_ty(scalar);
        let handle = self.function.locals.append(LocalVariable {
            name: name.clone(),
            ty,
            span: Span::default(),
        });
        (handle, name)
    }

    // ----- expressions -----

    fn literal(&mut self, scalar: Scalar) -> Gen {
        let bits = self.rng.value(scalar);
        let (literal, text) = match scalar {
            Scalar::Bool => (Literal::Bool(bits == 1), (bits == 1).to_string()),
            Scalar::F32 => {
                let v = f32::from_bits(bits as u32);
                (
                    Literal::Float {
                        value: f64::from(v),
                        ty: scalar,
                    },
                    format!("{v:?}f32"),
                )
            }
            Scalar::F64 => {
                let v = f64::from_bits(bits);
                (
                    Literal::Float {
                        value: v,
                        ty: scalar,
                    },
                    format!("{v:?}f64"),
                )
            }
            s => {
                let text = if s.is_signed() {
                    cudajit_sim::widen_bits(bits, s) as i64 as i128
                } else {
                    i128::from(bits)
                };
                (Literal::Int { bits, ty: s }, format!("{text}{s}"))
            }
        };
        (self.add(Expression::Literal(literal)), text)
    }

    fn int_literal(&mut self, value: u64, scalar: Scalar) -> Gen {
        let bits = cudajit_sim::canonical_bits(value, scalar);
        let handle = self.add(Expression::Literal(Literal::Int { bits, ty: scalar }));
        let shown = if scalar.is_signed() {
            i128::from(cudajit_sim::widen_bits(bits, scalar) as i64)
        } else {
            i128::from(bits)
        };
        (handle, format!("{shown}{scalar}"))
    }

    fn cast(&mut self, (value, text): Gen, from: Scalar, to: Scalar) -> Gen {
        if from == to {
            return (value, text);
        }
        (
            self.add(Expression::Cast { value, to }),
            format!("({text} as {to})"),
        )
    }

    fn binary(&mut self, op: BinaryOp, (left, l): Gen, (right, r): Gen) -> Gen {
        (
            self.add(Expression::Binary { op, left, right }),
            format!("({l} {} {r})", op.symbol()),
        )
    }

    fn builtin(&mut self, value: BuiltinValue, text: &str) -> Gen {
        (self.add(Expression::Builtin(value)), text.to_owned())
    }

    /// `global_index()` as `usize`.
    fn global_index(&mut self) -> Gen {
        let b = self.builtin(BuiltinValue::BlockIdx(Axis::X), "block_idx().x");
        let d = self.builtin(BuiltinValue::BlockDim(Axis::X), "block_dim().x");
        let t = self.builtin(BuiltinValue::ThreadIdx(Axis::X), "thread_idx().x");
        let b = self.cast(b, Scalar::U32, Scalar::Usize);
        let d = self.cast(d, Scalar::U32, Scalar::Usize);
        let t = self.cast(t, Scalar::U32, Scalar::Usize);
        let bd = self.binary(BinaryOp::Mul, b, d);
        let (handle, _) = self.binary(BinaryOp::Add, bd, t);
        (handle, "global_index()".into())
    }

    /// `slice[index]` with `index` any `usize`, reduced modulo the length.
    fn element(&mut self, argument: u32, name: &str, index: Gen) -> Gen {
        let slice = self.add(Expression::FunctionArgument(argument));
        let length = self.add(Expression::SliceLength { slice });
        let (wrapped, text) = self.binary(BinaryOp::Rem, index, (length, format!("{name}.len()")));
        let slice = self.add(Expression::FunctionArgument(argument));
        let pointer = self.add(Expression::ElementPointer {
            base: slice,
            index: wrapped,
        });
        (pointer, format!("{name}[{text}]"))
    }

    fn load(&mut self, (pointer, text): Gen) -> Gen {
        (self.add(Expression::Load { pointer }), text)
    }

    /// A value of `scalar` with no operator on top.
    fn leaf(&mut self, scalar: Scalar, depth: u32) -> Gen {
        for _ in 0..4 {
            match self.rng.below(8) {
                0 | 1 => {
                    let candidates: Vec<_> = self
                        .locals
                        .iter()
                        .filter(|l| l.1 == scalar)
                        .map(|l| (l.0, l.2.clone()))
                        .collect();
                    if !candidates.is_empty() {
                        let (local, name) = self.rng.pick(&candidates).clone();
                        return (self.add(Expression::LocalLoad(local)), name);
                    }
                }
                2 => {
                    let candidates: Vec<_> = self
                        .arguments
                        .iter()
                        .filter(|a| a.1 == scalar)
                        .cloned()
                        .collect();
                    if !candidates.is_empty() {
                        let (index, _, name) = self.rng.pick(&candidates).clone();
                        return (self.add(Expression::FunctionArgument(index)), name);
                    }
                }
                3 | 4 if self.is_kernel => {
                    // An input element: this thread's, or one chosen by an expression.
                    let inputs: Vec<(u32, &'static str)> = PARAMETERS
                        .iter()
                        .enumerate()
                        .filter_map(|(k, p)| match p {
                            RandomParameter::Input(name, s) if *s == scalar => {
                                Some((k as u32, *name))
                            }
                            _ => None,
                        })
                        .collect();
                    if let Some(&(argument, name)) = inputs.first() {
                        let index = if depth > 0 && self.rng.chance(40) {
                            let e = self.expr(Scalar::U32, depth - 1);
                            self.cast(e, Scalar::U32, Scalar::Usize)
                        } else {
                            self.global_index()
                        };
                        let pointer = self.element(argument, name, index);
                        return self.load(pointer);
                    }
                }
                5 if !self.arrays.is_empty() && depth > 0 => {
                    let candidates: Vec<_> = self
                        .arrays
                        .iter()
                        .filter(|a| a.1 == scalar)
                        .cloned()
                        .collect();
                    if !candidates.is_empty() {
                        let (local, _, name) = self.rng.pick(&candidates).clone();
                        let pointer = self.array_element(local, &name, depth - 1);
                        return self.load(pointer);
                    }
                }
                6 if scalar == Scalar::U32 && self.is_kernel => {
                    let (value, text) = *self.rng.pick(&[
                        (BuiltinValue::ThreadIdx(Axis::X), "thread_idx().x"),
                        (BuiltinValue::BlockIdx(Axis::X), "block_idx().x"),
                        (BuiltinValue::BlockDim(Axis::X), "block_dim().x"),
                        (BuiltinValue::GridDim(Axis::X), "grid_dim().x"),
                    ]);
                    return self.builtin(value, text);
                }
                _ => {}
            }
        }
        self.literal(scalar)
    }

    /// `array[index & 3]`.
    fn array_element(&mut self, local: Handle<LocalVariable>, name: &str, depth: u32) -> Gen {
        let index = self.expr(Scalar::Usize, depth);
        let three = self.int_literal(3, Scalar::Usize);
        let (index, text) = self.binary(BinaryOp::BitAnd, index, three);
        (
            self.add(Expression::ArrayElement { local, index }),
            format!("{name}[{text}]"),
        )
    }

    /// A divisor of `scalar` that is never 0, nor -1 for signed types.
    fn divisor(&mut self, scalar: Scalar, depth: u32) -> Gen {
        let e = self.expr(scalar, depth);
        if scalar.is_signed() {
            let minus_two = self.int_literal(u64::MAX - 1, scalar);
            let two = self.int_literal(2, scalar);
            let masked = self.binary(BinaryOp::BitAnd, e, minus_two);
            self.binary(BinaryOp::BitOr, masked, two)
        } else {
            let one = self.int_literal(1, scalar);
            self.binary(BinaryOp::BitOr, e, one)
        }
    }

    /// A random expression of type `scalar`, at most `depth` operators deep.
    fn expr(&mut self, scalar: Scalar, depth: u32) -> Gen {
        if depth == 0 || self.rng.chance(25) {
            return self.leaf(scalar, depth);
        }
        let d = depth - 1;
        match scalar {
            Scalar::Bool => match self.rng.below(6) {
                0 | 1 => {
                    let operand = *self.rng.pick(&TYPES);
                    let op = *self.rng.pick(&[
                        BinaryOp::Eq,
                        BinaryOp::Ne,
                        BinaryOp::Lt,
                        BinaryOp::Le,
                        BinaryOp::Gt,
                        BinaryOp::Ge,
                    ]);
                    let l = self.expr(operand, d);
                    let r = self.expr(operand, d);
                    self.binary(op, l, r)
                }
                2 => {
                    let and = self.rng.chance(50);
                    let (left, l) = self.expr(Scalar::Bool, d);
                    let (right, r) = self.expr(Scalar::Bool, d);
                    (
                        self.add(Expression::Logical { and, left, right }),
                        format!("({l} {} {r})", if and { "&&" } else { "||" }),
                    )
                }
                3 => {
                    let (operand, text) = self.expr(Scalar::Bool, d);
                    (
                        self.add(Expression::Unary {
                            op: UnaryOp::Not,
                            operand,
                        }),
                        format!("!{text}"),
                    )
                }
                4 => {
                    let float = *self.rng.pick(&[Scalar::F32, Scalar::F64]);
                    let (argument, text) = self.expr(float, d);
                    (
                        self.add(Expression::Math {
                            function: MathFunction::IsNan,
                            argument,
                            arg1: None,
                            arg2: None,
                        }),
                        format!("{text}.is_nan()"),
                    )
                }
                _ => {
                    let op = *self
                        .rng
                        .pick(&[BinaryOp::BitAnd, BinaryOp::BitOr, BinaryOp::BitXor]);
                    let l = self.expr(Scalar::Bool, d);
                    let r = self.expr(Scalar::Bool, d);
                    self.binary(op, l, r)
                }
            },
            s if s.is_integer() => match self.rng.below(10) {
                0..=2 => {
                    let op = *self.rng.pick(&[
                        BinaryOp::Add,
                        BinaryOp::Sub,
                        BinaryOp::Mul,
                        BinaryOp::BitAnd,
                        BinaryOp::BitOr,
                        BinaryOp::BitXor,
                    ]);
                    let l = self.expr(s, d);
                    let r = self.expr(s, d);
                    self.binary(op, l, r)
                }
                3 => {
                    let op = *self.rng.pick(&[BinaryOp::Div, BinaryOp::Rem]);
                    let l = self.expr(s, d);
                    let r = self.divisor(s, d);
                    self.binary(op, l, r)
                }
                4 => {
                    let op = *self.rng.pick(&[BinaryOp::Shl, BinaryOp::Shr]);
                    let l = self.expr(s, d);
                    let r = self.expr(s, d);
                    self.binary(op, l, r)
                }
                5 => {
                    let ops: &[UnaryOp] = if s.is_signed() {
                        &[UnaryOp::Neg, UnaryOp::Not]
                    } else {
                        &[UnaryOp::Not]
                    };
                    let op = *self.rng.pick(ops);
                    let (operand, text) = self.expr(s, d);
                    (
                        self.add(Expression::Unary { op, operand }),
                        format!("{}({text})", if op == UnaryOp::Neg { "-" } else { "!" }),
                    )
                }
                6 | 7 => {
                    let from = *self.rng.pick(&TYPES);
                    let e = self.expr(from, d);
                    self.cast(e, from, s)
                }
                _ => {
                    let mut functions = vec![
                        MathFunction::Min,
                        MathFunction::Max,
                        MathFunction::CountOnes,
                        MathFunction::LeadingZeros,
                        MathFunction::TrailingZeros,
                    ];
                    if s.is_signed() {
                        functions.push(MathFunction::Abs);
                    }
                    let function = *self.rng.pick(&functions);
                    let (argument, a) = self.expr(s, d);
                    let extra = if function.extra_arguments() == 1 {
                        Some(self.expr(s, d))
                    } else {
                        None
                    };
                    let handle = self.add(Expression::Math {
                        function,
                        argument,
                        arg1: extra.as_ref().map(|e| e.0),
                        arg2: None,
                    });
                    let text = match &extra {
                        Some((_, b)) => format!("{a}.{}({b})", function.name()),
                        None => format!("{a}.{}()", function.name()),
                    };
                    // Bit counts are `u32`.
                    let produced = function.result(s);
                    self.cast((handle, text), produced, s)
                }
            },
            s => match self.rng.below(8) {
                0..=3 => {
                    let op = *self.rng.pick(&[
                        BinaryOp::Add,
                        BinaryOp::Sub,
                        BinaryOp::Mul,
                        BinaryOp::Div,
                        BinaryOp::Rem,
                    ]);
                    let l = self.expr(s, d);
                    let r = self.expr(s, d);
                    self.binary(op, l, r)
                }
                4 => {
                    let (operand, text) = self.expr(s, d);
                    (
                        self.add(Expression::Unary {
                            op: UnaryOp::Neg,
                            operand,
                        }),
                        format!("-{text}"),
                    )
                }
                5 => {
                    let from = *self.rng.pick(&TYPES);
                    let from = if from == Scalar::Bool {
                        Scalar::I32
                    } else {
                        from
                    };
                    let e = self.expr(from, d);
                    self.cast(e, from, s)
                }
                _ => {
                    let function = *self.rng.pick(&EXACT_FLOAT);
                    let (argument, a) = self.expr(s, d);
                    let mut extra = Vec::new();
                    for _ in 0..function.extra_arguments() {
                        extra.push(self.expr(s, d));
                    }
                    if function == MathFunction::Copysign {
                        // The sign of a NaN is unspecified (Rust calls `copysign` with a
                        // NaN sign "non-portable"): take the sign from `y.min(c)`, never
                        // NaN for a number `c`.
                        let bound = loop {
                            let candidate = self.literal(s);
                            let is_nan = match self.function.expressions[candidate.0] {
                                Expression::Literal(Literal::Float { value, .. }) => value.is_nan(),
                                _ => false,
                            };
                            if !is_nan {
                                break candidate;
                            }
                        };
                        let (y, y_text) = extra.remove(0);
                        let handle = self.add(Expression::Math {
                            function: MathFunction::Min,
                            argument: y,
                            arg1: Some(bound.0),
                            arg2: None,
                        });
                        extra.insert(0, (handle, format!("{y_text}.min({})", bound.1)));
                    }
                    let handle = self.add(Expression::Math {
                        function,
                        argument,
                        arg1: extra.first().map(|e| e.0),
                        arg2: extra.get(1).map(|e| e.0),
                    });
                    let args: Vec<_> = extra.iter().map(|e| e.1.clone()).collect();
                    (
                        handle,
                        format!("{a}.{}({})", function.name(), args.join(", ")),
                    )
                }
            },
        }
    }

    // ----- statements -----

    fn store_local(
        &mut self,
        block: &mut Block,
        local: Handle<LocalVariable>,
        name: &str,
        (value, text): Gen,
    ) {
        block.push(Statement::LocalStore { local, value }, Span::default());
        self.line(format!("{name} = {text};"));
    }

    fn statements(&mut self, block: &mut Block, count: u64, depth: u32) {
        for _ in 0..count {
            if self.budget == 0 {
                return;
            }
            self.budget -= 1;
            self.statement(block, depth);
        }
    }

    fn statement(&mut self, block: &mut Block, depth: u32) {
        let choice = self.rng.below(if self.uniform { 14 } else { 10 });
        match choice {
            0..=3 => {
                let (local, scalar, name) = self.rng.pick(&self.locals).clone();
                let value = self.expr(scalar, 3);
                self.store_local(block, local, &name, value);
            }
            4 if depth > 0 => self.if_statement(block, depth),
            5 if depth > 0 => self.loop_statement(block, depth),
            6 if !self.loops.is_empty() => {
                let target = *self.rng.pick(&self.loops);
                let is_break = self.rng.chance(50);
                let (condition, text) = self.expr(Scalar::Bool, 2);
                let mut accept = Block::new();
                accept.push(
                    if is_break {
                        Statement::Break { target }
                    } else {
                        Statement::Continue { target }
                    },
                    Span::default(),
                );
                block.push(
                    Statement::If {
                        condition,
                        accept,
                        reject: Block::new(),
                    },
                    Span::default(),
                );
                self.line(format!(
                    "if {text} {{ {} 'l{}; }}",
                    if is_break { "break" } else { "continue" },
                    target.0
                ));
            }
            7 if !self.arrays.is_empty() => {
                let (local, scalar, name) = self.rng.pick(&self.arrays).clone();
                let (pointer, target) = self.array_element(local, &name, 2);
                let (value, text) = self.expr(scalar, 3);
                block.push(Statement::Store { pointer, value }, Span::default());
                self.line(format!("{target} = {text};"));
            }
            8 if !self.helpers.is_empty() => {
                let (function, name, args, result) = self.rng.pick(self.helpers).clone();
                let targets: Vec<_> = self
                    .locals
                    .iter()
                    .filter(|l| l.1 == result)
                    .cloned()
                    .collect();
                if let Some((local, _, local_name)) = targets.first().cloned() {
                    let a = self.expr(args[0], 2);
                    let b = self.expr(args[1], 2);
                    block.push(
                        Statement::Call {
                            function,
                            arguments: vec![a.0, b.0],
                            result: Some(local),
                        },
                        Span::default(),
                    );
                    self.line(format!("{local_name} = {name}({}, {});", a.1, b.1));
                }
            }
            9 if self.is_kernel => self.atomic(block),
            10 => self.shuffle(block),
            11 => self.vote(block),
            12 | 13 => self.shared_exchange(block),
            _ => {
                let (local, scalar, name) = self.rng.pick(&self.locals).clone();
                let value = self.expr(scalar, 2);
                self.store_local(block, local, &name, value);
            }
        }
    }

    fn if_statement(&mut self, block: &mut Block, depth: u32) {
        let (condition, text) = self.expr(Scalar::Bool, 3);
        let uniform = std::mem::replace(&mut self.uniform, false);
        self.line(format!("if {text} {{"));
        self.indent += 1;
        let mut accept = Block::new();
        let n = 1 + self.rng.below(3);
        self.statements(&mut accept, n, depth - 1);
        self.indent -= 1;
        let mut reject = Block::new();
        if self.rng.chance(50) {
            self.line("} else {");
            self.indent += 1;
            let n = 1 + self.rng.below(3);
            self.statements(&mut reject, n, depth - 1);
            self.indent -= 1;
        }
        self.line("}");
        self.uniform = uniform;
        block.push(
            Statement::If {
                condition,
                accept,
                reject,
            },
            Span::default(),
        );
    }

    /// `for c in 0..bound { .. }` as the lowering builds it: a counter, a test at the top,
    /// the increment in the continuing block.
    fn loop_statement(&mut self, block: &mut Block, depth: u32) {
        let (counter, name) = self.local(Scalar::U32, "c");
        let zero = self.int_literal(0, Scalar::U32);
        block.push(
            Statement::LocalStore {
                local: counter,
                value: zero.0,
            },
            Span::default(),
        );
        let bound = if self.rng.chance(50) {
            let trips = self.rng.below(5);
            self.int_literal(trips, Scalar::U32)
        } else {
            let e = self.expr(Scalar::U32, 2);
            let three = self.int_literal(3, Scalar::U32);
            self.binary(BinaryOp::BitAnd, e, three)
        };
        let id = LoopId(self.next_loop);
        self.next_loop += 1;
        self.line(format!("'l{}: for {name} in 0..{} {{", id.0, bound.1));
        self.indent += 1;
        let uniform = std::mem::replace(&mut self.uniform, false);
        let mut body = Block::new();
        let current = self.add(Expression::LocalLoad(counter));
        let done = self.add(Expression::Binary {
            op: BinaryOp::Ge,
            left: current,
            right: bound.0,
        });
        let mut exit = Block::new();
        exit.push(Statement::Break { target: id }, Span::default());
        body.push(
            Statement::If {
                condition: done,
                accept: exit,
                reject: Block::new(),
            },
            Span::default(),
        );
        self.loops.push(id);
        let n = 1 + self.rng.below(3);
        self.statements(&mut body, n, depth - 1);
        self.loops.pop();
        self.uniform = uniform;
        self.indent -= 1;
        self.line("}");
        let mut continuing = Block::new();
        let current = self.add(Expression::LocalLoad(counter));
        let one = self.int_literal(1, Scalar::U32);
        let next = self.add(Expression::Binary {
            op: BinaryOp::Add,
            left: current,
            right: one.0,
        });
        continuing.push(
            Statement::LocalStore {
                local: counter,
                value: next,
            },
            Span::default(),
        );
        block.push(
            Statement::Loop {
                id,
                body,
                continuing,
            },
            Span::default(),
        );
    }

    /// A commutative atomic on a counter whose old value is unused; each operation has a
    /// counter of its own, so the final values do not depend on the order of the threads.
    fn atomic(&mut self, block: &mut Block) {
        let (argument, name, scalar) = if self.rng.chance(50) {
            (20u32, "counters_u32", Scalar::U32)
        } else {
            (21, "counters_u64", Scalar::U64)
        };
        const OPS: [AtomicOp; 7] = [
            AtomicOp::Add,
            AtomicOp::Sub,
            AtomicOp::Min,
            AtomicOp::Max,
            AtomicOp::And,
            AtomicOp::Or,
            AtomicOp::Xor,
        ];
        let which = self.rng.below(OPS.len() as u64);
        let op = OPS[which as usize];
        let index = self.int_literal(which, Scalar::Usize);
        let slice = self.add(Expression::FunctionArgument(argument));
        let pointer = self.add(Expression::ElementPointer {
            base: slice,
            index: index.0,
        });
        let scope = *self
            .rng
            .pick(&[AtomicScope::Device, AtomicScope::Block, AtomicScope::System]);
        let (value, text) = self.expr(scalar, 2);
        block.push(
            Statement::Intrinsic {
                intrinsic: Intrinsic::Atomic(op, scope),
                arguments: vec![pointer, value],
                result: None,
            },
            Span::default(),
        );
        let suffix = match scope {
            AtomicScope::Device => "",
            AtomicScope::Block => "_block",
            AtomicScope::System => "_system",
        };
        self.line(format!(
            "atomic_{}{suffix}(&mut {name}[{which}], {text});",
            op.name()
        ));
    }

    fn full_mask(&mut self) -> Gen {
        self.int_literal(u64::from(u32::MAX), Scalar::U32)
    }

    /// `x = shfl_*_sync(FULL_WARP, x, lane)` on a local: every lane of the warp runs it.
    fn shuffle(&mut self, block: &mut Block) {
        if !self.uniform {
            return;
        }
        let (local, scalar, name) = self.rng.pick(&self.locals).clone();
        let mode = *self.rng.pick(&[
            ShuffleMode::Idx,
            ShuffleMode::Up,
            ShuffleMode::Down,
            ShuffleMode::Xor,
        ]);
        let mask = self.full_mask();
        let value = self.add(Expression::LocalLoad(local));
        let lane = if self.rng.chance(70) {
            let lane = self.rng.below(40);
            self.int_literal(lane, Scalar::U32)
        } else {
            self.expr(Scalar::U32, 2)
        };
        block.push(
            Statement::Intrinsic {
                intrinsic: Intrinsic::Shuffle(mode),
                arguments: vec![mask.0, value, lane.0],
                result: Some(local),
            },
            Span::default(),
        );
        let mode = match mode {
            ShuffleMode::Idx => "idx",
            ShuffleMode::Up => "up",
            ShuffleMode::Down => "down",
            ShuffleMode::Xor => "xor",
        };
        let _ = scalar;
        self.line(format!(
            "{name} = shfl_{mode}_sync(FULL_WARP, {name}, {});",
            lane.1
        ));
    }

    fn vote(&mut self, block: &mut Block) {
        if !self.uniform {
            return;
        }
        let op = *self.rng.pick(&[VoteOp::Ballot, VoteOp::All, VoteOp::Any]);
        let result = if op == VoteOp::Ballot {
            Scalar::U32
        } else {
            Scalar::Bool
        };
        let targets: Vec<_> = self
            .locals
            .iter()
            .filter(|l| l.1 == result)
            .cloned()
            .collect();
        let Some((local, _, name)) = targets.first().cloned() else {
            return;
        };
        let mask = self.full_mask();
        let (predicate, text) = self.expr(Scalar::Bool, 2);
        block.push(
            Statement::Intrinsic {
                intrinsic: Intrinsic::Vote(op),
                arguments: vec![mask.0, predicate],
                result: Some(local),
            },
            Span::default(),
        );
        let op = match op {
            VoteOp::Ballot => "ballot_sync",
            VoteOp::All => "all_sync",
            VoteOp::Any => "any_sync",
        };
        self.line(format!("{name} = {op}(FULL_WARP, {text});"));
    }

    /// Every thread writes its slot of a shared array, the block synchronises, each thread
    /// reads another thread's slot, and the block synchronises again before the array is
    /// written anew.
    fn shared_exchange(&mut self, block: &mut Block) {
        if !self.uniform {
            return;
        }
        let (local, scalar, name) = self.rng.pick(&self.locals).clone();
        let array = format!("shared{}", self.module.shared.len());
        let elem = self.scalar_ty(scalar);
        let shared = self.module.shared.append(SharedVariable {
            name: array.clone(),
            elem,
            len: Some(self.block),
        });
        let slice = self.add(Expression::SharedSlice(shared));
        let t = self.builtin(BuiltinValue::ThreadIdx(Axis::X), "thread_idx().x");
        let (mine, _) = self.cast(t, Scalar::U32, Scalar::Usize);
        let pointer = self.add(Expression::ElementPointer {
            base: slice,
            index: mine,
        });
        let (value, text) = self.expr(scalar, 2);
        block.push(Statement::Store { pointer, value }, Span::default());
        block.push(
            Statement::Intrinsic {
                intrinsic: Intrinsic::SyncThreads,
                arguments: vec![],
                result: None,
            },
            Span::default(),
        );
        let offset = self.expr(Scalar::U32, 2);
        let t = self.builtin(BuiltinValue::ThreadIdx(Axis::X), "thread_idx().x");
        let sum = self.binary(BinaryOp::Add, t, offset);
        let d = self.builtin(BuiltinValue::BlockDim(Axis::X), "block_dim().x");
        let (other, other_text) = self.binary(BinaryOp::Rem, sum, d);
        let other = self.cast((other, other_text.clone()), Scalar::U32, Scalar::Usize);
        let slice = self.add(Expression::SharedSlice(shared));
        let pointer = self.add(Expression::ElementPointer {
            base: slice,
            index: other.0,
        });
        let loaded = self.add(Expression::Load { pointer });
        block.push(
            Statement::LocalStore {
                local,
                value: loaded,
            },
            Span::default(),
        );
        block.push(
            Statement::Intrinsic {
                intrinsic: Intrinsic::SyncThreads,
                arguments: vec![],
                result: None,
            },
            Span::default(),
        );
        self.line(format!(
            "let {array} = shared_array::<{scalar}>({});",
            self.block
        ));
        self.line(format!("{array}[thread_idx().x as usize] = {text};"));
        self.line("sync_threads();");
        self.line(format!("{name} = {array}[{other_text} as usize];"));
        self.line("sync_threads();");
    }

    /// Scalar locals of random types, each given a value, and two local arrays.
    fn declare_locals(&mut self, block: &mut Block) {
        let count = 5 + self.rng.below(4);
        let mut wanted: Vec<Scalar> = (0..count).map(|_| *self.rng.pick(&TYPES)).collect();
        // Votes need a `u32` and a `bool`.
        wanted.push(Scalar::U32);
        wanted.push(Scalar::Bool);
        for scalar in wanted {
            let value = self.expr(scalar, 2);
            let (local, name) = self.local(scalar, "v");
            block.push(
                Statement::LocalStore {
                    local,
                    value: value.0,
                },
                Span::default(),
            );
            self.line(format!("let mut {name}: {scalar} = {};", value.1));
            self.locals.push((local, scalar, name));
        }
        for _ in 0..self.rng.below(3) {
            let scalar = *self.rng.pick(&TYPES);
            let base = self.scalar_ty(scalar);
            let ty = self.ty(TypeInner::Array { base, len: 4 });
            let name = format!("a{}", self.function.locals.len());
            let local = self.function.locals.append(LocalVariable {
                name: name.clone(),
                ty,
                span: Span::default(),
            });
            let (init, text) = self.expr(scalar, 1);
            for k in 0..4 {
                let index = self.int_literal(k, Scalar::Usize);
                let pointer = self.add(Expression::ArrayElement {
                    local,
                    index: index.0,
                });
                block.push(
                    Statement::Store {
                        pointer,
                        value: init,
                    },
                    Span::default(),
                );
            }
            self.line(format!("let mut {name} = [{text}; 4];"));
            self.arrays.push((local, scalar, name));
        }
    }

    fn device_function(&mut self, name: &str, args: [Scalar; 2], result: Scalar) -> Function {
        self.function.name = name.to_owned();
        for (k, scalar) in args.iter().enumerate() {
            let ty = self.scalar_ty(*scalar);
            let arg_name = format!("x{k}");
            self.function.arguments.push(FunctionArgument {
                name: arg_name.clone(),
                ty,
                span: Span::default(),
            });
            self.arguments.push((k as u32, *scalar, arg_name));
        }
        self.function.result = Some(self.scalar_ty(result));
        self.text = format!(
            "#[device]\nfn {name}(x0: {}, x1: {}) -> {result} {{\n",
            args[0], args[1]
        );
        let mut body = Block::new();
        self.declare_locals(&mut body);
        self.budget = 6;
        self.statements(&mut body, 4, 2);
        if self.rng.chance(50) {
            let (condition, text) = self.expr(Scalar::Bool, 2);
            let (value, value_text) = self.expr(result, 2);
            let mut accept = Block::new();
            accept.push(Statement::Return { value: Some(value) }, Span::default());
            body.push(
                Statement::If {
                    condition,
                    accept,
                    reject: Block::new(),
                },
                Span::default(),
            );
            self.line(format!("if {text} {{ return {value_text}; }}"));
        }
        let (value, text) = self.expr(result, 3);
        body.push(Statement::Return { value: Some(value) }, Span::default());
        self.line(text);
        self.text.push_str("}\n");
        let mut function = std::mem::take(&mut self.function);
        function.body = body;
        function
    }

    fn kernel(&mut self, symbol: &str) -> Function {
        self.function.name = symbol.to_owned();
        let mut signature = Vec::new();
        for (k, parameter) in PARAMETERS.iter().enumerate() {
            let (name, ty, text) = match *parameter {
                RandomParameter::Scalar(name, s) => {
                    self.arguments.push((k as u32, s, name.to_owned()));
                    (name, self.scalar_ty(s), format!("{name}: {s}"))
                }
                RandomParameter::Input(name, s) => {
                    let base = self.scalar_ty(s);
                    (
                        name,
                        self.ty(TypeInner::Slice {
                            base,
                            mutable: false,
                        }),
                        format!("{name}: &[{s}]"),
                    )
                }
                RandomParameter::Output(name, s, _) | RandomParameter::Counters(name, s) => {
                    let base = self.scalar_ty(s);
                    (
                        name,
                        self.ty(TypeInner::Slice {
                            base,
                            mutable: true,
                        }),
                        format!("{name}: &mut [{s}]"),
                    )
                }
            };
            self.function.arguments.push(FunctionArgument {
                name: name.to_owned(),
                ty,
                span: Span::default(),
            });
            signature.push(text);
        }
        self.text = format!(
            "#[kernel] // blocks of {} threads\nfn {symbol}({}) {{\n",
            self.block,
            signature.join(", ")
        );
        let mut body = Block::new();
        self.declare_locals(&mut body);
        self.budget = 12 + self.rng.below(14) as u32;
        let n = self.budget as u64;
        self.statements(&mut body, n, 3);
        self.outputs(&mut body);
        self.text.push_str("}\n");
        let mut function = std::mem::take(&mut self.function);
        function.body = body;
        function
    }

    /// `out[i * slots + slot] = value`.
    fn write_output(
        &mut self,
        block: &mut Block,
        argument: u32,
        name: &str,
        slots: usize,
        slot: usize,
        (value, text): Gen,
    ) {
        let i = self.global_index();
        let count = self.int_literal(slots as u64, Scalar::Usize);
        let base = self.binary(BinaryOp::Mul, i, count);
        let offset = self.int_literal(slot as u64, Scalar::Usize);
        let (index, _) = self.binary(BinaryOp::Add, base, offset);
        let slice = self.add(Expression::FunctionArgument(argument));
        let pointer = self.add(Expression::ElementPointer { base: slice, index });
        block.push(Statement::Store { pointer, value }, Span::default());
        self.line(format!(
            "{name}[global_index() * {slots} + {slot}] = {text};"
        ));
    }

    fn outputs(&mut self, block: &mut Block) {
        self.uniform = false;
        let locals = self.locals.clone();
        let (mut ints, mut f32s, mut f64s) = (0, 0, 0);
        for (local, scalar, name) in locals {
            let value = (self.add(Expression::LocalLoad(local)), name);
            match scalar {
                Scalar::F32 if f32s < F32_SLOTS => {
                    self.write_output(block, 16, "out_f32", F32_SLOTS, f32s, value);
                    f32s += 1;
                }
                Scalar::F64 if f64s < F64_SLOTS => {
                    self.write_output(block, 17, "out_f64", F64_SLOTS, f64s, value);
                    f64s += 1;
                }
                s if (s.is_integer() || s == Scalar::Bool) && ints < INT_SLOTS => {
                    let value = self.cast(value, s, Scalar::I64);
                    self.write_output(block, 15, "out_int", INT_SLOTS, ints, value);
                    ints += 1;
                }
                _ => {}
            }
        }
        while ints < INT_SLOTS {
            let scalar = *self.rng.pick(&TYPES);
            let e = self.expr(scalar, 3);
            let value = self.cast(e, scalar, Scalar::I64);
            self.write_output(block, 15, "out_int", INT_SLOTS, ints, value);
            ints += 1;
        }
        while f32s < F32_SLOTS {
            let value = self.expr(Scalar::F32, 3);
            self.write_output(block, 16, "out_f32", F32_SLOTS, f32s, value);
            f32s += 1;
        }
        while f64s < F64_SLOTS {
            let value = self.expr(Scalar::F64, 3);
            self.write_output(block, 17, "out_f64", F64_SLOTS, f64s, value);
            f64s += 1;
        }
        for slot in 0..APPROX_SLOTS {
            for (scalar, argument, name) in [
                (Scalar::F32, 18u32, "approx_f32"),
                (Scalar::F64, 19, "approx_f64"),
            ] {
                let function = *self.rng.pick(&APPROXIMATE);
                let (x, a) = self.expr(scalar, 2);
                let extra = match function.extra_arguments() {
                    1 => Some(self.expr(function.argument(scalar), 1)),
                    _ => None,
                };
                let handle = self.add(Expression::Math {
                    function,
                    argument: x,
                    arg1: extra.as_ref().map(|e| e.0),
                    arg2: None,
                });
                let text = match &extra {
                    Some((_, b)) => format!("{a}.{}({b})", function.name()),
                    None => format!("{a}.{}()", function.name()),
                };
                self.write_output(block, argument, name, APPROX_SLOTS, slot, (handle, text));
                if scalar == Scalar::F32 {
                    self.approx_f32[slot] = Some(function);
                } else {
                    self.approx_f64[slot] = Some(function);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn random_kernels_validate() {
        for seed in 0..200 {
            let kernel = random_kernel(seed);
            if let Err(error) = cudajit_core::valid::validate(&kernel.module) {
                panic!("seed {seed}: {error}\n{}", kernel.source);
            }
        }
    }

    #[test]
    fn generation_is_deterministic() {
        assert_eq!(random_kernel(7).source, random_kernel(7).source);
        assert_ne!(random_kernel(7).source, random_kernel(8).source);
    }
}
