//! The `#[device]` impl blocks that no fixed slot can hold: a struct's inherent blocks
//! (it may have several) and its impls of user traits (`impl Shape for Circle`).
//!
//! The slots of [`super::MethodTable`] are names the derive enumerates, so they cover
//! what the derive can know in advance: the operator traits, each once per right-hand
//! side. It cannot know which user traits a struct will implement, nor how many inherent
//! blocks it will have, and an impl block cannot tell the derive. So those blocks are
//! elements of one distributed slice, which the linker gathers from every crate of the
//! program (`linkme`: a link section, no code runs at start-up, nothing registers at run
//! time): the table is still static, only its rows come from wherever the blocks are.
//! A block names its struct, so what a kernel reaches is still exactly the blocks of the
//! structs it names ([`StructLayout::device_functions`](crate::layout::StructLayout)).

use linkme::distributed_slice;

use crate::captured::CapturedFunction;
use crate::constant::ConstantValue;

/// One `#[device]` impl block of a struct, outside the fixed slots.
#[derive(Clone, Copy, Debug)]
pub struct DeviceImplBlock {
    /// The struct's name, as its layout has it (`StructLayout::name`).
    pub owner: &'static str,
    /// The trait it implements (its last path segment, `Shape`); `None` for an inherent
    /// block.
    pub trait_name: Option<&'static str>,
    /// Its functions, captured (`Circle::new`, `<Circle as Shape>::area`).
    pub functions: &'static [&'static CapturedFunction],
    /// Its associated constants, as rustc evaluated them (`<Circle as Shape>::SIDES`),
    /// each named `<Circle as Shape>::SIDES`.
    pub constants: &'static [ConstantValue],
    /// Its associated types (`type Out = f32;` of `impl Shape for Circle`), which a generic
    /// function's signature and body name through its type parameter (`S::Out`).
    pub types: &'static [AssociatedType],
}

/// An associated type of a user trait's impl: its name and the type it stands for, as
/// written (`f32`). The device reads scalar types (a struct would need its layout at the
/// function that names it); lowering refuses the others where they are used.
#[derive(Clone, Copy, Debug)]
pub struct AssociatedType {
    /// The name in the trait (`Out`).
    pub name: &'static str,
    /// The type, as written in the impl.
    pub written: &'static str,
}

/// The default methods of a `#[device]` trait (`Shape::describe`), captured generic over
/// the implementing type and compiled for each struct whose impl does not write them: a
/// row the trait adds, found by the impls' `trait_name`.
#[derive(Clone, Copy, Debug)]
pub struct DeviceTraitDefaults {
    /// The trait's name (its last path segment, as impl rows name it).
    pub trait_name: &'static str,
    /// Its default methods, captured.
    pub functions: &'static [&'static CapturedFunction],
}

/// Every `#[device]` trait's default methods.
#[distributed_slice]
pub static DEVICE_TRAIT_DEFAULTS: [DeviceTraitDefaults];

/// The default methods of the `#[device]` trait called `trait_name`.
pub fn defaults_of(trait_name: &str) -> impl Iterator<Item = &'static CapturedFunction> + '_ {
    DEVICE_TRAIT_DEFAULTS
        .iter()
        .filter(move |d| d.trait_name == trait_name)
        .flat_map(|d| d.functions.iter().copied())
}

/// Every `#[device]` impl block of the program outside the fixed slots.
#[distributed_slice]
pub static DEVICE_IMPL_BLOCKS: [DeviceImplBlock];

/// The blocks of the struct called `owner`.
pub fn blocks_of(owner: &str) -> impl Iterator<Item = &'static DeviceImplBlock> + '_ {
    DEVICE_IMPL_BLOCKS.iter().filter(move |b| b.owner == owner)
}
