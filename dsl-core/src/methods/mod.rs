//! Methods and operator impls of `#[derive(DeviceCopy)]` structs, as the device sees them.
//!
//! `#[device]` on an `impl` block captures each of its functions like a `#[device]` function,
//! under a name that says whose it is: `Vec3::length` for an inherent method or associated
//! function, `<Vec3 as Mul<f32>>::mul` for an operator. A kernel finds them through the
//! struct, not through its own syntax: the macro cannot know the type of `v` in
//! `v.length()` or `a + b`, lowering can. So the struct's layout carries a
//! [`MethodTable`], which the derive fills from fixed *slots*: one associated constant per
//! operator impl a struct can have (one per operator trait and right-hand type). A `#[device]` impl block defines its slot as an inherent constant of
//! the struct; every other slot resolves to [`NoDeviceImpls`]'s empty default, because
//! Rust looks up inherent associated items before trait ones. No registry, no run-time
//! discovery: rustc links each table. The blocks no fixed slot can name, a struct's
//! inherent blocks (it may have several) and its impls of user traits, are rows the linker
//! gathers (`blocks.rs`).

mod blocks;
mod slots;

pub use blocks::{
    blocks_of, defaults_of, AssociatedType, DeviceImplBlock, DeviceTraitDefaults,
    DEVICE_IMPL_BLOCKS, DEVICE_TRAIT_DEFAULTS,
};
pub use slots::NoDeviceImpls;

use crate::ast::BinaryOp;
use crate::captured::CapturedFunction;
use crate::Scalar;

/// The `#[device]` functions of a struct's impl blocks, slot by slot (see the module).
#[derive(Clone, Copy)]
pub struct MethodTable(pub fn() -> &'static [&'static [&'static CapturedFunction]]);

impl MethodTable {
    /// No methods: enums, tuples, and the structs written by hand.
    pub const NONE: MethodTable = MethodTable(no_slots);

    /// Every function of every slot.
    pub fn functions(&self) -> impl Iterator<Item = &'static CapturedFunction> {
        (self.0)().iter().flat_map(|slot| slot.iter().copied())
    }
}

fn no_slots() -> &'static [&'static [&'static CapturedFunction]] {
    &[]
}

// Compared, hashed and printed by the functions' names and source hashes, so a layout's
// `Debug` (part of cache keys) does not depend on where function pointers point.
impl PartialEq for MethodTable {
    fn eq(&self, other: &Self) -> bool {
        self.functions()
            .map(|f| (f.name, f.source_hash))
            .eq(other.functions().map(|f| (f.name, f.source_hash)))
    }
}

impl Eq for MethodTable {}

impl std::hash::Hash for MethodTable {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        for function in self.functions() {
            function.name.hash(state);
            function.source_hash.hash(state);
        }
    }
}

impl std::fmt::Debug for MethodTable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list()
            .entries(self.functions().map(|function| function.name))
            .finish()
    }
}

/// The types whose method calls in kernel bodies the macro checks at compile time
/// (`v.length()`, `x.to_degrees()`): scalars, `DeviceCopy` structs, slices and arrays, by
/// value, so a check on `&Vec3` or `&mut Vec3` (`self` of `&self`) dereferences to the
/// struct before it falls back to the "not a device method" error.
pub trait MethodReceiver {}

macro_rules! scalar_receivers {
    ($($ty:ty),*) => { $(impl MethodReceiver for $ty {})* };
}

scalar_receivers!(
    bool,
    i8,
    i16,
    i32,
    i64,
    isize,
    u8,
    u16,
    u32,
    u64,
    usize,
    f32,
    f64,
    half::f16,
    half::bf16
);

impl<T: crate::layout::DeviceStruct> MethodReceiver for T {}
impl<T> MethodReceiver for [T] {}
impl<T, const N: usize> MethodReceiver for [T; N] {}
// A `&mut [T]` receiver (`y.swap(0, 1)` on a `&mut [f32]` parameter) checks as itself: its
// dereferences never reach a `&[T]`, where the check of a `&[T]` one stops. No `#[device]`
// method exists on slices, so nothing real is shadowed.
impl<T> MethodReceiver for &mut [T] {}
impl<T, const N: usize> MethodReceiver for &mut [T; N] {}
// `a.total_cmp(&b).is_lt()`: the check of `is_lt` names `Ordering` rather than failing on
// the check's own marker.
impl MethodReceiver for core::cmp::Ordering {}

/// What an operator trait's method does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OperatorKind {
    /// `a op b`, by value: `Add::add(self, rhs) -> Output`.
    Binary(BinaryOp),
    /// `a op= b`: `AddAssign::add_assign(&mut self, rhs)`.
    Assign(BinaryOp),
    /// `-a`: `Neg::neg(self) -> Output`.
    Neg,
    /// `a == b` (and `a != b`): `PartialEq::eq(&self, &rhs) -> bool`, and `ne` if the impl
    /// writes one.
    Eq,
    /// `v[i]` read: `Index::index(&self, i) -> &Output`, inlined to the place it returns.
    Index,
    /// `v[i]` written: `IndexMut::index_mut(&mut self, i) -> &mut Output`, inlined too.
    IndexMut,
}

/// An operator trait a `#[device]` impl block may implement.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OperatorTrait {
    /// The trait's name in `core::ops`.
    pub name: &'static str,
    /// Its one method.
    pub method: &'static str,
    pub kind: OperatorKind,
}

const fn operator(name: &'static str, method: &'static str, kind: OperatorKind) -> OperatorTrait {
    OperatorTrait { name, method, kind }
}

/// The operator traits of `core::ops` (and `core::cmp::PartialEq`) the device side runs.
pub const OPERATOR_TRAITS: [OperatorTrait; 14] = [
    operator("Add", "add", OperatorKind::Binary(BinaryOp::Add)),
    operator("Sub", "sub", OperatorKind::Binary(BinaryOp::Sub)),
    operator("Mul", "mul", OperatorKind::Binary(BinaryOp::Mul)),
    operator("Div", "div", OperatorKind::Binary(BinaryOp::Div)),
    operator("Rem", "rem", OperatorKind::Binary(BinaryOp::Rem)),
    operator(
        "AddAssign",
        "add_assign",
        OperatorKind::Assign(BinaryOp::Add),
    ),
    operator(
        "SubAssign",
        "sub_assign",
        OperatorKind::Assign(BinaryOp::Sub),
    ),
    operator(
        "MulAssign",
        "mul_assign",
        OperatorKind::Assign(BinaryOp::Mul),
    ),
    operator(
        "DivAssign",
        "div_assign",
        OperatorKind::Assign(BinaryOp::Div),
    ),
    operator(
        "RemAssign",
        "rem_assign",
        OperatorKind::Assign(BinaryOp::Rem),
    ),
    operator("Neg", "neg", OperatorKind::Neg),
    operator("PartialEq", "eq", OperatorKind::Eq),
    operator("Index", "index", OperatorKind::Index),
    operator("IndexMut", "index_mut", OperatorKind::IndexMut),
];

impl OperatorTrait {
    /// The trait called `name`.
    pub fn named(name: &str) -> Option<OperatorTrait> {
        OPERATOR_TRAITS.into_iter().find(|t| t.name == name)
    }

    /// The trait of a binary operator (`Assign` for `op=`).
    pub fn of_binary(op: BinaryOp, assign: bool) -> Option<OperatorTrait> {
        OPERATOR_TRAITS.into_iter().find(|t| {
            t.kind
                == if assign {
                    OperatorKind::Assign(op)
                } else {
                    OperatorKind::Binary(op)
                }
        })
    }

    /// Whether the trait takes a right-hand operand (all but `Neg`).
    pub fn has_rhs(&self) -> bool {
        self.kind != OperatorKind::Neg
    }

    /// The right-hand sides a `#[device]` impl of the trait may have: `Self` or a scalar
    /// for arithmetic, `Self` for `PartialEq`, an integer for `Index`/`IndexMut` (the
    /// index's type), none for `Neg`.
    pub fn right_hand_sides(&self) -> Vec<Rhs> {
        match self.kind {
            OperatorKind::Neg => vec![Rhs::SelfType],
            OperatorKind::Eq => vec![Rhs::SelfType],
            OperatorKind::Index | OperatorKind::IndexMut => Scalar::ALL
                .into_iter()
                .filter(|s| s.is_integer())
                .map(Rhs::Scalar)
                .collect(),
            OperatorKind::Binary(_) | OperatorKind::Assign(_) => std::iter::once(Rhs::SelfType)
                .chain(Scalar::ALL.into_iter().map(Rhs::Scalar))
                .collect(),
        }
    }

    /// Whether a scalar may be on the left of the struct (`2.0 * v`, `impl Mul<Vec3> for f32`).
    pub fn takes_scalar_left(&self) -> bool {
        matches!(self.kind, OperatorKind::Binary(_))
    }
}

/// The right-hand operand type of an operator impl: the struct itself or a scalar.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rhs {
    /// `impl Add for Vec3`, `impl Add<Vec3> for Vec3`.
    SelfType,
    /// `impl Mul<f32> for Vec3`.
    Scalar(Scalar),
}

/// The captured name of `method` of `ty`'s impl of `operator` (for traits with several
/// methods: `PartialEq`'s `eq` and `ne`): `<Vec3 as PartialEq<Vec3>>::ne`.
pub fn trait_method_function_name(
    ty: &str,
    operator: &OperatorTrait,
    rhs: Rhs,
    method: &str,
) -> String {
    let mut name = operator_function_name(ty, operator, rhs);
    name.truncate(name.len() - operator.method.len());
    name.push_str(method);
    name
}

/// The captured name of the impl of `operator` for the scalar `left` with the struct `ty`
/// on the right: `<f32 as Mul<Vec3>>::mul`.
pub fn scalar_left_function_name(left: Scalar, operator: &OperatorTrait, ty: &str) -> String {
    format!("<{left} as {}<{ty}>>::{}", operator.name, operator.method)
}

/// The slot of a scalar-left impl, a constant of the struct on the right (the scalar's
/// type cannot have one): `impl Mul<Vec3> for f32` is `Vec3::__cudajit_impl_f32_Mul`.
pub fn scalar_left_slot(left: Scalar, operator: &OperatorTrait) -> String {
    format!("__cudajit_impl_{left}_{}", operator.name)
}

/// The captured name of the inherent method or associated function `method` of `ty`.
pub fn method_function_name(ty: &str, method: &str) -> String {
    format!("{ty}::{method}")
}

/// The captured name of `method` (or associated constant) of `ty`'s impl of the user
/// trait `trait_name`: `<Circle as Shape>::area`.
pub fn user_trait_function_name(ty: &str, trait_name: &str, method: &str) -> String {
    format!("<{ty} as {trait_name}>::{method}")
}

/// The captured name of a user trait's default method, compiled per implementing type
/// with `Self` its generic parameter [`TRAIT_SELF`]: `Shape::describe`.
pub fn trait_default_function_name(trait_name: &str, method: &str) -> String {
    format!("{trait_name}::{method}")
}

/// The name of the generic type parameter that stands for `Self` in a trait's default
/// methods.
pub const TRAIT_SELF: &str = "__CudajitSelf";

/// The captured name of `ty`'s impl of `operator` with right-hand side `rhs` (ignored for
/// `Neg`): `<Vec3 as Mul<f32>>::mul`.
pub fn operator_function_name(ty: &str, operator: &OperatorTrait, rhs: Rhs) -> String {
    let trait_name = match (operator.has_rhs(), rhs) {
        (false, _) => operator.name.to_owned(),
        (true, Rhs::SelfType) => format!("{}<{ty}>", operator.name),
        (true, Rhs::Scalar(scalar)) => format!("{}<{scalar}>", operator.name),
    };
    format!("<{ty} as {trait_name}>::{}", operator.method)
}

/// The slot constant of an operator impl: `__cudajit_impl_Mul_f32`, `__cudajit_impl_Add_Self`,
/// `__cudajit_impl_Neg`.
pub fn operator_slot(operator: &OperatorTrait, rhs: Rhs) -> String {
    match (operator.has_rhs(), rhs) {
        (false, _) => format!("__cudajit_impl_{}", operator.name),
        (true, Rhs::SelfType) => format!("__cudajit_impl_{}_Self", operator.name),
        (true, Rhs::Scalar(scalar)) => format!("__cudajit_impl_{}_{scalar}", operator.name),
    }
}

/// Every slot a struct has, in the order of its [`MethodTable`]: each operator trait with
/// `Self` and each scalar on the right, then the scalar-left operators. (Inherent blocks
/// have no slot: a struct may have several, see `blocks.rs`.)
pub fn slot_names() -> Vec<String> {
    let mut names = Vec::new();
    for operator in OPERATOR_TRAITS {
        for rhs in operator.right_hand_sides() {
            names.push(operator_slot(&operator, rhs));
        }
    }
    for operator in OPERATOR_TRAITS.iter().filter(|o| o.takes_scalar_left()) {
        for scalar in Scalar::ALL {
            names.push(scalar_left_slot(scalar, operator));
        }
    }
    names
}

/// The text of `slots.rs`, from [`slot_names`] (a test holds the file to it).
pub fn slots_source() -> String {
    let mut text = String::from(
        "//! The slots of `super::MethodTable`, written by `super::slots_source` (the test\n\
         //! `slots_file_is_current` holds this file to it): one associated constant per impl\n\
         //! block a `DeviceCopy` struct can have, empty unless the struct defines its own.\n\n\
         use crate::captured::CapturedFunction;\n\n\
         /// The empty default of every slot, for every type: `Vec3::__cudajit_impl_Neg` names\n\
         /// this constant unless a `#[device] impl Neg for Vec3` defines the inherent one, which\n\
         /// Rust's lookup prefers. Not implemented by hand; imported by the derive's code only.\n\
         #[allow(non_upper_case_globals)]\n\
         pub trait NoDeviceImpls {\n",
    );
    for name in slot_names() {
        text.push_str(&format!(
            "    const {name}: &'static [&'static CapturedFunction] = &[];\n"
        ));
    }
    text.push_str("}\n\nimpl<T: ?Sized> NoDeviceImpls for T {}\n");
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_file_is_current() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/src/methods/slots.rs");
        // `CUDAJIT_WRITE_SLOTS=1 cargo test -p cudajit-core slots_file_is_current` rewrites it.
        if std::env::var("CUDAJIT_WRITE_SLOTS").as_deref() == Ok("1") {
            std::fs::write(path, slots_source()).unwrap();
        }
        let written = std::fs::read_to_string(path).unwrap_or_default();
        assert!(
            written == slots_source(),
            "dsl-core/src/methods/slots.rs is out of date: write `slots_source()` into it"
        );
    }

    #[test]
    fn names_say_whose_function_it_is() {
        let mul = OperatorTrait::named("Mul").unwrap();
        assert_eq!(
            operator_function_name("Vec3", &mul, Rhs::Scalar(Scalar::F32)),
            "<Vec3 as Mul<f32>>::mul"
        );
        assert_eq!(
            operator_function_name("Vec3", &mul, Rhs::SelfType),
            "<Vec3 as Mul<Vec3>>::mul"
        );
        let neg = OperatorTrait::named("Neg").unwrap();
        assert_eq!(
            operator_function_name("Vec3", &neg, Rhs::SelfType),
            "<Vec3 as Neg>::neg"
        );
        assert_eq!(method_function_name("Vec3", "new"), "Vec3::new");
        let eq = OperatorTrait::named("PartialEq").unwrap();
        assert_eq!(
            trait_method_function_name("Vec3", &eq, Rhs::SelfType, "ne"),
            "<Vec3 as PartialEq<Vec3>>::ne"
        );
        assert_eq!(
            scalar_left_function_name(Scalar::F32, &mul, "Vec3"),
            "<f32 as Mul<Vec3>>::mul"
        );
        assert_eq!(
            scalar_left_slot(Scalar::F32, &mul),
            "__cudajit_impl_f32_Mul"
        );
        assert_eq!(
            OperatorTrait::of_binary(BinaryOp::Sub, true).map(|t| t.name),
            Some("SubAssign")
        );
    }
}
