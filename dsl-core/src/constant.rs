//! Rust constants a kernel names: `TILE`, `u32::MAX`, `core::f32::consts::PI`, or a
//! `const` item of the body.
//!
//! The macro sees only the kernel's tokens, not the constant's definition, so it cannot
//! know the value. It records the names a body uses (in [`crate::ast::FunctionSource`])
//! and has the generated code evaluate each one in a const context, where rustc computes
//! the value exactly as it would on the host: [`ConstantValue::of`]. At lowering each name
//! becomes a literal of its type, like a const generic parameter, and the values are part
//! of the cache key, so changing a constant recompiles the kernel.

use crate::device::DeviceScalar;
use crate::ir::Literal;
use crate::Scalar;

/// The value rustc gave a constant a kernel names: its scalar type and its bits.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ConstantValue {
    /// The name as the body writes it (`TILE`, `u32::MAX`).
    pub name: &'static str,
    pub ty: Scalar,
    /// The value's bytes as a little-endian integer of `ty`'s width (zero-extended).
    pub bits: u64,
}

/// A Rust type whose constants a kernel can name: the scalars of the kernel language.
#[diagnostic::on_unimplemented(
    message = "a kernel can only name constants of scalar types, not `{Self}`",
    label = "this constant's type is not `bool`, an integer, `f16`, `bf16`, `f32` or `f64`",
    note = "pass other values as kernel parameters (a slice for a table)"
)]
pub trait ConstantScalar: DeviceScalar {}

impl<T: DeviceScalar> ConstantScalar for T {}

impl ConstantValue {
    /// The value of `value`, the constant named `name`, evaluated by rustc in the generated
    /// code's const context.
    pub const fn of<T: ConstantScalar>(name: &'static str, value: &T) -> Self {
        let size = core::mem::size_of::<T>();
        let bytes = value as *const T as *const u8;
        let mut bits = 0u64;
        let mut index = 0;
        while index < size {
            // SAFETY: `index < size_of::<T>()`, and every scalar type is plain bytes without
            // padding.
            let byte = unsafe { *bytes.add(index) } as u64;
            let position = if cfg!(target_endian = "little") {
                index
            } else {
                size - 1 - index
            };
            bits |= byte << (8 * position);
            index += 1;
        }
        ConstantValue {
            name,
            ty: T::SCALAR,
            bits,
        }
    }

    /// The IR literal of this value.
    pub fn literal(&self) -> Literal {
        let ty = self.ty;
        match ty {
            Scalar::Bool => Literal::Bool(self.bits != 0),
            Scalar::F32 => Literal::Float {
                value: f64::from(f32::from_bits(self.bits as u32)),
                ty,
            },
            Scalar::F64 => Literal::Float {
                value: f64::from_bits(self.bits),
                ty,
            },
            Scalar::F16 => Literal::Float {
                value: half::f16::from_bits(self.bits as u16).to_f64(),
                ty,
            },
            Scalar::BF16 => Literal::Float {
                value: half::bf16::from_bits(self.bits as u16).to_f64(),
                ty,
            },
            _ => Literal::Int {
                bits: self.bits,
                ty,
            },
        }
    }

    /// The bytes the cache key records: the name, the type and the bits.
    pub fn key_bytes(&self) -> Vec<u8> {
        let mut bytes = Vec::with_capacity(self.name.len() + 16);
        bytes.extend_from_slice(&(self.name.len() as u64).to_le_bytes());
        bytes.extend_from_slice(self.name.as_bytes());
        bytes.extend_from_slice(self.ty.rust_name().as_bytes());
        bytes.push(0);
        bytes.extend_from_slice(&self.bits.to_le_bytes());
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
        const VALUES: [ConstantValue; 5] = [
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
    fn half_constants_keep_their_bits() {
        const ONE_HALF: ConstantValue = ConstantValue::of("H", &half::f16::from_bits(0x3800));
        assert_eq!(
            ONE_HALF.literal(),
            Literal::Float {
                value: 0.5,
                ty: Scalar::F16
            }
        );
    }
}
