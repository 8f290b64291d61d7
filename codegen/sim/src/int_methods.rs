//! The integer methods of the kernel language that Rust's standard library defines
//! exactly (`wrapping_*`, `saturating_*`, rotations, `pow`, `abs_diff`, `clamp`, `signum`,
//! the Euclidean division), computed with those very methods so the simulator is Rust's
//! reference. The NVVM writer's `int_methods` lowers each to the instructions that give the
//! same bits.
//!
//! Where Rust panics, the language leaves the value unspecified, as for `/` (and the GPU
//! does not trap): a zero divisor of `div_euclid`, `rem_euclid` and `div_ceil` is reported
//! before the call, as for `/` (`Op::CheckDivisor`; the values below for it, all ones and
//! the dividend, only keep the functions total), `MIN.div_euclid(-1)` wraps, and `clamp` with
//! `min > max` is `if x < min { min } else if x > max { max } else { x }`, Rust's formula
//! without its assertion.

use cudajit_core::math::MathFunction;
use cudajit_core::Scalar;

use super::value::{BinaryFn, RegisterValue, TernaryFn, UnaryFn};

/// An integer method resolved for its type, by arity.
#[derive(Clone, Copy)]
pub(crate) enum IntMethod {
    Unary(UnaryFn),
    Binary(BinaryFn),
    Ternary(TernaryFn),
}

/// Rust's integer methods, over every integer type.
trait RustInt: RegisterValue + Ord {
    fn wrapping_add(self, rhs: Self) -> Self;
    fn wrapping_sub(self, rhs: Self) -> Self;
    fn wrapping_mul(self, rhs: Self) -> Self;
    fn wrapping_neg(self) -> Self;
    fn wrapping_shl(self, n: u32) -> Self;
    fn wrapping_shr(self, n: u32) -> Self;
    fn saturating_add(self, rhs: Self) -> Self;
    fn saturating_sub(self, rhs: Self) -> Self;
    fn saturating_mul(self, rhs: Self) -> Self;
    fn rotate_left(self, n: u32) -> Self;
    fn rotate_right(self, n: u32) -> Self;
    fn reverse_bits(self) -> Self;
    fn swap_bytes(self) -> Self;
    fn wrapping_pow(self, exp: u32) -> Self;
    /// `abs_diff`'s result, as register bits of the unsigned type of the same width.
    fn abs_diff_bits(self, rhs: Self) -> u64;
    /// `signum`, or `None` for unsigned types (Rust has none).
    fn signum(self) -> Option<Self>;
    /// `div_euclid` and `rem_euclid`; `None` for a zero divisor.
    fn div_euclid(self, rhs: Self) -> Option<Self>;
    fn rem_euclid(self, rhs: Self) -> Option<Self>;
    /// `x / y` rounded up (unsigned receivers; `None` for `y` = 0).
    fn div_ceil(self, rhs: Self) -> Option<Self>;
    /// What `/` and `%` by zero give (see the module documentation).
    fn div_by_zero() -> Self;
}

macro_rules! rust_ints {
    ($($t:ty: $signum:ident;)*) => {$(
        impl RustInt for $t {
            fn wrapping_add(self, rhs: Self) -> Self { <$t>::wrapping_add(self, rhs) }
            fn wrapping_sub(self, rhs: Self) -> Self { <$t>::wrapping_sub(self, rhs) }
            fn wrapping_mul(self, rhs: Self) -> Self { <$t>::wrapping_mul(self, rhs) }
            fn wrapping_neg(self) -> Self { <$t>::wrapping_neg(self) }
            fn wrapping_shl(self, n: u32) -> Self { <$t>::wrapping_shl(self, n) }
            fn wrapping_shr(self, n: u32) -> Self { <$t>::wrapping_shr(self, n) }
            fn saturating_add(self, rhs: Self) -> Self { <$t>::saturating_add(self, rhs) }
            fn saturating_sub(self, rhs: Self) -> Self { <$t>::saturating_sub(self, rhs) }
            fn saturating_mul(self, rhs: Self) -> Self { <$t>::saturating_mul(self, rhs) }
            fn rotate_left(self, n: u32) -> Self { <$t>::rotate_left(self, n) }
            fn rotate_right(self, n: u32) -> Self { <$t>::rotate_right(self, n) }
            fn reverse_bits(self) -> Self { <$t>::reverse_bits(self) }
            fn swap_bytes(self) -> Self { <$t>::swap_bytes(self) }
            fn wrapping_pow(self, exp: u32) -> Self { <$t>::wrapping_pow(self, exp) }
            fn abs_diff_bits(self, rhs: Self) -> u64 { <$t>::abs_diff(self, rhs).to_register() }
            fn signum(self) -> Option<Self> { rust_ints!(@signum $signum self) }
            fn div_euclid(self, rhs: Self) -> Option<Self> {
                (rhs != 0).then(|| <$t>::wrapping_div_euclid(self, rhs))
            }
            fn rem_euclid(self, rhs: Self) -> Option<Self> {
                (rhs != 0).then(|| <$t>::wrapping_rem_euclid(self, rhs))
            }
            fn div_ceil(self, rhs: Self) -> Option<Self> {
                (rhs != 0).then(|| {
                    let q = <$t>::wrapping_div(self, rhs);
                    if <$t>::wrapping_rem(self, rhs) != 0 { q.wrapping_add(1) } else { q }
                })
            }
            fn div_by_zero() -> Self { !0 }
        }
    )*};
    (@signum signed $v:ident) => { Some($v.signum()) };
    (@signum unsigned $v:ident) => {{ let _ = $v; None }};
}

rust_ints! {
    i8: signed; i16: signed; i32: signed; i64: signed;
    u8: unsigned; u16: unsigned; u32: unsigned; u64: unsigned;
}

fn get<T: RustInt>(bits: u64) -> T {
    T::from_register(bits)
}

/// The integer method `function` for `scalar`, if it is one of this module's.
pub(crate) fn int_method(function: MathFunction, scalar: Scalar) -> Option<IntMethod> {
    match scalar {
        Scalar::I8 => pick::<i8>(function),
        Scalar::I16 => pick::<i16>(function),
        Scalar::I32 => pick::<i32>(function),
        Scalar::I64 | Scalar::Isize => pick::<i64>(function),
        Scalar::U8 => pick::<u8>(function),
        Scalar::U16 => pick::<u16>(function),
        Scalar::U32 => pick::<u32>(function),
        Scalar::U64 | Scalar::Usize => pick::<u64>(function),
        Scalar::Bool | Scalar::F32 | Scalar::F64 | Scalar::F16 | Scalar::BF16 => None,
    }
}

fn pick<T: RustInt>(function: MathFunction) -> Option<IntMethod> {
    use IntMethod::{Binary, Ternary, Unary};
    use MathFunction as M;
    // Shift amounts and exponents are `u32` registers (`n as u32`).
    Some(match function {
        M::WrappingAdd => Binary(|a, b| get::<T>(a).wrapping_add(get(b)).to_register()),
        M::WrappingSub => Binary(|a, b| get::<T>(a).wrapping_sub(get(b)).to_register()),
        M::WrappingMul => Binary(|a, b| get::<T>(a).wrapping_mul(get(b)).to_register()),
        M::WrappingNeg => Unary(|a| get::<T>(a).wrapping_neg().to_register()),
        M::WrappingShl => Binary(|a, n| get::<T>(a).wrapping_shl(n as u32).to_register()),
        M::WrappingShr => Binary(|a, n| get::<T>(a).wrapping_shr(n as u32).to_register()),
        M::SaturatingAdd => Binary(|a, b| get::<T>(a).saturating_add(get(b)).to_register()),
        M::SaturatingSub => Binary(|a, b| get::<T>(a).saturating_sub(get(b)).to_register()),
        M::SaturatingMul => Binary(|a, b| get::<T>(a).saturating_mul(get(b)).to_register()),
        M::RotateLeft => Binary(|a, n| get::<T>(a).rotate_left(n as u32).to_register()),
        M::RotateRight => Binary(|a, n| get::<T>(a).rotate_right(n as u32).to_register()),
        M::ReverseBits => Unary(|a| get::<T>(a).reverse_bits().to_register()),
        M::SwapBytes => Unary(|a| get::<T>(a).swap_bytes().to_register()),
        M::Pow => Binary(|a, n| get::<T>(a).wrapping_pow(n as u32).to_register()),
        M::AbsDiff => Binary(|a, b| get::<T>(a).abs_diff_bits(get(b))),
        M::Signum => {
            get::<T>(0).signum()?;
            Unary(|a| get::<T>(a).signum().map_or(0, RegisterValue::to_register))
        }
        // By zero as the GPU's lowering gives it: `x / 0` all ones, `x % 0` = x, so all
        // ones for 0 and 0 (all ones + 1) otherwise.
        M::DivCeil => Binary(|a, b| {
            let a = get::<T>(a);
            a.div_ceil(get(b))
                .unwrap_or_else(|| {
                    let zero = a.wrapping_sub(a);
                    if a == zero {
                        T::div_by_zero()
                    } else {
                        zero
                    }
                })
                .to_register()
        }),
        M::DivEuclid => Binary(|a, b| {
            let a = get::<T>(a);
            a.div_euclid(get(b))
                .unwrap_or_else(T::div_by_zero)
                .to_register()
        }),
        M::RemEuclid => Binary(|a, b| {
            let a = get::<T>(a);
            a.rem_euclid(get(b)).unwrap_or(a).to_register()
        }),
        M::Clamp => Ternary(|x, min, max| {
            let (x, min, max) = (get::<T>(x), get::<T>(min), get::<T>(max));
            let clamped = if x < min {
                min
            } else if x > max {
                max
            } else {
                x
            };
            clamped.to_register()
        }),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unary(function: MathFunction, s: Scalar, a: u64) -> u64 {
        match int_method(function, s) {
            Some(IntMethod::Unary(f)) => f(a),
            _ => panic!("not unary"),
        }
    }

    fn binary(function: MathFunction, s: Scalar, a: u64, b: u64) -> u64 {
        match int_method(function, s) {
            Some(IntMethod::Binary(f)) => f(a, b),
            _ => panic!("not binary"),
        }
    }

    #[test]
    fn methods_are_rusts_on_edge_cases() {
        let r = |v: i32| v.to_register();
        use MathFunction as M;
        assert_eq!(
            binary(M::SaturatingAdd, Scalar::I32, r(i32::MAX), r(1)),
            r(i32::MAX)
        );
        assert_eq!(
            binary(M::SaturatingMul, Scalar::I32, r(i32::MIN), r(-1)),
            r(i32::MAX)
        );
        assert_eq!(binary(M::SaturatingSub, Scalar::U8, 3, 5), 0);
        assert_eq!(binary(M::WrappingShl, Scalar::I8, 1, 9), 2);
        assert_eq!(binary(M::RotateLeft, Scalar::U16, 0x8001, 17), 0x0003);
        assert_eq!(
            binary(M::AbsDiff, Scalar::I32, r(i32::MIN), r(i32::MAX)),
            u64::from(u32::MAX)
        );
        assert_eq!(
            binary(M::Pow, Scalar::U8, 3, 5),
            u64::from(3u8.wrapping_pow(5))
        );
        assert_eq!(binary(M::DivEuclid, Scalar::I32, r(-7), r(2)), r(-4));
        assert_eq!(
            binary(M::RemEuclid, Scalar::I32, r(-7), r(i32::MIN)),
            r((-7i32).rem_euclid(i32::MIN))
        );
        assert_eq!(binary(M::DivEuclid, Scalar::U32, 7, 0), u64::from(u32::MAX));
        assert_eq!(
            unary(M::Signum, Scalar::I64, (-5i64).to_register()),
            (-1i64).to_register()
        );
        assert!(int_method(M::Signum, Scalar::U32).is_none());
        assert_eq!(unary(M::ReverseBits, Scalar::U8, 1), 0x80);
        assert_eq!(unary(M::SwapBytes, Scalar::U8, 0x12), 0x12);
    }
}
