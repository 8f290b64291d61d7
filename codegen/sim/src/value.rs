//! Scalar values in the simulator's registers, and the operations on them.
//!
//! A register is a `u64`: an integer holds its bits zero-extended from its width (`-1i8` is
//! `0xff`), a `bool` is 0 or 1, an `f32` its bits in the low half, an `f64` its bits. Every
//! operation is resolved once, when a kernel is prepared, to a plain function of register
//! values for its exact type, so the interpreter never matches on types.
//!
//! The semantics are those the NVVM writer gives each IR node (`codegen/src/nvvm/`):
//! wrapping integer arithmetic, shift amounts taken modulo the width, Rust's `as` for casts
//! (saturating float-to-integer, NaN to 0), IEEE-754 round-to-nearest float arithmetic
//! without contraction into FMAs, ordered float comparisons except `!=`.

use cudajit_core::ast::{BinaryOp, UnaryOp};
use cudajit_core::Scalar;

/// An operation of one operand, on register values.
pub(crate) type UnaryFn = fn(u64) -> u64;
/// An operation of two operands, on register values.
pub(crate) type BinaryFn = fn(u64, u64) -> u64;
/// An operation of three operands, on register values.
pub(crate) type TernaryFn = fn(u64, u64, u64) -> u64;

/// A Rust scalar type and its register encoding.
pub trait RegisterValue: Copy {
    /// The scalar type of the kernel language.
    const SCALAR: Scalar;
    /// The value held by register bits `bits`.
    fn from_register(bits: u64) -> Self;
    /// The register bits of the value.
    fn to_register(self) -> u64;
}

macro_rules! register_ints {
    ($($t:ty => $u:ty, $scalar:ident;)*) => {$(
        impl RegisterValue for $t {
            const SCALAR: Scalar = Scalar::$scalar;
            #[inline(always)]
            fn from_register(bits: u64) -> Self {
                bits as $t
            }
            #[inline(always)]
            fn to_register(self) -> u64 {
                self as $u as u64
            }
        }
    )*};
}

register_ints! {
    i8 => u8, I8;
    i16 => u16, I16;
    i32 => u32, I32;
    i64 => u64, I64;
    isize => usize, Isize;
    u8 => u8, U8;
    u16 => u16, U16;
    u32 => u32, U32;
    u64 => u64, U64;
    usize => usize, Usize;
}

impl RegisterValue for bool {
    const SCALAR: Scalar = Scalar::Bool;
    #[inline(always)]
    fn from_register(bits: u64) -> Self {
        bits & 1 != 0
    }
    #[inline(always)]
    fn to_register(self) -> u64 {
        self as u64
    }
}

impl RegisterValue for f32 {
    const SCALAR: Scalar = Scalar::F32;
    #[inline(always)]
    fn from_register(bits: u64) -> Self {
        f32::from_bits(bits as u32)
    }
    #[inline(always)]
    fn to_register(self) -> u64 {
        u64::from(self.to_bits())
    }
}

impl RegisterValue for half::f16 {
    const SCALAR: Scalar = Scalar::F16;
    #[inline(always)]
    fn from_register(bits: u64) -> Self {
        half::f16::from_bits(bits as u16)
    }
    #[inline(always)]
    fn to_register(self) -> u64 {
        u64::from(self.to_bits())
    }
}

impl RegisterValue for half::bf16 {
    const SCALAR: Scalar = Scalar::BF16;
    #[inline(always)]
    fn from_register(bits: u64) -> Self {
        half::bf16::from_bits(bits as u16)
    }
    #[inline(always)]
    fn to_register(self) -> u64 {
        u64::from(self.to_bits())
    }
}

impl RegisterValue for f64 {
    const SCALAR: Scalar = Scalar::F64;
    #[inline(always)]
    fn from_register(bits: u64) -> Self {
        f64::from_bits(bits)
    }
    #[inline(always)]
    fn to_register(self) -> u64 {
        self.to_bits()
    }
}

/// The register bits of `bits` (a value's two's-complement bits, as IR literals store
/// them) for `scalar`: truncated to the width.
pub fn canonical(bits: u64, scalar: Scalar) -> u64 {
    match scalar.bits() {
        1 => bits & 1,
        64 => bits,
        width => bits & ((1u64 << width) - 1),
    }
}

/// The bits of a float literal as `scalar`.
pub(crate) fn float_literal(value: f64, scalar: Scalar) -> u64 {
    match scalar {
        Scalar::F32 => (value as f32).to_register(),
        Scalar::F16 => half::f16::from_f32(value as f32).to_register(),
        Scalar::BF16 => half::bf16::from_f32(value as f32).to_register(),
        _ => value.to_register(),
    }
}

/// Register bits sign- or zero-extended to 64 bits, as the writer widens indices.
#[inline(always)]
pub fn widen(bits: u64, scalar: Scalar) -> u64 {
    if scalar.is_signed() && scalar.bits() < 64 {
        let shift = 64 - scalar.bits();
        (((bits << shift) as i64) >> shift) as u64
    } else {
        bits
    }
}

/// Integer types: the operations the IR applies to them.
trait SimInt: RegisterValue + Ord {
    const ALL_ONES: Self;
    fn wrapping_add(self, other: Self) -> Self;
    fn wrapping_sub(self, other: Self) -> Self;
    fn wrapping_mul(self, other: Self) -> Self;
    fn wrapping_div(self, other: Self) -> Self;
    fn wrapping_rem(self, other: Self) -> Self;
    fn wrapping_neg(self) -> Self;
    fn wrapping_abs(self) -> Self;
    fn wrapping_shl(self, amount: u32) -> Self;
    fn wrapping_shr(self, amount: u32) -> Self;
    fn and(self, other: Self) -> Self;
    fn or(self, other: Self) -> Self;
    fn xor(self, other: Self) -> Self;
    fn not(self) -> Self;
    fn count_ones(self) -> u32;
    fn leading_zeros(self) -> u32;
    fn trailing_zeros(self) -> u32;
    fn is_zero(self) -> bool;
}

macro_rules! sim_ints {
    ($($t:ty: $abs:ident;)*) => {$(
        impl SimInt for $t {
            const ALL_ONES: Self = !0;
            #[inline(always)]
            fn wrapping_add(self, other: Self) -> Self { <$t>::wrapping_add(self, other) }
            #[inline(always)]
            fn wrapping_sub(self, other: Self) -> Self { <$t>::wrapping_sub(self, other) }
            #[inline(always)]
            fn wrapping_mul(self, other: Self) -> Self { <$t>::wrapping_mul(self, other) }
            #[inline(always)]
            fn wrapping_div(self, other: Self) -> Self { <$t>::wrapping_div(self, other) }
            #[inline(always)]
            fn wrapping_rem(self, other: Self) -> Self { <$t>::wrapping_rem(self, other) }
            #[inline(always)]
            fn wrapping_neg(self) -> Self { <$t>::wrapping_neg(self) }
            #[inline(always)]
            fn wrapping_abs(self) -> Self { sim_ints!(@abs $abs self) }
            #[inline(always)]
            fn wrapping_shl(self, amount: u32) -> Self { <$t>::wrapping_shl(self, amount) }
            #[inline(always)]
            fn wrapping_shr(self, amount: u32) -> Self { <$t>::wrapping_shr(self, amount) }
            #[inline(always)]
            fn and(self, other: Self) -> Self { self & other }
            #[inline(always)]
            fn or(self, other: Self) -> Self { self | other }
            #[inline(always)]
            fn xor(self, other: Self) -> Self { self ^ other }
            #[inline(always)]
            fn not(self) -> Self { !self }
            #[inline(always)]
            fn count_ones(self) -> u32 { <$t>::count_ones(self) }
            #[inline(always)]
            fn leading_zeros(self) -> u32 { <$t>::leading_zeros(self) }
            #[inline(always)]
            fn trailing_zeros(self) -> u32 { <$t>::trailing_zeros(self) }
            #[inline(always)]
            fn is_zero(self) -> bool { self == 0 }
        }
    )*};
    (@abs signed $v:ident) => { $v.wrapping_abs() };
    (@abs unsigned $v:ident) => { $v };
}

sim_ints! {
    i8: signed; i16: signed; i32: signed; i64: signed;
    u8: unsigned; u16: unsigned; u32: unsigned; u64: unsigned;
}

#[inline(always)]
fn int_get<T: SimInt>(bits: u64) -> T {
    T::from_register(bits)
}

/// Integer division: wrapping (`MIN / -1` is `MIN`). Division by zero has no defined
/// result in the language (CUDA C++ leaves it unspecified): a kernel's division is
/// preceded by `Op::CheckDivisor`, which reports it, so the values here for a zero divisor
/// (all ones, as PTX `div` gives, and `x % 0` = `x`) only keep the function total.
fn int_div<T: SimInt>(a: u64, b: u64) -> u64 {
    let (a, b) = (int_get::<T>(a), int_get::<T>(b));
    if b.is_zero() {
        T::ALL_ONES.to_register()
    } else {
        a.wrapping_div(b).to_register()
    }
}

fn int_rem<T: SimInt>(a: u64, b: u64) -> u64 {
    let (a, b) = (int_get::<T>(a), int_get::<T>(b));
    if b.is_zero() {
        a.to_register()
    } else {
        a.wrapping_rem(b).to_register()
    }
}

fn int_binary<T: SimInt>(op: BinaryOp) -> Option<BinaryFn> {
    Some(match op {
        BinaryOp::Add => |a, b| int_get::<T>(a).wrapping_add(int_get(b)).to_register(),
        BinaryOp::Sub => |a, b| int_get::<T>(a).wrapping_sub(int_get(b)).to_register(),
        BinaryOp::Mul => |a, b| int_get::<T>(a).wrapping_mul(int_get(b)).to_register(),
        BinaryOp::Div => int_div::<T>,
        BinaryOp::Rem => int_rem::<T>,
        BinaryOp::BitAnd => |a, b| int_get::<T>(a).and(int_get(b)).to_register(),
        BinaryOp::BitOr => |a, b| int_get::<T>(a).or(int_get(b)).to_register(),
        BinaryOp::BitXor => |a, b| int_get::<T>(a).xor(int_get(b)).to_register(),
        // Rust's wrapping shifts: the amount is taken modulo the width.
        BinaryOp::Shl => |a, b| int_get::<T>(a).wrapping_shl(b as u32).to_register(),
        BinaryOp::Shr => |a, b| int_get::<T>(a).wrapping_shr(b as u32).to_register(),
        BinaryOp::Eq => |a, b| u64::from(int_get::<T>(a) == int_get(b)),
        BinaryOp::Ne => |a, b| u64::from(int_get::<T>(a) != int_get(b)),
        BinaryOp::Lt => |a, b| u64::from(int_get::<T>(a) < int_get(b)),
        BinaryOp::Le => |a, b| u64::from(int_get::<T>(a) <= int_get(b)),
        BinaryOp::Gt => |a, b| u64::from(int_get::<T>(a) > int_get(b)),
        BinaryOp::Ge => |a, b| u64::from(int_get::<T>(a) >= int_get(b)),
        BinaryOp::And | BinaryOp::Or => return None,
    })
}

/// Floating-point types: the operations the IR applies to them.
pub(crate) trait SimFloat:
    RegisterValue
    + CanonicalNan
    + PartialOrd
    + std::ops::Add<Output = Self>
    + std::ops::Sub<Output = Self>
    + std::ops::Mul<Output = Self>
    + std::ops::Div<Output = Self>
    + std::ops::Rem<Output = Self>
    + std::ops::Neg<Output = Self>
{
}

impl SimFloat for f32 {}
impl SimFloat for f64 {}

/// The NaN a GPU's float arithmetic returns, whatever its operands: PTX's canonical NaN,
/// `0x7fffffff` (x86 returns `0xffc00000`, whose sign `copysign` would reveal).
pub(crate) trait CanonicalNan: Copy {
    fn canonical(self) -> Self;
}

impl CanonicalNan for f32 {
    #[inline(always)]
    fn canonical(self) -> Self {
        if self.is_nan() {
            f32::from_bits(0x7fff_ffff)
        } else {
            self
        }
    }
}

impl CanonicalNan for f64 {
    #[inline(always)]
    fn canonical(self) -> Self {
        if self.is_nan() {
            f64::from_bits(0x7fff_ffff_ffff_ffff)
        } else {
            self
        }
    }
}

#[inline(always)]
fn float_get<T: SimFloat>(bits: u64) -> T {
    T::from_register(bits)
}

fn float_binary<T: SimFloat>(op: BinaryOp) -> Option<BinaryFn> {
    Some(match op {
        BinaryOp::Add => |a, b| (float_get::<T>(a) + float_get(b)).canonical().to_register(),
        BinaryOp::Sub => |a, b| (float_get::<T>(a) - float_get(b)).canonical().to_register(),
        BinaryOp::Mul => |a, b| (float_get::<T>(a) * float_get(b)).canonical().to_register(),
        BinaryOp::Div => |a, b| (float_get::<T>(a) / float_get(b)).canonical().to_register(),
        BinaryOp::Rem => |a, b| (float_get::<T>(a) % float_get(b)).canonical().to_register(),
        // Rust's (and LLVM's `oeq`/`une`/`olt`...) comparisons: false with a NaN, except `!=`.
        BinaryOp::Eq => |a, b| u64::from(float_get::<T>(a) == float_get(b)),
        BinaryOp::Ne => |a, b| u64::from(float_get::<T>(a) != float_get(b)),
        BinaryOp::Lt => |a, b| u64::from(float_get::<T>(a) < float_get(b)),
        BinaryOp::Le => |a, b| u64::from(float_get::<T>(a) <= float_get(b)),
        BinaryOp::Gt => |a, b| u64::from(float_get::<T>(a) > float_get(b)),
        BinaryOp::Ge => |a, b| u64::from(float_get::<T>(a) >= float_get(b)),
        _ => return None,
    })
}

/// The 16-bit floats: storage formats whose arithmetic goes through `f32` (each operation
/// computed in `f32`, which is exact for one operation of 16-bit operands, then rounded to
/// nearest even).
pub(crate) trait HalfFloat: RegisterValue {
    fn widen(self) -> f32;
    fn narrow(value: f32) -> Self;
}

impl HalfFloat for half::f16 {
    fn widen(self) -> f32 {
        self.to_f32()
    }
    fn narrow(value: f32) -> Self {
        half::f16::from_f32(value)
    }
}

impl HalfFloat for half::bf16 {
    fn widen(self) -> f32 {
        self.to_f32()
    }
    fn narrow(value: f32) -> Self {
        half::bf16::from_f32(value)
    }
}

fn half_get<T: HalfFloat>(bits: u64) -> f32 {
    T::from_register(bits).widen()
}

fn half_put<T: HalfFloat>(value: f32) -> u64 {
    T::narrow(value.canonical()).to_register()
}

fn half_binary<T: HalfFloat>(op: BinaryOp) -> Option<BinaryFn> {
    Some(match op {
        BinaryOp::Add => |a, b| half_put::<T>(half_get::<T>(a) + half_get::<T>(b)),
        BinaryOp::Sub => |a, b| half_put::<T>(half_get::<T>(a) - half_get::<T>(b)),
        BinaryOp::Mul => |a, b| half_put::<T>(half_get::<T>(a) * half_get::<T>(b)),
        BinaryOp::Div => |a, b| half_put::<T>(half_get::<T>(a) / half_get::<T>(b)),
        BinaryOp::Rem => |a, b| half_put::<T>(half_get::<T>(a) % half_get::<T>(b)),
        BinaryOp::Eq => |a, b| u64::from(half_get::<T>(a) == half_get::<T>(b)),
        BinaryOp::Ne => |a, b| u64::from(half_get::<T>(a) != half_get::<T>(b)),
        BinaryOp::Lt => |a, b| u64::from(half_get::<T>(a) < half_get::<T>(b)),
        BinaryOp::Le => |a, b| u64::from(half_get::<T>(a) <= half_get::<T>(b)),
        BinaryOp::Gt => |a, b| u64::from(half_get::<T>(a) > half_get::<T>(b)),
        BinaryOp::Ge => |a, b| u64::from(half_get::<T>(a) >= half_get::<T>(b)),
        _ => return None,
    })
}

fn bool_binary(op: BinaryOp) -> Option<BinaryFn> {
    // `bool` is an unsigned 1-bit integer: `false < true`.
    Some(match op {
        BinaryOp::BitAnd => |a, b| a & b,
        BinaryOp::BitOr => |a, b| a | b,
        BinaryOp::BitXor => |a, b| a ^ b,
        BinaryOp::Eq => |a, b| u64::from(a == b),
        BinaryOp::Ne => |a, b| u64::from(a != b),
        BinaryOp::Lt => |a, b| u64::from(a < b),
        BinaryOp::Le => |a, b| u64::from(a <= b),
        BinaryOp::Gt => |a, b| u64::from(a > b),
        BinaryOp::Ge => |a, b| u64::from(a >= b),
        _ => return None,
    })
}

/// The function computing `left op right` on operands of type `scalar`, or `None` if the
/// operator does not apply (the validator rules it out).
pub(crate) fn binary_fn(op: BinaryOp, scalar: Scalar) -> Option<BinaryFn> {
    match scalar {
        Scalar::Bool => bool_binary(op),
        Scalar::I8 => int_binary::<i8>(op),
        Scalar::I16 => int_binary::<i16>(op),
        Scalar::I32 => int_binary::<i32>(op),
        Scalar::I64 | Scalar::Isize => int_binary::<i64>(op),
        Scalar::U8 => int_binary::<u8>(op),
        Scalar::U16 => int_binary::<u16>(op),
        Scalar::U32 => int_binary::<u32>(op),
        Scalar::U64 | Scalar::Usize => int_binary::<u64>(op),
        Scalar::F32 => float_binary::<f32>(op),
        Scalar::F64 => float_binary::<f64>(op),
        Scalar::F16 => half_binary::<half::f16>(op),
        Scalar::BF16 => half_binary::<half::bf16>(op),
    }
}

fn int_unary<T: SimInt>(op: UnaryOp) -> UnaryFn {
    match op {
        UnaryOp::Neg => |a| int_get::<T>(a).wrapping_neg().to_register(),
        UnaryOp::Not => |a| int_get::<T>(a).not().to_register(),
    }
}

fn float_unary<T: SimFloat>(op: UnaryOp) -> Option<UnaryFn> {
    match op {
        UnaryOp::Neg => Some(|a| (-float_get::<T>(a)).to_register()),
        UnaryOp::Not => None,
    }
}

/// The function computing `op operand` for an operand of type `scalar`.
pub(crate) fn unary_fn(op: UnaryOp, scalar: Scalar) -> Option<UnaryFn> {
    match scalar {
        Scalar::Bool => match op {
            UnaryOp::Not => Some(|a| a ^ 1),
            UnaryOp::Neg => None,
        },
        Scalar::I8 => Some(int_unary::<i8>(op)),
        Scalar::I16 => Some(int_unary::<i16>(op)),
        Scalar::I32 => Some(int_unary::<i32>(op)),
        Scalar::I64 | Scalar::Isize => Some(int_unary::<i64>(op)),
        Scalar::U8 => Some(int_unary::<u8>(op)),
        Scalar::U16 => Some(int_unary::<u16>(op)),
        Scalar::U32 => Some(int_unary::<u32>(op)),
        Scalar::U64 | Scalar::Usize => Some(int_unary::<u64>(op)),
        Scalar::F32 => float_unary::<f32>(op),
        Scalar::F64 => float_unary::<f64>(op),
        // Negation flips the sign bit.
        Scalar::F16 | Scalar::BF16 => match op {
            UnaryOp::Neg => Some(|a| a ^ 0x8000),
            UnaryOp::Not => None,
        },
    }
}

/// `as` from one numeric scalar to another: the very `as` of Rust, which is the
/// language's definition (and what the writer's instructions compute).
macro_rules! cast_matrix {
    ($from:expr, $to:expr, $all:tt) => {
        cast_matrix!(@from $from, $to, $all, $all)
    };
    (@from $from:expr, $to:expr, [$($s:ident => $t:ty),*], $all:tt) => {
        match $from {
            $(Scalar::$s => cast_matrix!(@to $to, $t, $all),)*
            Scalar::Bool | Scalar::F16 | Scalar::BF16 => return None,
        }
    };
    (@to $to:expr, $f:ty, [$($s:ident => $t:ty),*]) => {
        match $to {
            $(Scalar::$s => (|x: u64| (<$f as RegisterValue>::from_register(x) as $t).to_register()) as UnaryFn,)*
            Scalar::Bool | Scalar::F16 | Scalar::BF16 => return None,
        }
    };
}

/// The function computing `value as to` for a value of type `from`.
pub(crate) fn cast_fn(from: Scalar, to: Scalar) -> Option<UnaryFn> {
    if from == Scalar::Bool {
        // `bool as` an integer: 0 or 1, already the register's value.
        return (to == Scalar::Bool || to.is_integer()).then_some((|x| x & 1) as UnaryFn);
    }
    if to == Scalar::Bool {
        return None;
    }
    if matches!(from, Scalar::F16 | Scalar::BF16) || matches!(to, Scalar::F16 | Scalar::BF16) {
        return Some(half_cast(from, to));
    }
    if from.is_float() && to.is_float() && from != to {
        // A NaN converts to the canonical NaN, as PTX's `cvt` does.
        return Some(if to == Scalar::F32 {
            |x| (f64::from_register(x) as f32).canonical().to_register()
        } else {
            |x| f64::from(f32::from_register(x)).canonical().to_register()
        });
    }
    Some(cast_matrix!(from, to, [
        I8 => i8, I16 => i16, I32 => i32, I64 => i64, Isize => i64,
        U8 => u8, U16 => u16, U32 => u32, U64 => u64, Usize => u64,
        F32 => f32, F64 => f64
    ]))
}

/// A scalar converted to `f32` (Rust's `as f32`).
trait ToF32: RegisterValue {
    fn to_f32(self) -> f32;
}

/// A scalar from an `f32` (Rust's `as`: saturating, NaN to 0 for integers).
trait FromF32: RegisterValue {
    fn from_f32(value: f32) -> Self;
}

macro_rules! through_f32 {
    ($($t:ty),*) => {$(
        impl ToF32 for $t {
            fn to_f32(self) -> f32 { self as f32 }
        }
        impl FromF32 for $t {
            fn from_f32(value: f32) -> Self { value as $t }
        }
    )*};
}

through_f32!(i8, i16, i32, i64, u8, u16, u32, u64, f32, f64);

impl ToF32 for half::f16 {
    fn to_f32(self) -> f32 {
        self.widen()
    }
}
impl FromF32 for half::f16 {
    fn from_f32(value: f32) -> Self {
        Self::narrow(value)
    }
}
impl ToF32 for half::bf16 {
    fn to_f32(self) -> f32 {
        self.widen()
    }
}
impl FromF32 for half::bf16 {
    fn from_f32(value: f32) -> Self {
        Self::narrow(value)
    }
}

fn via_f32<F: ToF32, T: FromF32>(bits: u64) -> u64 {
    T::from_f32(F::from_register(bits).to_f32()).to_register()
}

/// A cast from or to a 16-bit float, which goes through `f32` (so `f64 as f16` and
/// `i64 as f16` round twice, as the writer's conversions do).
fn half_cast(from: Scalar, to: Scalar) -> UnaryFn {
    macro_rules! to_type {
        ($f:ty) => {
            match to {
                Scalar::I8 => via_f32::<$f, i8> as UnaryFn,
                Scalar::I16 => via_f32::<$f, i16>,
                Scalar::I32 => via_f32::<$f, i32>,
                Scalar::I64 | Scalar::Isize => via_f32::<$f, i64>,
                Scalar::U8 => via_f32::<$f, u8>,
                Scalar::U16 => via_f32::<$f, u16>,
                Scalar::U32 => via_f32::<$f, u32>,
                Scalar::U64 | Scalar::Usize => via_f32::<$f, u64>,
                Scalar::F32 => via_f32::<$f, f32>,
                Scalar::F64 => via_f32::<$f, f64>,
                Scalar::F16 => via_f32::<$f, half::f16>,
                Scalar::BF16 => via_f32::<$f, half::bf16>,
                Scalar::Bool => |x| x,
            }
        };
    }
    match from {
        Scalar::I8 => to_type!(i8),
        Scalar::I16 => to_type!(i16),
        Scalar::I32 => to_type!(i32),
        Scalar::I64 | Scalar::Isize => to_type!(i64),
        Scalar::U8 => to_type!(u8),
        Scalar::U16 => to_type!(u16),
        Scalar::U32 => to_type!(u32),
        Scalar::U64 | Scalar::Usize => to_type!(u64),
        Scalar::F32 => to_type!(f32),
        Scalar::F64 => to_type!(f64),
        Scalar::F16 => to_type!(half::f16),
        Scalar::BF16 => to_type!(half::bf16),
        Scalar::Bool => |x| x & 1,
    }
}

/// The pieces of integer math functions (`abs`, `min`, `max`, bit counts) for `scalar`.
pub(crate) fn int_math(
    function: cudajit_core::math::MathFunction,
    scalar: Scalar,
) -> Option<IntMath> {
    fn pick<T: SimInt>(function: cudajit_core::math::MathFunction) -> Option<IntMath> {
        use cudajit_core::math::MathFunction as M;
        Some(match function {
            M::Abs => IntMath::Unary(|a| int_get::<T>(a).wrapping_abs().to_register()),
            M::Min => IntMath::Binary(|a, b| int_get::<T>(a).min(int_get(b)).to_register()),
            M::Max => IntMath::Binary(|a, b| int_get::<T>(a).max(int_get(b)).to_register()),
            M::CountOnes => IntMath::Unary(|a| u64::from(int_get::<T>(a).count_ones())),
            M::LeadingZeros => IntMath::Unary(|a| u64::from(int_get::<T>(a).leading_zeros())),
            M::TrailingZeros => IntMath::Unary(|a| u64::from(int_get::<T>(a).trailing_zeros())),
            _ => return None,
        })
    }
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

/// A math function resolved for its type, by arity.
#[derive(Clone, Copy)]
pub(crate) enum IntMath {
    Unary(UnaryFn),
    Binary(BinaryFn),
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bin(op: BinaryOp, s: Scalar, a: u64, b: u64) -> u64 {
        binary_fn(op, s).unwrap()(a, b)
    }

    #[test]
    fn integers_wrap_and_shifts_are_masked() {
        let i32r = |v: i32| v.to_register();
        assert_eq!(
            bin(BinaryOp::Add, Scalar::I32, i32r(i32::MAX), i32r(1)),
            i32r(i32::MIN)
        );
        assert_eq!(bin(BinaryOp::Shl, Scalar::I32, i32r(1), 33), i32r(2));
        assert_eq!(
            bin(BinaryOp::Shr, Scalar::I32, i32r(-8), 1),
            i32r(-4),
            "arithmetic shift"
        );
        assert_eq!(bin(BinaryOp::Shr, Scalar::U8, 0x80, 9), 0x40);
        assert_eq!(
            bin(BinaryOp::Div, Scalar::I32, i32r(i32::MIN), i32r(-1)),
            i32r(i32::MIN)
        );
        assert_eq!(bin(BinaryOp::Div, Scalar::U32, 7, 0), u64::from(u32::MAX));
        assert_eq!(bin(BinaryOp::Lt, Scalar::I8, (-1i8).to_register(), 1), 1);
        assert_eq!(bin(BinaryOp::Lt, Scalar::U8, (-1i8).to_register(), 1), 0);
    }

    #[test]
    fn casts_are_rust_as() {
        let c = |from, to, x| cast_fn(from, to).unwrap()(x);
        assert_eq!(c(Scalar::F32, Scalar::I32, f32::NAN.to_register()), 0);
        assert_eq!(
            c(Scalar::F32, Scalar::U8, 300.5f32.to_register()),
            255u8.to_register()
        );
        assert_eq!(
            c(Scalar::F32, Scalar::I16, (-1e9f32).to_register()),
            i16::MIN.to_register()
        );
        assert_eq!(
            c(Scalar::I8, Scalar::U64, (-1i8).to_register()),
            u64::MAX,
            "sign extension"
        );
        assert_eq!(
            c(Scalar::U64, Scalar::F32, u64::MAX),
            (u64::MAX as f32).to_register()
        );
        assert_eq!(c(Scalar::Bool, Scalar::I32, 1), 1);
        assert!(cast_fn(Scalar::F32, Scalar::Bool).is_none());
    }

    #[test]
    fn float_comparisons_follow_rust() {
        let nan = f32::NAN.to_register();
        assert_eq!(bin(BinaryOp::Ne, Scalar::F32, nan, nan), 1);
        assert_eq!(bin(BinaryOp::Eq, Scalar::F32, nan, nan), 0);
        assert_eq!(bin(BinaryOp::Ge, Scalar::F32, nan, nan), 0);
    }
}
