//! What [`crate::Buffer`]s and [`crate::SimBuffer`]s hold: the kernel language's scalars and
//! `#[derive(DeviceCopy)]` structs, and how their values become the simulator's bytes.
//!
//! On a GPU an element is copied as its bytes: through cudarc's own copies for a type with
//! cudarc's `DeviceRepr` ([`AsItself`]: every scalar but `f16`/`bf16`, and `DeviceCopy`
//! structs), and as their `u16` bits for `half::f16` and `half::bf16` ([`AsBits`]), which
//! are cudarc's `DeviceRepr` only with cudarc's `f16` feature. cudajit leaves that feature
//! off: it enables `half`'s `rand_distr`, which put `rand` and eight more crates into every
//! dependant's build. The simulator's memory is bytes too, but a struct's padding is never read from the host value (those
//! bytes are uninitialised): each field is copied to its offset and the padding stays zero,
//! as in a struct passed by value (`__private::sim_struct_value`).

use std::sync::Arc;

use cudajit_core::layout::StructLayout;
use cudajit_core::Scalar;
use cudajit_sim::{DeviceMemory, RegisterValue, SimArg};
use cudarc::driver::{
    CudaSlice, CudaStream, DeviceRepr, DeviceSlice, DriverError, ValidAsZeroBits,
};

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
/// `Cuda`'s copies must copy the type's bytes.
pub unsafe trait BufferElement: Copy {
    #[doc(hidden)]
    const ELEMENT: ElementLayout;
    /// How GPU memory of the type is allocated and copied: [`AsItself`] for a type with
    /// cudarc's `DeviceRepr`, [`AsBits`] for `f16` and `bf16`.
    #[doc(hidden)]
    type Cuda: CudaCopy<Self>;
}

macro_rules! scalar_elements {
    ($copy:ty: $($t:ty),*) => {$(
        // SAFETY: a scalar is its own one field at offset 0, and its copies copy its bytes.
        unsafe impl BufferElement for $t {
            const ELEMENT: ElementLayout = ElementLayout::Scalar(<$t as RegisterValue>::SCALAR);
            type Cuda = $copy;
        }
    )*};
}

scalar_elements!(AsItself: i8, i16, i32, i64, isize, u8, u16, u32, u64, usize, bool, f32, f64);
scalar_elements!(AsBits: half::f16, half::bf16);

/// GPU memory of `T`: allocated, filled from the host and read back on a cudarc stream.
#[doc(hidden)]
pub trait CudaCopy<T> {
    /// `len` zeros.
    fn alloc_zeros(stream: &Arc<CudaStream>, len: usize) -> Result<CudaSlice<T>, DriverError>;
    /// A copy of `data`.
    fn clone_htod(stream: &Arc<CudaStream>, data: &[T]) -> Result<CudaSlice<T>, DriverError>;
    /// Copies `data` into the start of `dst` (cudarc's panic when `data` is longer).
    fn memcpy_htod(
        stream: &Arc<CudaStream>,
        data: &[T],
        dst: &mut CudaSlice<T>,
    ) -> Result<(), DriverError>;
    /// A copy of `src`'s elements.
    fn clone_dtoh(stream: &Arc<CudaStream>, src: &CudaSlice<T>) -> Result<Vec<T>, DriverError>;
}

/// cudarc's own copies, for a type with its `DeviceRepr` (`#[derive(DeviceCopy)]` structs
/// and every scalar but `f16`/`bf16`).
#[doc(hidden)]
pub enum AsItself {}

impl<T: DeviceRepr + ValidAsZeroBits> CudaCopy<T> for AsItself {
    fn alloc_zeros(stream: &Arc<CudaStream>, len: usize) -> Result<CudaSlice<T>, DriverError> {
        stream.alloc_zeros(len)
    }
    fn clone_htod(stream: &Arc<CudaStream>, data: &[T]) -> Result<CudaSlice<T>, DriverError> {
        stream.clone_htod(data)
    }
    fn memcpy_htod(
        stream: &Arc<CudaStream>,
        data: &[T],
        dst: &mut CudaSlice<T>,
    ) -> Result<(), DriverError> {
        stream.memcpy_htod(data, dst)
    }
    fn clone_dtoh(stream: &Arc<CudaStream>, src: &CudaSlice<T>) -> Result<Vec<T>, DriverError> {
        stream.clone_dtoh(src)
    }
}

/// `f16` and `bf16` copied as their `u16` bits (`half`'s slice casts), so that cudarc's
/// `f16` feature is not needed: the `CudaSlice<f16>` is made from an allocation of `u16`s
/// (cudarc's `leak` and `upgrade_device_ptr`), and copies go through a `u16` view of it,
/// which records the same events as the slice's own copies would.
#[doc(hidden)]
pub enum AsBits {}

/// A 16-bit float, a `#[repr(transparent)]` `u16` in `half`.
#[doc(hidden)]
pub trait HalfBits: Copy {
    /// The values' bits, in place.
    fn bits(values: &[Self]) -> &[u16];
    /// The values of `bits`, in place.
    fn from_bits(bits: Vec<u16>) -> Vec<Self>;
}

macro_rules! half_bits {
    ($($t:ty),*) => {$(
        const _: () = assert!(
            core::mem::size_of::<$t>() == 2 && core::mem::align_of::<$t>() == 2
        );
        impl HalfBits for $t {
            fn bits(values: &[Self]) -> &[u16] {
                half::slice::HalfFloatSliceExt::reinterpret_cast(values)
            }
            fn from_bits(bits: Vec<u16>) -> Vec<Self> {
                half::vec::HalfBitsVecExt::reinterpret_into(bits)
            }
        }
    )*};
}

half_bits!(half::f16, half::bf16);

impl AsBits {
    /// `len` elements whose contents are not yet written.
    ///
    /// # Safety
    /// The memory must be written before it is read.
    unsafe fn alloc<T: HalfBits>(
        stream: &Arc<CudaStream>,
        len: usize,
    ) -> Result<CudaSlice<T>, DriverError> {
        // SAFETY: the caller writes the memory before it is read.
        let bits = unsafe { stream.alloc::<u16>(len) }?;
        // SAFETY: the allocation, now owned by the returned slice alone, holds `len` `u16`s,
        // the size of `len` `T`s (`half_bits!`'s assertion); nothing was enqueued on it, so
        // no event of the `u16` slice is lost.
        Ok(unsafe { stream.upgrade_device_ptr::<T>(bits.leak(), len) })
    }
}

/// A `u16` view of the whole of `slice`, for a copy.
macro_rules! bits_view {
    ($slice:expr, $transmute:ident) => {{
        let len = DeviceSlice::len($slice);
        // SAFETY: a `T` is the bytes of a `u16` (`HalfBits`), so the view covers exactly the
        // slice's memory, and any bits are a valid `T`.
        unsafe { $slice.$transmute::<u16>(len) }
            .expect("a u16 view of 16-bit floats covers the same bytes")
    }};
}

impl<T: HalfBits> CudaCopy<T> for AsBits {
    fn alloc_zeros(stream: &Arc<CudaStream>, len: usize) -> Result<CudaSlice<T>, DriverError> {
        // SAFETY: written (zeroed) right away.
        let mut slice = unsafe { AsBits::alloc::<T>(stream, len) }?;
        stream.memset_zeros(&mut bits_view!(&mut slice, transmute_mut))?;
        Ok(slice)
    }
    fn clone_htod(stream: &Arc<CudaStream>, data: &[T]) -> Result<CudaSlice<T>, DriverError> {
        // SAFETY: written (all of it: `data.len()` elements) right away.
        let mut slice = unsafe { AsBits::alloc::<T>(stream, data.len()) }?;
        Self::memcpy_htod(stream, data, &mut slice)?;
        Ok(slice)
    }
    fn memcpy_htod(
        stream: &Arc<CudaStream>,
        data: &[T],
        dst: &mut CudaSlice<T>,
    ) -> Result<(), DriverError> {
        stream.memcpy_htod(T::bits(data), &mut bits_view!(dst, transmute_mut))
    }
    fn clone_dtoh(stream: &Arc<CudaStream>, src: &CudaSlice<T>) -> Result<Vec<T>, DriverError> {
        Ok(T::from_bits(
            stream.clone_dtoh(&bits_view!(src, transmute))?,
        ))
    }
}

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
            // SAFETY: all-zero bytes are a valid `T` (`BufferElement`'s contract).
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
        type Cuda = AsItself;
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
