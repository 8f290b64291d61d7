//! What [`crate::Buffer`]s and [`crate::SimBuffer`]s hold: the kernel language's scalars and
//! `#[derive(DeviceCopy)]` structs, and how their values become the simulator's bytes.
//!
//! On a GPU an element is copied as its bytes (cudarc's `DeviceRepr`). The simulator's
//! memory is bytes too, but a struct's padding is never read from the host value (those
//! bytes are uninitialised): each field is copied to its offset and the padding stays zero,
//! as in a struct passed by value (`__private::sim_struct_value`).

use cudajit_core::layout::StructLayout;
use cudajit_core::Scalar;
use cudajit_sim::{DeviceMemory, RegisterValue, SimArg};

/// How one element lies in memory.
#[doc(hidden)]
#[derive(Clone, Copy, Debug)]
pub enum ElementLayout {
    Scalar(Scalar),
    /// A `#[repr(C)]` struct of scalar fields, with the layout rustc gave it.
    Struct(&'static StructLayout),
}

impl ElementLayout {
    /// Bytes per element, padding included: the stride of a slice.
    pub fn size(self) -> usize {
        match self {
            ElementLayout::Scalar(scalar) => scalar.size_bytes() as usize,
            ElementLayout::Struct(layout) => layout.size,
        }
    }
}

/// A type buffers can hold: every scalar of the kernel language, and every
/// `#[derive(DeviceCopy)]` struct (the derive implements it), so `stream.clone_htod(&bodies)`
/// makes the `&[Body]` of a kernel on the GPU and on the simulator alike.
///
/// # Safety
/// `ELEMENT` must be the type's layout: for a struct, its size and every field's scalar
/// type and offset, as `size_of` and `offset_of!` give them (the derive computes them so).
/// Every bit pattern of each field's scalar must be a valid value of the field, except that
/// a `bool` is only ever 0 or 1, and all-zero bytes must be a valid value of the type.
pub unsafe trait BufferElement:
    cudarc::driver::DeviceRepr + cudarc::driver::ValidAsZeroBits + Copy
{
    #[doc(hidden)]
    const ELEMENT: ElementLayout;
}

macro_rules! scalar_elements {
    ($($t:ty),*) => {$(
        // SAFETY: a scalar is its own one field at offset 0.
        unsafe impl BufferElement for $t {
            const ELEMENT: ElementLayout = ElementLayout::Scalar(<$t as RegisterValue>::SCALAR);
        }
    )*};
}

scalar_elements!(i8, i16, i32, i64, isize, u8, u16, u32, u64, usize, bool, f32, f64);
scalar_elements!(half::f16, half::bf16);

/// The bytes of `values` as the simulator's memory holds them.
pub fn encode<T: BufferElement>(values: &[T]) -> Vec<u8> {
    let size = T::ELEMENT.size();
    let mut bytes = vec![0u8; values.len() * size];
    for (value, out) in values.iter().zip(bytes.chunks_exact_mut(size)) {
        for (offset, len) in fields(T::ELEMENT) {
            // SAFETY: the field lies inside the value (`BufferElement`'s contract), and a
            // scalar field has no padding, so its bytes are initialised.
            let field = unsafe {
                core::slice::from_raw_parts((value as *const T as *const u8).add(offset), len)
            };
            out[offset..offset + len].copy_from_slice(field);
        }
    }
    bytes
}

/// The values held by `bytes` (a multiple of the element size).
pub fn decode<T: BufferElement>(bytes: &[u8]) -> Vec<T> {
    let size = T::ELEMENT.size();
    bytes
        .chunks_exact(size)
        .map(|chunk| {
            // SAFETY: all-zero bytes are a valid `T` (`ValidAsZeroBits`).
            let mut value: T = unsafe { core::mem::zeroed() };
            for (offset, len) in fields(T::ELEMENT) {
                let field = &chunk[offset..offset + len];
                // A `bool` the host reads must be 0 or 1 whatever the kernel stored.
                let is_bool = len == 1 && is_bool_field(T::ELEMENT, offset);
                let normalised = [u8::from(field[0] != 0)];
                let field = if is_bool { &normalised[..] } else { field };
                // SAFETY: the field lies inside the value, and any bytes are a valid value
                // of a scalar field other than `bool`, normalised above.
                unsafe {
                    core::ptr::copy_nonoverlapping(
                        field.as_ptr(),
                        (&mut value as *mut T as *mut u8).add(offset),
                        len,
                    )
                }
            }
            value
        })
        .collect()
}

/// `len` elements of type `T` of `memory` from element `first`, as a slice argument.
pub(crate) fn slice_arg<T: BufferElement>(
    memory: &DeviceMemory,
    first: usize,
    len: usize,
    mutable: bool,
) -> SimArg<'_> {
    match T::ELEMENT {
        ElementLayout::Scalar(elem) => SimArg::Slice {
            memory,
            elem,
            first,
            len,
            mutable,
        },
        ElementLayout::Struct(layout) => SimArg::StructSlice {
            memory,
            size: layout.size as u32,
            first,
            len,
            mutable,
        },
    }
}

/// Each scalar's byte offset and size (of nested structs and arrays too): the bytes the
/// host copies, padding left out.
fn fields(element: ElementLayout) -> impl Iterator<Item = (usize, usize)> {
    scalars(element)
        .into_iter()
        .map(|(offset, scalar)| (offset, scalar.size_bytes() as usize))
}

/// Each scalar of the element with its byte offset.
fn scalars(element: ElementLayout) -> Vec<(usize, Scalar)> {
    match element {
        ElementLayout::Scalar(scalar) => vec![(0, scalar)],
        ElementLayout::Struct(layout) => layout.scalar_fields(),
    }
}

fn is_bool_field(element: ElementLayout, offset: usize) -> bool {
    scalars(element)
        .iter()
        .any(|&(at, scalar)| at == offset && scalar == Scalar::Bool)
}

#[cfg(test)]
mod tests {
    use super::*;
    use cudajit_core::layout::FieldLayout;

    #[derive(Clone, Copy, Debug, PartialEq)]
    #[repr(C)]
    struct Padded {
        flag: bool,
        value: f64,
    }

    // SAFETY: the layout below is the type's (checked by `layout_is_the_types`).
    unsafe impl cudarc::driver::DeviceRepr for Padded {}
    unsafe impl cudarc::driver::ValidAsZeroBits for Padded {}
    unsafe impl BufferElement for Padded {
        const ELEMENT: ElementLayout = ElementLayout::Struct(&StructLayout {
            name: "Padded",
            fields: &[
                FieldLayout {
                    name: "flag",
                    ty: cudajit_core::layout::FieldType::Scalar(Scalar::Bool),
                    offset: core::mem::offset_of!(Padded, flag),
                },
                FieldLayout {
                    name: "value",
                    ty: cudajit_core::layout::FieldType::Scalar(Scalar::F64),
                    offset: core::mem::offset_of!(Padded, value),
                },
            ],
            size: core::mem::size_of::<Padded>(),
            align: core::mem::align_of::<Padded>(),
            enum_repr: None,
            variants: &[],
            drop: None,
            methods: cudajit_core::methods::MethodTable::NONE,
            args: &[],
        });
    }

    #[test]
    fn structs_round_trip_with_zeroed_padding() {
        let values = [
            Padded {
                flag: true,
                value: -2.5,
            },
            Padded {
                flag: false,
                value: 7.0,
            },
        ];
        let bytes = encode(&values);
        assert_eq!(bytes.len(), 32);
        assert_eq!(&bytes[..8], &[1, 0, 0, 0, 0, 0, 0, 0], "padding is zero");
        assert_eq!(&bytes[8..16], &(-2.5f64).to_le_bytes());
        assert_eq!(decode::<Padded>(&bytes), values);
    }

    #[test]
    fn a_bool_field_reads_back_as_0_or_1() {
        let mut bytes = encode(&[Padded {
            flag: false,
            value: 1.0,
        }]);
        bytes[0] = 0x80;
        assert!(decode::<Padded>(&bytes)[0].flag);
    }

    #[test]
    fn scalars_are_their_little_endian_bytes() {
        let bytes = encode(&[1.5f32, -3.0]);
        assert_eq!(&bytes[4..], &(-3.0f32).to_le_bytes());
        assert_eq!(decode::<f32>(&bytes), [1.5, -3.0]);
        assert_eq!(
            decode::<half::bf16>(&encode(&[half::bf16::ONE])),
            [half::bf16::ONE]
        );
    }
}
