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

    /// The alignment in bytes, as rustc lays the field out.
    pub fn align(&self) -> usize {
        match self {
            FieldType::Scalar(scalar) => scalar.size_bytes() as usize,
            FieldType::Struct(layout) => layout.align,
            FieldType::Array { elem, .. } => elem.align(),
        }
    }

    /// The type as Rust writes it (`f32`, `Hit`, `[f32; 2]`).
    pub fn rust_name(&self) -> String {
        match self {
            FieldType::Scalar(scalar) => scalar.rust_name().to_owned(),
            FieldType::Struct(layout) => layout.name.to_owned(),
            FieldType::Array { elem, len } => format!("[{}; {len}]", elem.rust_name()),
        }
    }

    /// The number of elements of an array field (1 for any other field).
    pub fn element_count(&self) -> usize {
        match self {
            FieldType::Array { len, .. } => *len,
            _ => 1,
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

    /// Whether the field holds a generic struct's instance, at any depth.
    fn names_instance(&self) -> bool {
        match self {
            FieldType::Scalar(_) => false,
            FieldType::Struct(layout) => {
                !layout.args.is_empty() || layout.fields.iter().any(|f| f.ty.names_instance())
            }
            FieldType::Array { elem, .. } => elem.names_instance(),
        }
    }

    /// The field with its structs' layouts as lowering keys them
    /// ([`StructLayout::instance`]).
    fn instance(&self) -> FieldType {
        match self {
            FieldType::Scalar(_) => *self,
            FieldType::Struct(layout) => FieldType::Struct(layout.instance()),
            FieldType::Array { elem, len } => FieldType::Array {
                elem: Box::leak(Box::new(elem.instance())),
                len: *len,
            },
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
    /// A generic struct's arguments (`Pair<f32>`: `[Type(f32)]`), as rustc instantiated
    /// it; empty for other structs. The derive names the layout `Pair`; lowering keys the
    /// instance by its full name, `Pair<f32>` ([`StructLayout::instance`]).
    pub args: &'static [GenericValue],
}

/// A generic argument of a struct's instance: a scalar type or an integer constant
/// (`Row<4>`); `Param` only in a generic struct's *base* layout (no instance: the struct
/// named without its arguments, `Pair { .. }` or `Pair::new(..)`), which has no fields.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum GenericValue {
    Type(Scalar),
    Const(i128),
    Param(&'static str),
}

impl std::fmt::Display for GenericValue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            GenericValue::Type(scalar) => f.write_str(scalar.rust_name()),
            GenericValue::Const(value) => write!(f, "{value}"),
            GenericValue::Param(name) => f.write_str(name),
        }
    }
}

/// The name of a generic struct's instance as lowering keys it: `Pair<f32>`,
/// `KV<u32, f32>`, `Row<4>` (the base's name alone without arguments).
pub fn instance_name(base: &str, args: &[impl std::fmt::Display]) -> String {
    if args.is_empty() {
        return base.to_owned();
    }
    let args: Vec<String> = args.iter().map(|a| a.to_string()).collect();
    format!("{base}<{}>", args.join(", "))
}

/// A struct's name split into its base and its arguments as written: `Pair<f32>` is
/// `("Pair", ["f32"])`, `Vec3` is `("Vec3", [])`.
pub fn split_instance(name: &str) -> (&str, Vec<&str>) {
    match name.split_once('<') {
        Some((base, rest)) if !name.starts_with('(') => {
            let inner = rest.strip_suffix('>').unwrap_or(rest);
            (base, inner.split(',').map(str::trim).collect())
        }
        _ => (name, Vec::new()),
    }
}

/// The base of a struct's name, `Pair` of `Pair<f32>`: what its impl blocks are keyed by.
pub fn base_name(name: &str) -> &str {
    split_instance(name).0
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

    /// Whether this is a generic struct's base layout (named without arguments, no
    /// fields), not a layout rustc computed for an instance.
    pub fn is_generic_base(&self) -> bool {
        self.args
            .iter()
            .any(|arg| matches!(arg, GenericValue::Param(_)))
    }

    /// The layout as lowering keys it: a generic struct's instance renamed to its full
    /// name (`Pair<f32>`), its nested instances too, interned once for the life of the
    /// process (as the tuples' layouts are); any other layout as it is.
    pub fn instance(&'static self) -> &'static StructLayout {
        let rename = !self.args.is_empty() && !self.is_generic_base();
        if self.name.contains('<') || !rename && !self.fields.iter().any(|f| f.ty.names_instance())
        {
            return self;
        }
        use std::collections::HashMap;
        use std::sync::{Mutex, OnceLock};
        type Interned = HashMap<(&'static str, usize, Vec<GenericValue>), &'static StructLayout>;
        static INSTANCES: OnceLock<Mutex<Interned>> = OnceLock::new();
        let key = (self.name, self.size, self.args.to_vec());
        if let Some(found) = INSTANCES
            .get_or_init(Default::default)
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .get(&key)
        {
            return found;
        }
        // Nested layouts first (without the lock: they intern themselves).
        let fields: Vec<FieldLayout> = self
            .fields
            .iter()
            .map(|field| FieldLayout {
                ty: field.ty.instance(),
                ..*field
            })
            .collect();
        let name: &'static str = match rename {
            true => Box::leak(instance_name(self.name, self.args).into_boxed_str()),
            false => self.name,
        };
        let layout: &'static StructLayout = Box::leak(Box::new(StructLayout {
            name,
            fields: Box::leak(fields.into_boxed_slice()),
            ..*self
        }));
        INSTANCES
            .get_or_init(Default::default)
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .entry(key)
            .or_insert(layout)
    }

    /// Every `#[device]` function of the struct: its operator slots' and the blocks no slot
    /// holds (inherent blocks, user traits' impls and those traits' default methods).
    pub fn device_functions(&self) -> impl Iterator<Item = &'static crate::CapturedFunction> {
        let blocks = crate::methods::blocks_of(base_name(self.name)).flat_map(|block| {
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
/// `1`, .. in order, named like the tuple type (`(f32, u32)`). `None` for an empty tuple or
/// one of more than [`MAX_TUPLE_ELEMENTS`]. See [`tuple_layout_of`].
pub fn tuple_layout(elements: &[Scalar]) -> Option<&'static StructLayout> {
    let fields: Vec<FieldType> = elements.iter().map(|&s| FieldType::Scalar(s)).collect();
    tuple_layout_of(&fields)
}

/// The layout of a tuple on the device: a `#[repr(C)]` struct with fields `0`, `1`, .. in
/// order, named like the tuple type (`(f32, u32)`, `(bool, Hit)`, `(bool, [f32; 2])`; an
/// `Option<T>` is the tuple `(bool, T)`). Interned: one layout per distinct tuple type for
/// the life of the process (there are as many as tuple types in the program's device
/// functions), so it can live in `&'static` tables like the derived ones. `None` for an
/// empty tuple or one of more than [`MAX_TUPLE_ELEMENTS`].
pub fn tuple_layout_of(elements: &[FieldType]) -> Option<&'static StructLayout> {
    if elements.is_empty() || elements.len() > MAX_TUPLE_ELEMENTS {
        return None;
    }
    let mut tuples = interned_tuples();
    if let Some(layout) = tuples.by_elements.get(elements) {
        return Some(*layout);
    }
    let mut offset: usize = 0;
    let mut align: usize = 1;
    let fields: Vec<FieldLayout> = elements
        .iter()
        .zip(TUPLE_FIELD_NAMES)
        .map(|(&ty, name)| {
            offset = offset.next_multiple_of(ty.align());
            align = align.max(ty.align());
            let field = FieldLayout { name, ty, offset };
            offset += ty.size();
            field
        })
        .collect();
    let names: Vec<String> = elements.iter().map(FieldType::rust_name).collect();
    let layout: &'static StructLayout = Box::leak(Box::new(StructLayout {
        name: Box::leak(format!("({})", names.join(", ")).into_boxed_str()),
        fields: Box::leak(fields.into_boxed_slice()),
        size: offset.next_multiple_of(align),
        align,
        enum_repr: None,
        variants: &[],
        drop: None,
        methods: crate::methods::MethodTable::NONE,
        args: &[],
    }));
    tuples.by_elements.insert(elements.to_vec(), layout);
    tuples.by_name.insert(layout.name, layout);
    Some(layout)
}

/// The tuple layouts made so far, by element types and by name.
#[derive(Default)]
struct InternedTuples {
    by_elements: std::collections::HashMap<Vec<FieldType>, &'static StructLayout>,
    by_name: std::collections::HashMap<&'static str, &'static StructLayout>,
}

fn interned_tuples() -> std::sync::MutexGuard<'static, InternedTuples> {
    use std::sync::{Mutex, OnceLock};
    static TUPLES: OnceLock<Mutex<InternedTuples>> = OnceLock::new();
    TUPLES
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// The interned tuple layout named `name` (`(f32, u32)`, `(bool, Hit)`), if one was made;
/// a tuple of scalars is made from its name.
pub fn tuple_layout_named(name: &str) -> Option<&'static StructLayout> {
    if let Some(layout) = interned_tuples().by_name.get(name) {
        return Some(*layout);
    }
    let inner = name.strip_prefix('(')?.strip_suffix(')')?;
    let elements: Option<Vec<Scalar>> = inner.split(", ").map(Scalar::from_rust_name).collect();
    tuple_layout(&elements?)
}

/// A struct's layout kept for the life of the process (a tuple's field names it by
/// reference): one copy per distinct layout.
pub fn interned_struct(layout: &StructLayout) -> &'static StructLayout {
    use std::collections::HashSet;
    use std::sync::{Mutex, OnceLock};
    static STRUCTS: OnceLock<Mutex<HashSet<&'static StructLayout>>> = OnceLock::new();
    let mut structs = STRUCTS
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    if let Some(kept) = structs.get(layout) {
        return kept;
    }
    let kept: &'static StructLayout = Box::leak(Box::new(*layout));
    structs.insert(kept);
    kept
}

/// The layouts of the structs a function body names by a path the macro cannot tell
/// generic or not (`Pair { .. }`, `Pair::new(..)`, `Halve`): `probe_layout(&Pair::PROBE)`
/// with `PROBE` an associated constant, looked up where the path resolves. A generic
/// struct's derive defines it on one instance the language reserves (`Pair<GenericBase>`),
/// which Rust's lookup then picks (the only inherent candidate), as a [`GenericProbe`]:
/// the base layout ([`StructLayout::is_generic_base`]). Any other type takes the default of
/// [`ProbeFallback`], a [`Probe`] whose layout is its `DeviceStruct` one, so a type that is
/// not `DeviceCopy` is reported as such at the path.
pub mod probe {
    use super::{DeviceStruct, StructLayout};
    use core::marker::PhantomData;

    /// The probe of a type whose layout is its `DeviceStruct` impl's.
    pub struct Probe<T: ?Sized>(pub PhantomData<T>);

    /// The probe of a generic struct named without arguments: its base layout.
    pub struct GenericProbe<T>(pub PhantomData<T>);

    /// The argument the language puts in a generic struct's reserved instance
    /// (`Pair<GenericArgument>`), which no kernel uses.
    #[derive(Clone, Copy, Debug, Default, PartialEq, PartialOrd)]
    pub struct GenericArgument;

    /// Every type's probe, unless a generic struct's inherent one comes first.
    #[allow(non_upper_case_globals)]
    pub trait ProbeFallback {
        /// The probe.
        const __cudajit_probe: Probe<Self> = Probe(PhantomData);
    }

    impl<T: ?Sized> ProbeFallback for T {}

    /// A generic struct's base layout, implemented by its derive for the reserved instance.
    pub trait GenericBase {
        /// The base layout: the name, the parameters, the impl blocks; no fields.
        const BASE: StructLayout;
    }

    /// What a probe finds.
    pub trait ProbeLayout {
        /// The layout.
        const LAYOUT_OF: &'static StructLayout;
    }

    impl<T: DeviceStruct> ProbeLayout for Probe<T> {
        const LAYOUT_OF: &'static StructLayout = &T::LAYOUT;
    }

    impl<T: GenericBase> ProbeLayout for GenericProbe<T> {
        const LAYOUT_OF: &'static StructLayout = &T::BASE;
    }

    /// The layout a probe finds.
    pub const fn probe_layout<P: ProbeLayout>(_: &P) -> &'static StructLayout {
        P::LAYOUT_OF
    }
}
