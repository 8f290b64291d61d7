//! Writing math methods: libdevice's `__nv_*` functions for the floating-point ones, LLVM
//! intrinsics and selects for the integer ones; the methods Rust defines exactly are in
//! `int_methods` and `float_methods`.

use cudajit_core::ir::{Expression, Handle};
use cudajit_core::math::MathFunction;
use cudajit_core::Scalar;

use super::function::{WriteError, Writer};
use super::types;

impl Writer<'_> {
    /// A scalar method: libdevice for floating-point functions, LLVM intrinsics and
    /// selects for the integer ones.
    pub(super) fn math(
        &mut self,
        function: MathFunction,
        argument: Handle<Expression>,
        extra: &[Handle<Expression>],
    ) -> Result<String, WriteError> {
        let s = self.scalar_of(argument)?;
        let ty = types::scalar(s);
        let x = self.expr(argument)?.scalar();
        let mut rest = Vec::new();
        let mut values = Vec::new();
        for arg in extra {
            let arg_ty = self.scalar_of(*arg)?;
            let value = self.expr(*arg)?.scalar();
            rest.push(format!("{} {value}", types::scalar(arg_ty)));
            values.push(value);
        }
        match function {
            MathFunction::ToBits => {
                let bits = function.result(s);
                return Ok(self.bit_cast(s, bits, &x));
            }
            MathFunction::FromBits(float) => return Ok(self.bit_cast(s, float, &x)),
            _ => {}
        }
        let method = if s.is_integer() {
            self.int_method(function, s, &x, &values)
        } else {
            self.float_method(function, s, &x, &values)
        };
        if let Some(value) = method {
            return Ok(value);
        }
        let int = s.is_integer();
        Ok(match function {
            MathFunction::Recip => self.value(format!("fdiv {ty} 1.0, {x}")),
            MathFunction::IsNan => self.value(format!("fcmp uno {ty} {x}, {x}")),
            MathFunction::Abs if int => {
                // PTX `abs`, opaque to LLVM: `i32::MIN.abs()` wraps to `MIN` in Rust, but
                // LLVM 7 treats an `abs` it recognises as never negative (C's `abs(INT_MIN)`
                // is undefined) and folds later comparisons and remainders on that basis,
                // as the CPU simulator's differential tests found.
                let (wide, asm, constraint) = if s.bits() == 64 {
                    (x.clone(), "abs.s64", "l")
                } else if s.bits() == 32 {
                    (x.clone(), "abs.s32", "r")
                } else {
                    (self.value(format!("sext {ty} {x} to i32")), "abs.s32", "r")
                };
                let wide_ty = if s.bits() == 64 { "i64" } else { "i32" };
                let result = self.value(format!(
                    "call {wide_ty} asm \"{asm} $0, $1;\", \"={constraint},{constraint}\"({wide_ty} {wide})"
                ));
                if s.bits() < 32 {
                    self.value(format!("trunc i32 {result} to {ty}"))
                } else {
                    result
                }
            }
            MathFunction::Min | MathFunction::Max if int => {
                let predicate = match (function == MathFunction::Min, s.is_signed()) {
                    (true, true) => "slt",
                    (true, false) => "ult",
                    (false, true) => "sgt",
                    (false, false) => "ugt",
                };
                let y = rest[0]
                    .split_once(' ')
                    .map(|(_, v)| v.to_owned())
                    .unwrap_or_default();
                let pick = self.value(format!("icmp {predicate} {ty} {x}, {y}"));
                self.value(format!("select i1 {pick}, {ty} {x}, {ty} {y}"))
            }
            MathFunction::CountOnes | MathFunction::LeadingZeros | MathFunction::TrailingZeros => {
                let (name, extra_arg) = match function {
                    MathFunction::CountOnes => ("ctpop", ""),
                    MathFunction::LeadingZeros => ("ctlz", ", i1 false"),
                    _ => ("cttz", ", i1 false"),
                };
                let flag = if extra_arg.is_empty() { "" } else { ", i1" };
                self.declare(format!(
                    "declare {ty} @llvm.{name}.{ty}({ty}{flag}) nounwind readnone"
                ));
                let counted =
                    self.value(format!("call {ty} @llvm.{name}.{ty}({ty} {x}{extra_arg})"));
                self.cast(counted, s, Scalar::U32)
            }
            _ => {
                let name = libdevice_name(function, s);
                let mut params = vec![ty.to_owned()];
                params.extend(
                    rest.iter()
                        .map(|r| r.split(' ').next().unwrap_or(ty).to_owned()),
                );
                self.declare(format!(
                    "declare {ty} @{name}({}) nounwind readnone",
                    params.join(", ")
                ));
                let mut operands = vec![format!("{ty} {x}")];
                operands.extend(rest);
                self.value(format!("call {ty} @{name}({})", operands.join(", ")))
            }
        })
    }
}

/// The libdevice function implementing `function` for `ty` (`__nv_sqrtf`, `__nv_sqrt`).
pub(super) fn libdevice_name(function: MathFunction, ty: Scalar) -> String {
    let base = match function {
        MathFunction::Sqrt => "sqrt",
        MathFunction::Exp => "exp",
        MathFunction::Exp2 => "exp2",
        MathFunction::Ln => "log",
        MathFunction::Log2 => "log2",
        MathFunction::Log10 => "log10",
        MathFunction::Sin => "sin",
        MathFunction::Cos => "cos",
        MathFunction::Tan => "tan",
        MathFunction::Asin => "asin",
        MathFunction::Acos => "acos",
        MathFunction::Atan => "atan",
        MathFunction::Sinh => "sinh",
        MathFunction::Cosh => "cosh",
        MathFunction::Tanh => "tanh",
        MathFunction::Cbrt => "cbrt",
        MathFunction::Floor => "floor",
        MathFunction::Ceil => "ceil",
        MathFunction::Round => "round",
        MathFunction::Trunc => "trunc",
        MathFunction::Powf => "pow",
        MathFunction::Powi => "powi",
        MathFunction::MulAdd => "fma",
        MathFunction::Copysign => "copysign",
        MathFunction::Hypot => "hypot",
        MathFunction::Atan2 => "atan2",
        MathFunction::Abs => "fabs",
        MathFunction::Min => "fmin",
        MathFunction::Max => "fmax",
        MathFunction::Erf => "erf",
        MathFunction::Erfc => "erfc",
        MathFunction::Rsqrt => "rsqrt",
        MathFunction::FastExp => "fast_exp",
        MathFunction::FastSin => "fast_sin",
        MathFunction::FastCos => "fast_cos",
        MathFunction::FastLn => "fast_log",
        MathFunction::FastLog2 => "fast_log2",
        MathFunction::FastDiv => "fast_fdivide",
        MathFunction::ExpM1 => "expm1",
        MathFunction::Ln1p => "log1p",
        // Lowered without libdevice.
        MathFunction::Recip
        | MathFunction::IsNan
        | MathFunction::CountOnes
        | MathFunction::LeadingZeros
        | MathFunction::TrailingZeros
        | MathFunction::WrappingAdd
        | MathFunction::WrappingSub
        | MathFunction::WrappingMul
        | MathFunction::WrappingNeg
        | MathFunction::WrappingShl
        | MathFunction::WrappingShr
        | MathFunction::SaturatingAdd
        | MathFunction::SaturatingSub
        | MathFunction::SaturatingMul
        | MathFunction::RotateLeft
        | MathFunction::RotateRight
        | MathFunction::ReverseBits
        | MathFunction::SwapBytes
        | MathFunction::Pow
        | MathFunction::AbsDiff
        | MathFunction::DivCeil
        | MathFunction::Clamp
        | MathFunction::Signum
        | MathFunction::DivEuclid
        | MathFunction::RemEuclid
        | MathFunction::Fract
        | MathFunction::ToBits
        | MathFunction::FromBits(_) => "unreachable",
    };
    let suffix = if ty == Scalar::F32 { "f" } else { "" };
    format!("__nv_{base}{suffix}")
}
