//! Random expressions: literals, casts, loads, leaves and expression trees over every scalar
//! type, free of what the GPU and the simulator may compute differently.

use cudajit_core::ast::{Axis, BinaryOp, UnaryOp};
use cudajit_core::ir::{BuiltinValue, Expression, Handle, Literal, LocalVariable};
use cudajit_core::math::MathFunction;
use cudajit_core::Scalar;

use super::*;

impl Generator<'_> {
    pub(crate) fn literal(&mut self, scalar: Scalar) -> Gen {
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

    pub(crate) fn int_literal(&mut self, value: u64, scalar: Scalar) -> Gen {
        let bits = cudajit_sim::canonical_bits(value, scalar);
        let handle = self.add(Expression::Literal(Literal::Int { bits, ty: scalar }));
        let shown = if scalar.is_signed() {
            i128::from(cudajit_sim::widen_bits(bits, scalar) as i64)
        } else {
            i128::from(bits)
        };
        (handle, format!("{shown}{scalar}"))
    }

    pub(crate) fn cast(&mut self, (value, text): Gen, from: Scalar, to: Scalar) -> Gen {
        if from == to {
            return (value, text);
        }
        (
            self.add(Expression::Cast { value, to }),
            format!("({text} as {to})"),
        )
    }

    pub(crate) fn binary(&mut self, op: BinaryOp, (left, l): Gen, (right, r): Gen) -> Gen {
        (
            self.add(Expression::Binary { op, left, right }),
            format!("({l} {} {r})", op.symbol()),
        )
    }

    pub(crate) fn builtin(&mut self, value: BuiltinValue, text: &str) -> Gen {
        (self.add(Expression::Builtin(value)), text.to_owned())
    }

    /// `global_index()` as `usize`.
    pub(crate) fn global_index(&mut self) -> Gen {
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
    pub(crate) fn element(&mut self, argument: u32, name: &str, index: Gen) -> Gen {
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

    pub(crate) fn load(&mut self, (pointer, text): Gen) -> Gen {
        (self.add(Expression::Load { pointer }), text)
    }

    /// A value of `scalar` with no operator on top.
    pub(crate) fn leaf(&mut self, scalar: Scalar, depth: u32) -> Gen {
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
    pub(crate) fn array_element(
        &mut self,
        local: Handle<LocalVariable>,
        name: &str,
        depth: u32,
    ) -> Gen {
        let index = self.expr(Scalar::Usize, depth);
        let three = self.int_literal(3, Scalar::Usize);
        let (index, text) = self.binary(BinaryOp::BitAnd, index, three);
        (
            self.add(Expression::ArrayElement { local, index }),
            format!("{name}[{text}]"),
        )
    }

    /// A divisor of `scalar` that is never 0, nor -1 for signed types.
    pub(crate) fn divisor(&mut self, scalar: Scalar, depth: u32) -> Gen {
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
    pub(crate) fn expr(&mut self, scalar: Scalar, depth: u32) -> Gen {
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
}
