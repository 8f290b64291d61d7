//! Layouts of user structs that kernels take by value or in slices
//! (`#[derive(DeviceCopy)]` on a `#[repr(C)]` struct of scalars).

use crate::Scalar;

/// One field of a [`StructLayout`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct FieldLayout {
    pub name: &'static str,
    pub ty: Scalar,
    /// Byte offset in the struct, as `core::mem::offset_of!` gives it.
    pub offset: usize,
}

/// A variant of a fieldless enum and its discriminant.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct VariantLayout {
    pub name: &'static str,
    pub value: i64,
}

/// The memory layout of a `#[repr(C)]` struct, or of a fieldless `#[repr(u8..i64)]` enum,
/// computed by rustc for the host; the device uses the same bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct StructLayout {
    pub name: &'static str,
    /// The fields of a struct (none for an enum).
    pub fields: &'static [FieldLayout],
    pub size: usize,
    pub align: usize,
    /// For an enum: its integer representation; kernels see it as that integer.
    pub enum_repr: Option<Scalar>,
    /// For an enum: its variants.
    pub variants: &'static [VariantLayout],
}

impl StructLayout {
    /// The discriminant of the variant called `name`.
    pub fn variant(&self, name: &str) -> Option<i64> {
        self.variants
            .iter()
            .find(|v| v.name == name)
            .map(|v| v.value)
    }

    /// The field called `name`, with its index.
    pub fn field(&self, name: &str) -> Option<(usize, &FieldLayout)> {
        self.fields.iter().enumerate().find(|(_, f)| f.name == name)
    }
}

/// Implemented by `#[derive(DeviceCopy)]`: a `#[repr(C)]` struct of scalars that kernels
/// can take by value (`p: Particle`) and in slices (`&[Particle]`).
///
/// # Safety
/// `LAYOUT` must describe the type's real layout, and every bit pattern the device writes
/// into its fields must be valid for them (true of the scalars the derive accepts, `bool`
/// aside, which the device writes as 0 or 1).
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be passed to a kernel",
    label = "kernels take scalars, slices of scalars and `#[derive(DeviceCopy)]` structs and enums",
    note = "derive `DeviceCopy` for it (a `#[repr(C)]` struct of scalars, or a fieldless enum with `#[repr(u8)]`..`#[repr(i64)]`)"
)]
pub unsafe trait DeviceStruct: Copy + 'static {
    /// The layout.
    const LAYOUT: StructLayout;
}
