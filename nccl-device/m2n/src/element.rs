//! The host types of the element types, and their bytes.

use super::model::DType;
use cudajit::{bf16, f16};

/// A host element type of a reshard's tensor: `bf16`, `f16`, `f32`, or `u8` for the FP8
/// types' bytes.
pub trait Element: Copy + Default + 'static {
    /// Bytes per element.
    const SIZE: usize;
    /// Whether this type holds elements of `dtype`.
    fn holds(dtype: DType) -> bool;
    /// Its little-endian bytes, appended to `out`.
    fn put(self, out: &mut Vec<u8>);
    /// The element of `bytes` (`SIZE` of them).
    fn get(bytes: &[u8]) -> Self;
}

macro_rules! elements {
    ($($t:ty => $($d:ident)|+;)*) => {$(
        impl Element for $t {
            const SIZE: usize = std::mem::size_of::<$t>();
            fn holds(dtype: DType) -> bool {
                matches!(dtype, $(DType::$d)|+)
            }
            fn put(self, out: &mut Vec<u8>) {
                out.extend_from_slice(&self.to_le_bytes());
            }
            fn get(bytes: &[u8]) -> Self {
                let mut b = [0u8; std::mem::size_of::<$t>()];
                b.copy_from_slice(bytes);
                <$t>::from_le_bytes(b)
            }
        }
    )*};
}

elements! {
    bf16 => Bf16;
    f16 => F16;
    f32 => F32;
    u8 => Fp8E4m3 | Fp8E5m2;
}

/// The bytes of `values`.
pub(crate) fn to_bytes<T: Element>(values: &[T]) -> Vec<u8> {
    let mut out = Vec::with_capacity(values.len() * T::SIZE);
    for &v in values {
        v.put(&mut out);
    }
    out
}

/// The elements of `bytes`.
pub(crate) fn from_bytes<T: Element>(bytes: &[u8]) -> Vec<T> {
    bytes.chunks_exact(T::SIZE).map(T::get).collect()
}
