//! The specialisation a launch asks for, built without allocating.

use cudajit_core::ir::Literal;
use cudajit_core::lower::Specialization;
use cudajit_core::Scalar;

/// Most generic and `#[comptime]` parameters a kernel may have.
const CAPACITY: usize = 16;

#[derive(Clone, Copy, Debug)]
enum Part {
    Type(&'static str, Scalar),
    Constant(&'static str, Scalar, u64),
}

/// The values of a kernel's generic and `#[comptime]` parameters for one launch, with a
/// 64-bit identity computed as they are added; the launch path compares identities and
/// builds a [`Specialization`] only when the kernel is compiled.
#[derive(Clone, Copy, Debug)]
pub struct SpecBuilder {
    parts: [Option<Part>; CAPACITY],
    len: usize,
    id: u64,
}

impl Default for SpecBuilder {
    fn default() -> Self {
        Self::new()
    }
}

impl SpecBuilder {
    /// No parameters.
    pub const fn new() -> Self {
        SpecBuilder {
            parts: [None; CAPACITY],
            len: 0,
            id: 0xcbf2_9ce4_8422_2325,
        }
    }

    fn push(mut self, part: Part, bits: u64) -> Self {
        // FNV-1a over the values, in order: equal specialisations have equal identities.
        for byte in bits.to_le_bytes() {
            self.id ^= u64::from(byte);
            self.id = self.id.wrapping_mul(0x100_0000_01b3);
        }
        if self.len < CAPACITY {
            self.parts[self.len] = Some(part);
        }
        self.len += 1;
        self
    }

    /// Adds a type parameter.
    #[inline]
    pub fn ty(self, name: &'static str, scalar: Scalar) -> Self {
        self.push(Part::Type(name, scalar), scalar as u64 | 0x100)
    }

    /// Adds a const (or `#[comptime]`) parameter of type `scalar` with value `bits`.
    #[inline]
    pub fn constant(self, name: &'static str, scalar: Scalar, bits: u64) -> Self {
        self.push(Part::Constant(name, scalar, bits), bits)
    }

    /// The identity of the values.
    #[inline]
    pub fn id(&self) -> u64 {
        self.id
    }

    /// Whether more parameters were given than a specialisation can hold.
    pub fn overflowed(&self) -> bool {
        self.len > CAPACITY
    }

    /// The specialisation, for compiling.
    pub fn build(&self) -> Specialization {
        let mut spec = Specialization::default();
        for part in self.parts.iter().flatten() {
            match *part {
                Part::Type(name, scalar) => spec.types.push((name.to_owned(), scalar)),
                Part::Constant(name, scalar, bits) => {
                    let literal = if scalar == Scalar::Bool {
                        Literal::Bool(bits != 0)
                    } else {
                        Literal::Int { bits, ty: scalar }
                    };
                    spec.consts.push((name.to_owned(), literal));
                }
            }
        }
        spec
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identities_follow_values() {
        let a = SpecBuilder::new()
            .ty("T", Scalar::F32)
            .constant("N", Scalar::Usize, 4);
        let b = SpecBuilder::new()
            .ty("T", Scalar::F32)
            .constant("N", Scalar::Usize, 4);
        let c = SpecBuilder::new()
            .ty("T", Scalar::F64)
            .constant("N", Scalar::Usize, 4);
        let d = SpecBuilder::new()
            .ty("T", Scalar::F32)
            .constant("N", Scalar::Usize, 5);
        assert_eq!(a.id(), b.id());
        assert_ne!(a.id(), c.id());
        assert_ne!(a.id(), d.id());
        let spec = a.build();
        assert_eq!(spec.ty("T"), Some(Scalar::F32));
        assert_eq!(
            spec.constant("N"),
            Some(Literal::Int {
                bits: 4,
                ty: Scalar::Usize
            })
        );
    }
}
