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
    // Integer methods with Rust's exact semantics (`int_methods` in each back end).
    WrappingAdd,
    WrappingSub,
    WrappingMul,
    WrappingNeg,
    WrappingShl,
    WrappingShr,
    SaturatingAdd,
    SaturatingSub,
    SaturatingMul,
    RotateLeft,
    RotateRight,
    ReverseBits,
    SwapBytes,
    Pow,
    AbsDiff,
    /// `x.div_ceil(y)` of an unsigned integer: the quotient rounded up.
    DivCeil,
    // Integer and float methods.
    Clamp,
    Signum,
    DivEuclid,
    RemEuclid,
    // Float methods.
    ExpM1,
    Ln1p,
    Fract,
    /// `x.to_bits()` of a float: its bits as the unsigned integer of its width.
    ToBits,
    /// `f32::from_bits(u)` (the float type named): the float with the bits of an unsigned
    /// integer of its width. An associated function only, so not in the name table.
    FromBits(Scalar),
}

use MathFunction::*;

/// Every function with its Rust method name.
const NAMES: [(MathFunction, &str); 67] = [
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
    (WrappingAdd, "wrapping_add"),
    (WrappingSub, "wrapping_sub"),
    (WrappingMul, "wrapping_mul"),
    (WrappingNeg, "wrapping_neg"),
    (WrappingShl, "wrapping_shl"),
    (WrappingShr, "wrapping_shr"),
    (SaturatingAdd, "saturating_add"),
    (SaturatingSub, "saturating_sub"),
    (SaturatingMul, "saturating_mul"),
    (RotateLeft, "rotate_left"),
    (RotateRight, "rotate_right"),
    (ReverseBits, "reverse_bits"),
    (SwapBytes, "swap_bytes"),
    (Pow, "pow"),
    (AbsDiff, "abs_diff"),
    (DivCeil, "div_ceil"),
    (Clamp, "clamp"),
    (Signum, "signum"),
    (DivEuclid, "div_euclid"),
    (RemEuclid, "rem_euclid"),
    (ExpM1, "exp_m1"),
    (Ln1p, "ln_1p"),
    (Fract, "fract"),
    (ToBits, "to_bits"),
];

impl MathFunction {
    /// The function called `name` as a method.
    pub fn from_name(name: &str) -> Option<MathFunction> {
        NAMES.iter().find(|(_, n)| *n == name).map(|(f, _)| *f)
    }

    /// The Rust method name.
    pub fn name(self) -> &'static str {
        if let FromBits(_) = self {
            return "from_bits";
        }
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
            MulAdd | Clamp => 2,
            Powf | Powi | Copysign | Hypot | Atan2 | Min | Max | FastDiv => 1,
            WrappingAdd | WrappingSub | WrappingMul | WrappingShl | WrappingShr | SaturatingAdd
            | SaturatingSub | SaturatingMul | RotateLeft | RotateRight | Pow | AbsDiff
            | DivCeil | DivEuclid | RemEuclid => 1,
            _ => 0,
        }
    }

    /// Whether the function applies to receivers of type `ty`.
    pub fn applies_to(self, ty: Scalar) -> bool {
        match self {
            Abs => ty.is_wide_float() || ty.is_signed(),
            Min | Max => ty.is_wide_float() || ty.is_integer(),
            CountOnes | LeadingZeros | TrailingZeros => ty.is_integer(),
            WrappingAdd | WrappingSub | WrappingMul | WrappingNeg | WrappingShl | WrappingShr
            | SaturatingAdd | SaturatingSub | SaturatingMul | RotateLeft | RotateRight
            | ReverseBits | SwapBytes | Pow | AbsDiff => ty.is_integer(),
            // Stable Rust has `div_ceil` on unsigned integers only.
            DivCeil => ty.is_integer() && !ty.is_signed(),
            Clamp | DivEuclid | RemEuclid => ty.is_integer() || ty.is_wide_float(),
            // Rust has `signum` on signed integers and floats, not on unsigned integers.
            Signum => ty.is_signed() || ty.is_wide_float(),
            ToBits => ty.is_float(),
            FromBits(float) => Some(ty) == bits_type(float),
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
            AbsDiff => ty.to_unsigned(),
            ToBits => bits_type(ty).unwrap_or(ty),
            FromBits(float) => float,
            _ => ty,
        }
    }

    /// The type of extra argument `index` for a receiver of type `ty`.
    pub fn argument(self, ty: Scalar) -> Scalar {
        match self {
            Powi => Scalar::I32,
            // Rust's shift amounts, rotations and integer exponents are `u32`s.
            WrappingShl | WrappingShr | RotateLeft | RotateRight | Pow => Scalar::U32,
            _ => ty,
        }
    }
}

/// The unsigned integer holding a float's bits (`u16` for `f16` and `bf16`): what
/// `to_bits` returns and `from_bits` takes.
pub fn bits_type(float: Scalar) -> Option<Scalar> {
    match float {
        Scalar::F16 | Scalar::BF16 => Some(Scalar::U16),
        Scalar::F32 => Some(Scalar::U32),
        Scalar::F64 => Some(Scalar::U64),
        _ => None,
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
        assert_eq!(MathFunction::from_name("from_bits"), None);
        assert_eq!(MathFunction::FromBits(Scalar::F32).name(), "from_bits");
    }

    #[test]
    fn bit_casts_keep_the_width() {
        assert_eq!(ToBits.result(Scalar::BF16), Scalar::U16);
        assert_eq!(ToBits.result(Scalar::F64), Scalar::U64);
        assert!(FromBits(Scalar::F32).applies_to(Scalar::U32));
        assert!(!FromBits(Scalar::F32).applies_to(Scalar::I32));
        assert!(!FromBits(Scalar::F64).applies_to(Scalar::Usize));
        assert_eq!(FromBits(Scalar::F16).result(Scalar::U16), Scalar::F16);
    }
}
