//! The kernel argument ABI: how each kernel parameter travels from the host to the kernel.
//!
//! Two sides must agree on it: the host launcher that `#[kernel]` generates builds
//! `cuLaunchKernel`'s argument list (one pointer per word), and the NVVM writer declares the
//! kernel's parameters (one per word). Both take the words from [`words`], so the choice is
//! made here once:
//!
//! - a scalar is passed as its value, except `bool`, which travels as one byte (0 or 1), as
//!   CUDA C++ passes it (`i8` in NVVM IR; `i1` only in registers);
//! - a `#[derive(DeviceCopy)]` struct is passed by value in the layout rustc gave it (in
//!   NVVM IR a `byval` pointer, as CUDA C++ passes structs), an enum as its integer;
//! - a slice is two words: the device address of its first element, then its element count
//!   as a `u64`;
//! - a tensor map is its 128 bytes by value, 64-byte aligned (`.param .align 64 .b8
//!   map[128]`), annotated `grid_constant` so the kernel reads it where the launch put it:
//!   TMA takes the generic address of a map in parameter memory, as CUTLASS passes
//!   `const __grid_constant__ CUtensorMap`.
//!
//! `#[comptime]` parameters are compiled into the kernel and not passed at all.

use crate::ast::{ParamType, ValueType};
use crate::ir::TypeInner;
use crate::Scalar;

/// What a kernel parameter is, as far as passing it goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ParamClass {
    /// A scalar whose type the kernel's signature names (`f32`, `bool`).
    Scalar(Scalar),
    /// A value passed as its own bytes: a `#[derive(DeviceCopy)]` struct or enum, or a
    /// scalar of a generic type `T`, which the launch fixes.
    Value,
    /// `&[T]` (`mutable: false`) or `&mut [T]` (`mutable: true`).
    Slice { mutable: bool },
    /// `map: TensorMap`, a TMA descriptor.
    TensorMap,
}

/// One entry of a launch's argument list, and one parameter of the kernel in NVVM IR.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ArgWord {
    /// The parameter's value, as its type lays it out in memory.
    Value,
    /// A `bool`, as one byte holding 0 or 1 (a [`BOOL_BYTE`]).
    BoolByte,
    /// The device address of a slice's first element; `mutable` for `&mut [T]`.
    SlicePointer { mutable: bool },
    /// A slice's element count, as a [`SLICE_LENGTH`].
    SliceLength,
    /// A tensor map's [`TENSOR_MAP_BYTES`] bytes, [`TENSOR_MAP_ALIGN`]-aligned, in a
    /// grid-constant parameter.
    TensorMap,
}

/// The size of a tensor map (`CUtensorMap`), as the kernel parameter carries it.
pub const TENSOR_MAP_BYTES: u32 = 128;

/// The alignment the PTX ISA requires of a tensor map in parameter memory.
pub const TENSOR_MAP_ALIGN: u32 = 64;

/// The scalar a `bool` parameter travels as ([`ArgWord::BoolByte`]).
pub const BOOL_BYTE: Scalar = Scalar::U8;

/// The scalar a slice's length travels as ([`ArgWord::SliceLength`]).
pub const SLICE_LENGTH: Scalar = Scalar::U64;

impl ParamClass {
    /// The class of a captured parameter's type, as the launcher sees it. `None` for
    /// references, which only `#[extern_device]` declarations take, and tuples, which no
    /// kernel takes.
    pub fn of_captured(ty: &ParamType) -> Option<ParamClass> {
        match ty {
            ParamType::Value(ValueType::Scalar(scalar)) => Some(ParamClass::Scalar(*scalar)),
            ParamType::Value(ValueType::Generic(_) | ValueType::Struct(_)) => {
                Some(ParamClass::Value)
            }
            ParamType::Value(ValueType::Tuple(_) | ValueType::Array { .. })
            | ParamType::Reference { .. }
            | ParamType::Closure { .. } => None,
            ParamType::Slice { mutable, .. } => Some(ParamClass::Slice { mutable: *mutable }),
            ParamType::TensorMap => Some(ParamClass::TensorMap),
        }
    }

    /// The class of a lowered parameter's type, as the NVVM writer sees it: generics are
    /// resolved and enums are their integers by then. `None` for types no kernel takes.
    pub fn of_ir(ty: &TypeInner) -> Option<ParamClass> {
        match ty {
            TypeInner::Scalar(scalar) => Some(ParamClass::Scalar(*scalar)),
            TypeInner::Struct { .. } => Some(ParamClass::Value),
            TypeInner::Slice { mutable, .. } => Some(ParamClass::Slice { mutable: *mutable }),
            TypeInner::TensorMap => Some(ParamClass::TensorMap),
            TypeInner::Pointer { .. } | TypeInner::Array { .. } => None,
        }
    }
}

/// The words a parameter of class `class` is passed as, in order.
pub fn words(class: ParamClass) -> &'static [ArgWord] {
    match class {
        ParamClass::Scalar(Scalar::Bool) => &[ArgWord::BoolByte],
        ParamClass::Scalar(_) | ParamClass::Value => &[ArgWord::Value],
        ParamClass::Slice { mutable: false } => &[
            ArgWord::SlicePointer { mutable: false },
            ArgWord::SliceLength,
        ],
        ParamClass::Slice { mutable: true } => &[
            ArgWord::SlicePointer { mutable: true },
            ArgWord::SliceLength,
        ],
        ParamClass::TensorMap => &[ArgWord::TensorMap],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_slice_is_its_pointer_then_a_u64_length() {
        for mutable in [false, true] {
            assert_eq!(
                words(ParamClass::Slice { mutable }),
                [ArgWord::SlicePointer { mutable }, ArgWord::SliceLength]
            );
        }
        assert_eq!(SLICE_LENGTH, Scalar::U64);
    }

    #[test]
    fn a_bool_is_one_byte_and_other_values_are_themselves() {
        assert_eq!(words(ParamClass::Scalar(Scalar::Bool)), [ArgWord::BoolByte]);
        assert_eq!(BOOL_BYTE.size_bytes(), 1);
        for class in [ParamClass::Scalar(Scalar::F32), ParamClass::Value] {
            assert_eq!(words(class), [ArgWord::Value]);
        }
    }

    #[test]
    fn the_launcher_and_the_writer_classify_alike() {
        let slice = |mutable| ParamType::Slice {
            elem: ValueType::Scalar(Scalar::F32),
            mutable,
        };
        assert_eq!(
            ParamClass::of_captured(&slice(true)),
            Some(ParamClass::Slice { mutable: true })
        );
        assert_eq!(
            ParamClass::of_captured(&ParamType::Value(ValueType::Scalar(Scalar::Bool))),
            ParamClass::of_ir(&TypeInner::Scalar(Scalar::Bool))
        );
        let point = ValueType::Struct("Point".into());
        assert_eq!(
            ParamClass::of_captured(&ParamType::Value(point.clone())),
            ParamClass::of_ir(&TypeInner::Struct {
                name: "Point".into(),
                members: Vec::new(),
                size: 8,
                align: 4,
            })
        );
        assert_eq!(
            ParamClass::of_captured(&ParamType::TensorMap),
            ParamClass::of_ir(&TypeInner::TensorMap)
        );
        assert_eq!(words(ParamClass::TensorMap), [ArgWord::TensorMap]);
        assert_eq!(
            ParamClass::of_captured(&ParamType::Reference {
                target: point,
                len: None,
                mutable: false,
            }),
            None
        );
    }
}
