//! Layouts of user structs that kernels take by value or in slices
//! (`#[derive(DeviceCopy)]` on a `#[repr(C)]` struct of scalars, structs and arrays).

use crate::Scalar;

/// One field of a [`StructLayout`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct FieldLayout {
    pub name: &'static str,
    pub ty: FieldType,
    /// Byte offset in the struct, as `core::mem::offset_of!` gives it.
    pub offset: usize,
}

/// The type of a struct's field: a scalar, another `DeviceCopy` struct (or enum), or an
/// array of either (`[f32; 4]`, `[Vec3; 2]`, `[[f32; 4]; 4]`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FieldType {
    Scalar(Scalar),
    Struct(&'static StructLayout),
    Array {
        elem: &'static FieldType,
        len: usize,
    },
}

impl FieldType {
    /// The size in bytes, as rustc lays the field out (an array's elements at the
    /// element's size, which includes its trailing padding).
    pub fn size(&self) -> usize {
        match self {
            FieldType::Scalar(scalar) => scalar.size_bytes() as usize,
            FieldType::Struct(layout) => layout.size,
            FieldType::Array { elem, len } => elem.size() * len,
        }
    }

    /// The scalar, if the field is one.
    pub fn scalar(&self) -> Option<Scalar> {
        match self {
            FieldType::Scalar(scalar) => Some(*scalar),
            _ => None,
        }
    }

    /// Every scalar the field holds, with its offset from `base`, in memory order (an
    /// enum is its integer representation).
    fn scalars(&self, base: usize, out: &mut Vec<(usize, Scalar)>) {
        match self {
            FieldType::Scalar(scalar) => out.push((base, *scalar)),
            FieldType::Struct(layout) => match layout.enum_repr {
                Some(repr) => out.push((base, repr)),
                None => {
                    for field in layout.fields {
                        field.ty.scalars(base + field.offset, out);
                    }
                }
            },
            FieldType::Array { elem, len } => {
                for k in 0..*len {
                    elem.scalars(base + k * elem.size(), out);
                }
            }
        }
    }

    /// The struct layouts the field names, itself included, innermost last.
    fn layouts(&self, out: &mut Vec<&'static StructLayout>) {
        match self {
            FieldType::Scalar(_) => {}
            FieldType::Struct(layout) => {
                if !out.iter().any(|l| l.name == layout.name) {
                    out.push(layout);
                    for field in layout.fields {
                        field.ty.layouts(out);
                    }
                }
            }
            FieldType::Array { elem, .. } => elem.layouts(out),
        }
    }
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
    /// For a struct with `#[device_drop(f)]`: the `#[extern_device]` function the device
    /// calls with `&mut` a local of the type at the end of its scope.
    pub drop: Option<DropHook>,
    /// The functions of the struct's `#[device]` impl blocks: methods, associated
    /// functions and operators (see [`crate::methods`]).
    pub methods: crate::methods::MethodTable,
}

/// The function a type's locals are passed to (`&mut`) at the end of their scope, as C++
/// runs a destructor: `#[derive(DeviceCopy)]` with `#[device_drop(f)]`. NCCL's barrier
/// sessions store their epoch for the next kernel that way.
#[derive(Clone, Copy)]
pub struct DropHook(pub fn() -> &'static crate::captured::CapturedFunction);

impl DropHook {
    /// The hook's captured function.
    pub fn function(&self) -> &'static crate::captured::CapturedFunction {
        (self.0)()
    }
}

// Compared, hashed and printed by the function they name, so a layout's `Debug` (part of
// cache keys) does not depend on where the function pointer points.
impl PartialEq for DropHook {
    fn eq(&self, other: &Self) -> bool {
        let (a, b) = (self.function(), other.function());
        a.name == b.name && a.source_hash == b.source_hash
    }
}

impl Eq for DropHook {}

impl std::hash::Hash for DropHook {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.function().name.hash(state);
        self.function().source_hash.hash(state);
    }
}

impl std::fmt::Debug for DropHook {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "DropHook({})", self.function().name)
    }
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

    /// Every scalar the struct holds, nested structs' and arrays' included, with its byte
    /// offset, in memory order: what the host copies (padding left out).
    pub fn scalar_fields(&self) -> Vec<(usize, Scalar)> {
        let mut out = Vec::new();
        for field in self.fields {
            field.ty.scalars(field.offset, &mut out);
        }
        out
    }

    /// The layouts of the structs the fields name, at any depth (not this one's).
    pub fn nested_layouts(&self) -> Vec<&'static StructLayout> {
        let mut out = Vec::new();
        for field in self.fields {
            field.ty.layouts(&mut out);
        }
        out
    }

    /// Every `#[device]` function of the struct: its operator slots' and the blocks no slot
    /// holds (inherent blocks, user traits' impls and those traits' default methods).
    pub fn device_functions(&self) -> impl Iterator<Item = &'static crate::CapturedFunction> {
        let blocks = crate::methods::blocks_of(self.name).flat_map(|block| {
            let defaults = block
                .trait_name
                .into_iter()
                .flat_map(crate::methods::defaults_of);
            block.functions.iter().copied().chain(defaults)
        });
        self.methods.functions().chain(blocks)
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
    message = "`{Self}` is not a `DeviceCopy` type, which a kernel needs to take or build it",
    label = "kernels take and build scalars, slices of scalars and `#[derive(DeviceCopy)]` structs (with named fields, tuple structs, unit structs) and enums",
    note = "add `#[derive(Clone, Copy, DeviceCopy)]` to it (a `#[repr(C)]` struct of scalars, a unit struct, or a fieldless enum with `#[repr(u8)]`..`#[repr(i64)]`)"
)]
pub unsafe trait DeviceStruct: Copy + 'static {
    /// The layout.
    const LAYOUT: StructLayout;
}

/// The most elements a tuple passed to or returned from a `#[device]` function may have.
pub const MAX_TUPLE_ELEMENTS: usize = 16;

const TUPLE_FIELD_NAMES: [&str; MAX_TUPLE_ELEMENTS] = [
    "0", "1", "2", "3", "4", "5", "6", "7", "8", "9", "10", "11", "12", "13", "14", "15",
];

/// The layout of a tuple of scalars on the device: a `#[repr(C)]` struct with fields `0`,
/// `1`, .. in order, named like the tuple type (`(f32, u32)`). Interned: one layout per
/// distinct tuple type for the life of the process (there are as many as tuple types in
/// the program's device functions), so it can live in `&'static` tables like the derived
/// ones. `None` for an empty tuple or one of more than [`MAX_TUPLE_ELEMENTS`].
pub fn tuple_layout(elements: &[Scalar]) -> Option<&'static StructLayout> {
    use std::collections::HashMap;
    use std::sync::{Mutex, OnceLock};
    static LAYOUTS: OnceLock<Mutex<HashMap<Vec<Scalar>, &'static StructLayout>>> = OnceLock::new();
    if elements.is_empty() || elements.len() > MAX_TUPLE_ELEMENTS {
        return None;
    }
    let mut layouts = LAYOUTS
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    let layout = layouts.entry(elements.to_vec()).or_insert_with(|| {
        let mut offset: usize = 0;
        let mut align: usize = 1;
        let fields: Vec<FieldLayout> = elements
            .iter()
            .zip(TUPLE_FIELD_NAMES)
            .map(|(&ty, name)| {
                let size = ty.size_bytes() as usize;
                offset = offset.next_multiple_of(size);
                align = align.max(size);
                let field = FieldLayout {
                    name,
                    ty: FieldType::Scalar(ty),
                    offset,
                };
                offset += size;
                field
            })
            .collect();
        let names: Vec<&str> = elements.iter().map(|s| s.rust_name()).collect();
        Box::leak(Box::new(StructLayout {
            name: Box::leak(format!("({})", names.join(", ")).into_boxed_str()),
            fields: Box::leak(fields.into_boxed_slice()),
            size: offset.next_multiple_of(align),
            align,
            enum_repr: None,
            variants: &[],
            drop: None,
            methods: crate::methods::MethodTable::NONE,
        }))
    });
    Some(*layout)
}

/// The interned tuple layout named `name` (`(f32, u32)`), if one was made.
pub fn tuple_layout_named(name: &str) -> Option<&'static StructLayout> {
    let inner = name.strip_prefix('(')?.strip_suffix(')')?;
    let elements: Option<Vec<Scalar>> = inner.split(", ").map(Scalar::from_rust_name).collect();
    tuple_layout(&elements?)
}
