//! Rust constants a kernel names: `TILE`, `u32::MAX`, `core::f32::consts::PI`, or a
//! `const` item of the body.
//!
//! The macro sees only the kernel's tokens, not the constant's definition, so it cannot
//! know the value. It records the names a body uses (in [`crate::ast::FunctionSource`])
//! and has the generated code evaluate each one in a const context, where rustc computes
//! the value exactly as it would on the host: [`ConstantValue::of`]. At lowering each name
//! becomes a literal of its type, like a const generic parameter, and the values are part
//! of the cache key, so changing a constant recompiles the kernel. A constant array
//! (`const LUT: [u32; 8] = [..];`, a `static` table) becomes a local array holding its
//! values, as CUDA C++ writes a table into a function: immediates where the indices are
//! constants, a table the compiler places where they are not.

use crate::device::DeviceScalar;
use crate::ir::Literal;
use crate::Scalar;

/// The value rustc gave a constant a kernel names: its scalar type, its length if it is an
/// array, and its bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ConstantValue {
    /// The name as the body writes it (`TILE`, `u32::MAX`).
    pub name: &'static str,
    /// The scalar type (of the elements, for an array).
    pub ty: Scalar,
    /// `Some(N)` for an array `[T; N]`.
    pub len: Option<usize>,
    /// The scalar's bytes (an array's first element's) as a little-endian integer of
    /// `ty`'s width (zero-extended).
    pub bits: u64,
    /// The value's bytes as the host lays them out: one scalar, or `N` of them.
    pub bytes: &'static [u8],
}

/// A Rust type whose constants a kernel can name: the scalars of the kernel language and
/// arrays of them.
#[diagnostic::on_unimplemented(
    message = "a kernel can only name constants of scalar types or arrays of them, not `{Self}`",
    label = "this constant's type is not `bool`, an integer, `f16`, `bf16`, `f32`, `f64` or an array of one",
    note = "pass other values as kernel parameters"
)]
pub trait KernelConstant {
    /// The scalar type (of the elements, for an array).
    const SCALAR: Scalar;
    /// `Some(N)` for an array.
    const LEN: Option<usize>;
}

impl<T: DeviceScalar> KernelConstant for T {
    const SCALAR: Scalar = T::SCALAR;
    const LEN: Option<usize> = None;
}

impl<T: DeviceScalar, const N: usize> KernelConstant for [T; N] {
    const SCALAR: Scalar = T::SCALAR;
    const LEN: Option<usize> = Some(N);
}

impl ConstantValue {
    /// The value of `value`, the constant named `name`, evaluated by rustc in the generated
    /// code's const context.
    pub const fn of<T: KernelConstant>(name: &'static str, value: &'static T) -> Self {
        // SAFETY: every scalar type (and so every array of them) is plain bytes without
        // padding, and `value` lives for the program.
        let bytes = unsafe {
            core::slice::from_raw_parts(value as *const T as *const u8, core::mem::size_of::<T>())
        };
        let element = match T::LEN {
            Some(0) => 0,
            Some(n) => core::mem::size_of::<T>() / n,
            None => core::mem::size_of::<T>(),
        };
        let mut bits = 0u64;
        let mut index = 0;
        while index < element {
            let position = if cfg!(target_endian = "little") {
                index
            } else {
                element - 1 - index
            };
            bits |= (bytes[index] as u64) << (8 * position);
            index += 1;
        }
        ConstantValue {
            name,
            ty: T::SCALAR,
            len: T::LEN,
            bits,
            bytes,
        }
    }

    /// Element `index` (0 for a scalar) as a little-endian integer of the type's width.
    fn element_bits(&self, index: usize) -> u64 {
        let size = self.ty.size_bytes() as usize;
        let element = &self.bytes[index * size..(index + 1) * size];
        let mut bits = 0u64;
        for (position, byte) in element.iter().enumerate() {
            let position = if cfg!(target_endian = "little") {
                position
            } else {
                size - 1 - position
            };
            bits |= u64::from(*byte) << (8 * position);
        }
        bits
    }

    /// The IR literal of a scalar constant (of element 0 of an array).
    pub fn literal(&self) -> Literal {
        self.element(0)
    }

    /// The IR literal of element `index` of an array constant.
    pub fn element(&self, index: usize) -> Literal {
        let ty = self.ty;
        let bits = self.element_bits(index);
        match ty {
            Scalar::Bool => Literal::Bool(bits != 0),
            Scalar::F32 => Literal::Float {
                value: f64::from(f32::from_bits(bits as u32)),
                ty,
            },
            Scalar::F64 => Literal::Float {
                value: f64::from_bits(bits),
                ty,
            },
            Scalar::F16 => Literal::Float {
                value: half::f16::from_bits(bits as u16).to_f64(),
                ty,
            },
            Scalar::BF16 => Literal::Float {
                value: half::bf16::from_bits(bits as u16).to_f64(),
                ty,
            },
            _ => Literal::Int { bits, ty },
        }
    }

    /// The bytes the cache key records: the name, the type, the length and the value.
    pub fn key_bytes(&self) -> Vec<u8> {
        let mut bytes = Vec::with_capacity(self.name.len() + self.bytes.len() + 24);
        bytes.extend_from_slice(&(self.name.len() as u64).to_le_bytes());
        bytes.extend_from_slice(self.name.as_bytes());
        bytes.extend_from_slice(self.ty.rust_name().as_bytes());
        bytes.push(0);
        bytes.extend_from_slice(&(self.len.map_or(0, |n| n as u64 + 1)).to_le_bytes());
        bytes.extend_from_slice(&(self.bytes.len() as u64).to_le_bytes());
        bytes.extend_from_slice(self.bytes);
        bytes
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TILE: usize = 32;
    const NEGATIVE: i16 = -3;
    const ON: bool = true;

    #[test]
    fn rustc_values_become_literals_of_their_type() {
        static VALUES: [ConstantValue; 5] = [
            ConstantValue::of("TILE", &TILE),
            ConstantValue::of("NEGATIVE", &NEGATIVE),
            ConstantValue::of("ON", &ON),
            ConstantValue::of("PI", &core::f32::consts::PI),
            ConstantValue::of("f64::MIN", &f64::MIN),
        ];
        assert_eq!(
            VALUES[0].literal(),
            Literal::Int {
                bits: 32,
                ty: Scalar::Usize
            }
        );
        assert_eq!(
            VALUES[1].literal(),
            Literal::Int {
                bits: 0xfffd,
                ty: Scalar::I16
            }
        );
        assert_eq!(VALUES[2].literal(), Literal::Bool(true));
        assert_eq!(
            VALUES[3].literal(),
            Literal::Float {
                value: f64::from(core::f32::consts::PI),
                ty: Scalar::F32
            }
        );
        assert_eq!(
            VALUES[4].literal(),
            Literal::Float {
                value: f64::MIN,
                ty: Scalar::F64
            }
        );
    }

    #[test]
    fn arrays_become_their_elements() {
        const LUT: [i16; 3] = [7, -2, i16::MIN];
        static VALUE: ConstantValue = ConstantValue::of("LUT", &LUT);
        assert_eq!((VALUE.ty, VALUE.len), (Scalar::I16, Some(3)));
        let elements: Vec<Literal> = (0..3).map(|k| VALUE.element(k)).collect();
        let int = |bits| Literal::Int {
            bits,
            ty: Scalar::I16,
        };
        assert_eq!(elements, [int(7), int(0xfffe), int(0x8000)]);
    }

    #[test]
    fn half_constants_keep_their_bits() {
        static H: half::f16 = half::f16::from_bits(0x3800);
        static ONE_HALF: ConstantValue = ConstantValue::of("H", &H);
        assert_eq!(
            ONE_HALF.literal(),
            Literal::Float {
                value: 0.5,
                ty: Scalar::F16
            }
        );
    }
}
