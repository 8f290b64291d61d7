//! The methods of scalar types that kernels may call (`x.sqrt()`, `a.min(b)`,
//! `n.count_ones()`), shared by the macro (which accepts them) and lowering.

use serde::{Deserialize, Serialize};

use crate::Scalar;

/// A scalar method or associated function with a device implementation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum MathFunction {
    Sqrt,
    Exp,
    Exp2,
    Ln,
    Log2,
    Log10,
    Sin,
    Cos,
    Tan,
    Asin,
    Acos,
    Atan,
    Sinh,
    Cosh,
    Tanh,
    Cbrt,
    Floor,
    Ceil,
    Round,
    Trunc,
    Recip,
    Powf,
    Powi,
    MulAdd,
    Copysign,
    Hypot,
    Atan2,
    IsNan,
    Abs,
    Min,
    Max,
    CountOnes,
    LeadingZeros,
    TrailingZeros,
    Erf,
    Erfc,
    Rsqrt,
    FastExp,
    FastSin,
    FastCos,
    FastLn,
    FastLog2,
    FastDiv,
}

use MathFunction::*;

/// Every function with its Rust method name.
const NAMES: [(MathFunction, &str); 43] = [
    (Erf, "erf"),
    (Erfc, "erfc"),
    (Rsqrt, "rsqrt"),
    (FastExp, "fast_exp"),
    (FastSin, "fast_sin"),
    (FastCos, "fast_cos"),
    (FastLn, "fast_ln"),
    (FastLog2, "fast_log2"),
    (FastDiv, "fast_div"),
    (Sqrt, "sqrt"),
    (Exp, "exp"),
    (Exp2, "exp2"),
    (Ln, "ln"),
    (Log2, "log2"),
    (Log10, "log10"),
    (Sin, "sin"),
    (Cos, "cos"),
    (Tan, "tan"),
    (Asin, "asin"),
    (Acos, "acos"),
    (Atan, "atan"),
    (Sinh, "sinh"),
    (Cosh, "cosh"),
    (Tanh, "tanh"),
    (Cbrt, "cbrt"),
    (Floor, "floor"),
    (Ceil, "ceil"),
    (Round, "round"),
    (Trunc, "trunc"),
    (Recip, "recip"),
    (Powf, "powf"),
    (Powi, "powi"),
    (MulAdd, "mul_add"),
    (Copysign, "copysign"),
    (Hypot, "hypot"),
    (Atan2, "atan2"),
    (IsNan, "is_nan"),
    (Abs, "abs"),
    (Min, "min"),
    (Max, "max"),
    (CountOnes, "count_ones"),
    (LeadingZeros, "leading_zeros"),
    (TrailingZeros, "trailing_zeros"),
];

impl MathFunction {
    /// The function called `name` as a method.
    pub fn from_name(name: &str) -> Option<MathFunction> {
        NAMES.iter().find(|(_, n)| *n == name).map(|(f, _)| *f)
    }

    /// The Rust method name.
    pub fn name(self) -> &'static str {
        NAMES
            .iter()
            .find(|(f, _)| *f == self)
            .map(|(_, n)| *n)
            .unwrap_or("?")
    }

    /// All method names, for messages.
    pub fn all_names() -> impl Iterator<Item = &'static str> {
        NAMES.iter().map(|(_, n)| *n)
    }

    /// Arguments besides the receiver.
    pub fn extra_arguments(self) -> usize {
        match self {
            MulAdd => 2,
            Powf | Powi | Copysign | Hypot | Atan2 | Min | Max | FastDiv => 1,
            _ => 0,
        }
    }

    /// Whether the function applies to receivers of type `ty`.
    pub fn applies_to(self, ty: Scalar) -> bool {
        match self {
            Abs => ty.is_wide_float() || ty.is_signed(),
            Min | Max => ty.is_wide_float() || ty.is_integer(),
            CountOnes | LeadingZeros | TrailingZeros => ty.is_integer(),
            // The approximate hardware versions exist for `f32` only.
            FastExp | FastSin | FastCos | FastLn | FastLog2 | FastDiv => ty == Scalar::F32,
            _ => ty.is_wide_float(),
        }
    }

    /// The result type for a receiver of type `ty`.
    pub fn result(self, ty: Scalar) -> Scalar {
        match self {
            IsNan => Scalar::Bool,
            CountOnes | LeadingZeros | TrailingZeros => Scalar::U32,
            _ => ty,
        }
    }

    /// The type of extra argument `index` for a receiver of type `ty`.
    pub fn argument(self, ty: Scalar) -> Scalar {
        match self {
            Powi => Scalar::I32,
            _ => ty,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for (function, name) in NAMES {
            assert_eq!(MathFunction::from_name(name), Some(function));
            assert_eq!(function.name(), name);
        }
        assert_eq!(MathFunction::from_name("frobnicate"), None);
    }
}
