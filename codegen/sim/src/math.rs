//! The libdevice functions of the kernel language, computed on the host.
//!
//! On the GPU, `x.sin()` calls libdevice's `__nv_sinf`, which NVIDIA documents as within a
//! few ulp of the correctly rounded result (CUDA C++ Programming Guide, "Mathematical
//! Functions", tables of maximum ulp error). The simulator computes the same function with
//! Rust's standard library (the platform's C math library, within 1 ulp for these
//! functions on glibc) or the `libm` crate, so a result may differ from the GPU's in its last
//! bits, by at most the sum of both errors. [`ulp_bound`] gives the bound the differential
//! tests allow per function; `docs/simulator.md` lists them. Functions that IEEE-754 defines
//! exactly (`sqrt`, `floor`, `ceil`, `round`, `trunc`, `abs`, `copysign`, `mul_add`,
//! `min`, `max`, `recip`, `is_nan`, `fract`, `signum`, `clamp`, `div_euclid`,
//! `rem_euclid`, `to_bits`, `from_bits`) are exact on both sides, and so is `powi`, which
//! libdevice computes by repeated correctly rounded multiplication and the simulator
//! reproduces step by step.
//!
//! The `fast_*` intrinsics (`__expf`, `__sinf`, ... on the GPU) are computed here with the
//! accurate functions: the GPU's hardware approximations are far less accurate (`__sinf`
//! has an absolute error of 2^-21.41 in [-π, π], `__expf` 2 + floor(|1.173 x|) ulp).

use cudajit_core::math::MathFunction;
use cudajit_core::Scalar;

use super::value::{BinaryFn, CanonicalNan, RegisterValue, TernaryFn, UnaryFn};

/// A float math function resolved for its type, by arity.
#[derive(Clone, Copy)]
pub(crate) enum FloatMath {
    Unary(UnaryFn),
    Binary(BinaryFn),
    Ternary(TernaryFn),
}

/// The float function `function` for `scalar` (`f32` or `f64`).
pub(crate) fn float_math(function: MathFunction, scalar: Scalar) -> Option<FloatMath> {
    match scalar {
        Scalar::F32 => f32_math(function),
        Scalar::F64 => f64_math(function),
        _ => None,
    }
}

/// A function of one float whose NaN results are the GPU's canonical NaN.
macro_rules! unary {
    ($t:ty, |$x:ident| $body:expr) => {
        FloatMath::Unary(|bits| {
            let $x = <$t>::from_register(bits);
            RegisterValue::to_register(CanonicalNan::canonical($body))
        })
    };
}

/// A function of two arguments whose NaN results are the GPU's canonical NaN.
macro_rules! binary {
    ($t:ty, $a:ty, |$x:ident, $y:ident| $body:expr) => {
        FloatMath::Binary(|bits, other| {
            let $x = <$t>::from_register(bits);
            let $y = <$a>::from_register(other);
            RegisterValue::to_register(CanonicalNan::canonical($body))
        })
    };
}

/// `abs` and `copysign`, which only move sign bits (of NaNs too).
macro_rules! bitwise {
    ($t:ty, |$x:ident| $body:expr) => {
        FloatMath::Unary(|bits| {
            let $x = <$t>::from_register(bits);
            RegisterValue::to_register($body)
        })
    };
    ($t:ty, |$x:ident, $y:ident| $body:expr) => {
        FloatMath::Binary(|bits, other| {
            let $x = <$t>::from_register(bits);
            let $y = <$t>::from_register(other);
            RegisterValue::to_register($body)
        })
    };
}

/// `x.powi(n)` exactly as libdevice's `__nv_powif`/`__nv_powi` compute it (read from
/// `libdevice.10.bc`): binary exponentiation over `|n|` with one correctly rounded
/// multiplication per step, then `1 / r` for a negative `n`. Bit-identical to the GPU.
fn powi<T: Copy>(x: T, n: i32, one: T, mul: fn(T, T) -> T, div: fn(T, T) -> T) -> T {
    let mut e = n.unsigned_abs();
    let mut base = x;
    let mut r = one;
    loop {
        if e & 1 != 0 {
            r = mul(r, base);
        }
        e >>= 1;
        if e == 0 {
            return if n < 0 { div(one, r) } else { r };
        }
        base = mul(base, base);
    }
}

/// IEEE-754 `minNum` as PTX `min.f32`/`min.f64` computes it: a NaN operand is ignored, and
/// `-0.0` is smaller than `+0.0`.
fn minimum<T: Copy + PartialOrd>(a: T, b: T, a_nan: bool, b_nan: bool, a_negative: bool) -> T {
    if a_nan {
        b
    } else if b_nan || a < b {
        a
    } else if b < a {
        b
    } else if a_negative {
        a
    } else {
        b
    }
}

fn maximum<T: Copy + PartialOrd>(a: T, b: T, a_nan: bool, b_nan: bool, a_negative: bool) -> T {
    if a_nan {
        b
    } else if b_nan || a > b {
        a
    } else if b > a || a_negative {
        b
    } else {
        a
    }
}

fn f32_math(function: MathFunction) -> Option<FloatMath> {
    use MathFunction as M;
    Some(match function {
        M::Sqrt => unary!(f32, |x| x.sqrt()),
        M::Exp | M::FastExp => unary!(f32, |x| x.exp()),
        M::Exp2 => unary!(f32, |x| x.exp2()),
        M::Ln | M::FastLn => unary!(f32, |x| x.ln()),
        M::Log2 | M::FastLog2 => unary!(f32, |x| x.log2()),
        M::Log10 => unary!(f32, |x| x.log10()),
        M::Sin | M::FastSin => unary!(f32, |x| x.sin()),
        M::Cos | M::FastCos => unary!(f32, |x| x.cos()),
        M::Tan => unary!(f32, |x| x.tan()),
        M::Asin => unary!(f32, |x| x.asin()),
        M::Acos => unary!(f32, |x| x.acos()),
        M::Atan => unary!(f32, |x| x.atan()),
        M::Sinh => unary!(f32, |x| x.sinh()),
        M::Cosh => unary!(f32, |x| x.cosh()),
        M::Tanh => unary!(f32, |x| x.tanh()),
        M::Cbrt => unary!(f32, |x| x.cbrt()),
        M::Floor => unary!(f32, |x| x.floor()),
        M::Ceil => unary!(f32, |x| x.ceil()),
        M::Round => unary!(f32, |x| x.round()),
        M::Trunc => unary!(f32, |x| x.trunc()),
        M::Recip => unary!(f32, |x| 1.0 / x),
        M::Abs => bitwise!(f32, |x| x.abs()),
        M::Erf => unary!(f32, |x| libm::erff(x)),
        M::Erfc => unary!(f32, |x| libm::erfcf(x)),
        // Computed in double precision, then rounded once: the correctly rounded result in
        // all but rare cases.
        M::Rsqrt => unary!(f32, |x| (1.0 / f64::from(x).sqrt()) as f32),
        M::Powf => binary!(f32, f32, |x, y| x.powf(y)),
        M::Powi => binary!(f32, i32, |x, n| powi(x, n, 1.0, |a, b| a * b, |a, b| a / b)),
        M::Copysign => bitwise!(f32, |x, y| x.copysign(y)),
        M::Hypot => binary!(f32, f32, |x, y| x.hypot(y)),
        M::Atan2 => binary!(f32, f32, |x, y| x.atan2(y)),
        M::FastDiv => binary!(f32, f32, |x, y| x / y),
        M::Min => binary!(f32, f32, |x, y| minimum(
            x,
            y,
            x.is_nan(),
            y.is_nan(),
            x.is_sign_negative()
        )),
        M::Max => binary!(f32, f32, |x, y| maximum(
            x,
            y,
            x.is_nan(),
            y.is_nan(),
            x.is_sign_negative()
        )),
        M::MulAdd => FloatMath::Ternary(|x, a, b| {
            f32::from_register(x)
                .mul_add(f32::from_register(a), f32::from_register(b))
                .canonical()
                .to_register()
        }),
        M::IsNan => FloatMath::Unary(|x| u64::from(f32::from_register(x).is_nan())),
        M::ExpM1 => unary!(f32, |x| x.exp_m1()),
        M::Ln1p => unary!(f32, |x| x.ln_1p()),
        M::Fract => unary!(f32, |x| x.fract()),
        M::DivEuclid => binary!(f32, f32, |x, y| x.div_euclid(y)),
        M::RemEuclid => binary!(f32, f32, |x, y| x.rem_euclid(y)),
        // Rust's NaN (`f32::NAN`, not the GPU's canonical one), which the writer returns too.
        M::Signum => bitwise!(f32, |x| x.signum()),
        // Rust's `clamp` without its assertion: compares and selects, so a NaN `x` keeps
        // its bits.
        M::Clamp => FloatMath::Ternary(|x, min, max| {
            let (mut v, min, max) = (
                f32::from_register(x),
                f32::from_register(min),
                f32::from_register(max),
            );
            if v < min {
                v = min;
            }
            if v > max {
                v = max;
            }
            v.to_register()
        }),
        M::CountOnes
        | M::LeadingZeros
        | M::TrailingZeros
        | M::WrappingAdd
        | M::WrappingSub
        | M::WrappingMul
        | M::WrappingNeg
        | M::WrappingShl
        | M::WrappingShr
        | M::SaturatingAdd
        | M::SaturatingSub
        | M::SaturatingMul
        | M::RotateLeft
        | M::RotateRight
        | M::ReverseBits
        | M::SwapBytes
        | M::Pow
        | M::AbsDiff
        | M::DivCeil
        // Bit casts are register moves (`program`).
        | M::ToBits
        | M::FromBits(_) => return None,
    })
}

fn f64_math(function: MathFunction) -> Option<FloatMath> {
    use MathFunction as M;
    Some(match function {
        M::Sqrt => unary!(f64, |x| x.sqrt()),
        M::Exp => unary!(f64, |x| x.exp()),
        M::Exp2 => unary!(f64, |x| x.exp2()),
        M::Ln => unary!(f64, |x| x.ln()),
        M::Log2 => unary!(f64, |x| x.log2()),
        M::Log10 => unary!(f64, |x| x.log10()),
        M::Sin => unary!(f64, |x| x.sin()),
        M::Cos => unary!(f64, |x| x.cos()),
        M::Tan => unary!(f64, |x| x.tan()),
        M::Asin => unary!(f64, |x| x.asin()),
        M::Acos => unary!(f64, |x| x.acos()),
        M::Atan => unary!(f64, |x| x.atan()),
        M::Sinh => unary!(f64, |x| x.sinh()),
        M::Cosh => unary!(f64, |x| x.cosh()),
        M::Tanh => unary!(f64, |x| x.tanh()),
        M::Cbrt => unary!(f64, |x| x.cbrt()),
        M::Floor => unary!(f64, |x| x.floor()),
        M::Ceil => unary!(f64, |x| x.ceil()),
        M::Round => unary!(f64, |x| x.round()),
        M::Trunc => unary!(f64, |x| x.trunc()),
        M::Recip => unary!(f64, |x| 1.0 / x),
        M::Abs => bitwise!(f64, |x| x.abs()),
        M::Erf => unary!(f64, |x| libm::erf(x)),
        M::Erfc => unary!(f64, |x| libm::erfc(x)),
        M::Rsqrt => unary!(f64, |x| 1.0 / x.sqrt()),
        M::Powf => binary!(f64, f64, |x, y| x.powf(y)),
        M::Powi => binary!(f64, i32, |x, n| powi(x, n, 1.0, |a, b| a * b, |a, b| a / b)),
        M::Copysign => bitwise!(f64, |x, y| x.copysign(y)),
        M::Hypot => binary!(f64, f64, |x, y| x.hypot(y)),
        M::Atan2 => binary!(f64, f64, |x, y| x.atan2(y)),
        M::Min => binary!(f64, f64, |x, y| minimum(
            x,
            y,
            x.is_nan(),
            y.is_nan(),
            x.is_sign_negative()
        )),
        M::Max => binary!(f64, f64, |x, y| maximum(
            x,
            y,
            x.is_nan(),
            y.is_nan(),
            x.is_sign_negative()
        )),
        M::MulAdd => FloatMath::Ternary(|x, a, b| {
            f64::from_register(x)
                .mul_add(f64::from_register(a), f64::from_register(b))
                .canonical()
                .to_register()
        }),
        M::IsNan => FloatMath::Unary(|x| u64::from(f64::from_register(x).is_nan())),
        M::ExpM1 => unary!(f64, |x| x.exp_m1()),
        M::Ln1p => unary!(f64, |x| x.ln_1p()),
        M::Fract => unary!(f64, |x| x.fract()),
        M::DivEuclid => binary!(f64, f64, |x, y| x.div_euclid(y)),
        M::RemEuclid => binary!(f64, f64, |x, y| x.rem_euclid(y)),
        // Rust's NaN (`f64::NAN`, not the GPU's canonical one), which the writer returns too.
        M::Signum => bitwise!(f64, |x| x.signum()),
        // Rust's `clamp` without its assertion: compares and selects, so a NaN `x` keeps
        // its bits.
        M::Clamp => FloatMath::Ternary(|x, min, max| {
            let (mut v, min, max) = (
                f64::from_register(x),
                f64::from_register(min),
                f64::from_register(max),
            );
            if v < min {
                v = min;
            }
            if v > max {
                v = max;
            }
            v.to_register()
        }),
        // The approximate intrinsics exist for `f32` only (the validator says so).
        M::FastExp
        | M::FastSin
        | M::FastCos
        | M::FastLn
        | M::FastLog2
        | M::FastDiv
        | M::CountOnes
        | M::LeadingZeros
        | M::TrailingZeros
        | M::WrappingAdd
        | M::WrappingSub
        | M::WrappingMul
        | M::WrappingNeg
        | M::WrappingShl
        | M::WrappingShr
        | M::SaturatingAdd
        | M::SaturatingSub
        | M::SaturatingMul
        | M::RotateLeft
        | M::RotateRight
        | M::ReverseBits
        | M::SwapBytes
        | M::Pow
        | M::AbsDiff
        | M::DivCeil
        // Bit casts are register moves (`program`).
        | M::ToBits
        | M::FromBits(_) => return None,
    })
}

/// The most ulp by which the GPU's result of `function` on `scalar` may differ from the
/// simulator's: libdevice's documented maximum error (CUDA 13 Programming Guide) plus one
/// for the host library's. `0` for exact functions; `None` for the `fast_*` intrinsics,
/// whose error is absolute or grows with the argument (see the module documentation).
pub fn ulp_bound(function: MathFunction, scalar: Scalar) -> Option<u32> {
    use MathFunction as M;
    let single = scalar == Scalar::F32;
    let libdevice = match function {
        M::Sqrt
        | M::Powi
        | M::Floor
        | M::Ceil
        | M::Round
        | M::Trunc
        | M::Recip
        | M::Abs
        | M::Copysign
        | M::MulAdd
        | M::Min
        | M::Max
        | M::IsNan
        | M::CountOnes
        | M::LeadingZeros
        | M::TrailingZeros
        | M::Fract
        | M::Signum
        | M::Clamp
        | M::DivEuclid
        | M::RemEuclid
        | M::ToBits
        | M::FromBits(_)
        | M::WrappingAdd
        | M::WrappingSub
        | M::WrappingMul
        | M::WrappingNeg
        | M::WrappingShl
        | M::WrappingShr
        | M::SaturatingAdd
        | M::SaturatingSub
        | M::SaturatingMul
        | M::RotateLeft
        | M::RotateRight
        | M::ReverseBits
        | M::SwapBytes
        | M::Pow
        | M::AbsDiff
        | M::DivCeil => return Some(0),
        M::FastExp | M::FastSin | M::FastCos | M::FastLn | M::FastLog2 | M::FastDiv => return None,
        M::Exp | M::Exp2 => {
            if single {
                2
            } else {
                1
            }
        }
        M::Ln | M::Log2 | M::Log10 | M::Cbrt | M::Tanh | M::Cosh => {
            if single {
                2
            } else {
                1
            }
        }
        // CUDA's `expm1f`/`log1pf` and `expm1`/`log1p`: 1 ulp.
        M::ExpM1 | M::Ln1p => 1,
        M::Sin | M::Cos | M::Asin | M::Acos | M::Atan | M::Rsqrt | M::Erf => 2,
        M::Sinh | M::Hypot | M::Atan2 => 3,
        M::Tan | M::Powf => 4,
        M::Erfc => 5,
    };
    Some(libdevice + 1)
}

/// The distance in units in the last place between two `f32`s (0 for equal values and for
/// two NaNs, `u64::MAX` for a NaN against a number).
pub fn ulp_distance_f32(a: f32, b: f32) -> u64 {
    if a.is_nan() || b.is_nan() {
        return if a.is_nan() && b.is_nan() {
            0
        } else {
            u64::MAX
        };
    }
    let key = |v: f32| {
        let bits = v.to_bits() as i32;
        i64::from(if bits < 0 { i32::MIN - bits } else { bits })
    };
    key(a).abs_diff(key(b))
}

/// [`ulp_distance_f32`] for `f64`s.
pub fn ulp_distance_f64(a: f64, b: f64) -> u64 {
    if a.is_nan() || b.is_nan() {
        return if a.is_nan() && b.is_nan() {
            0
        } else {
            u64::MAX
        };
    }
    let key = |v: f64| {
        let bits = v.to_bits() as i64;
        i128::from(if bits < 0 { i64::MIN - bits } else { bits })
    };
    u64::try_from(key(a).abs_diff(key(b))).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f32_binary(function: MathFunction, a: f32, b: f32) -> f32 {
        let Some(FloatMath::Binary(f)) = float_math(function, Scalar::F32) else {
            panic!("not binary");
        };
        f32::from_register(f(a.to_register(), b.to_register()))
    }

    #[test]
    fn min_and_max_ignore_nan_and_order_zeros() {
        assert_eq!(f32_binary(MathFunction::Min, f32::NAN, 2.0), 2.0);
        assert_eq!(f32_binary(MathFunction::Max, 1.0, f32::NAN), 1.0);
        assert!(f32_binary(MathFunction::Min, 0.0, -0.0).is_sign_negative());
        assert!(f32_binary(MathFunction::Max, -0.0, 0.0).is_sign_positive());
    }

    #[test]
    fn ulp_distances() {
        assert_eq!(ulp_distance_f32(1.0, 1.0), 0);
        assert_eq!(
            ulp_distance_f32(1.0, f32::from_bits(1.0f32.to_bits() + 2)),
            2
        );
        assert_eq!(ulp_distance_f32(-0.0, 0.0), 0);
        assert_eq!(ulp_distance_f32(f32::from_bits(1), -f32::from_bits(1)), 2);
        assert_eq!(ulp_distance_f64(f64::NAN, f64::NAN), 0);
        assert_eq!(ulp_distance_f64(f64::NAN, 1.0), u64::MAX);
    }
}
