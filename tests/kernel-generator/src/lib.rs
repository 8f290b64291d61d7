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
//!
//! Rooms: here the parameters, the kernel and the generator's state; `rng.rs` the seeded
//! choices, `expressions.rs` and `statements.rs` what it generates.

use cudajit_core::ast::BinaryOp;
use cudajit_core::ir::{
    Block, EntryPoint, Expression, Function, FunctionArgument, Handle, LocalVariable, LoopId,
    Module, Statement, Type, TypeInner,
};
use cudajit_core::math::MathFunction;
use cudajit_core::{Scalar, Span};

mod expressions;
mod rng;
mod statements;

pub use rng::Rng;

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
