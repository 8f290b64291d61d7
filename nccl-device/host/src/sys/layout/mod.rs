//! Struct layouts that change between NCCL releases, and the choice among them.
//!
//! `generated/` holds one module per *layout generation*: releases whose
//! `ncclConfig_t`, `ncclDevCommRequirements`, `ncclCommProperties` and `ncclDevComm`
//! are byte-for-byte identical. It is written by `scripts/regenerate-bindings.sh` from
//! the real headers (sizes, offsets and initializer values as the C++ compiler computes
//! them) and checked twice: by compile-time assertions in each module (rustc's layout
//! equals the probed C layout) and by `tests/layouts.rs` against the headers.
//!
//! Selection is by the loaded release's exact version. A release between or after the
//! generated ones gets the nearest older generation for the self-describing host structs
//! (`ncclConfig_t` carries its own size and version, which NCCL honours), but no
//! requirements or `ncclDevComm`: their layouts change even between patch releases
//! (2.29.3 → 2.29.7, 2.30.3 → 2.30.4), so guessing would corrupt memory.

pub mod generated;

use std::ffi::c_int;
use std::mem::{align_of, size_of};

use crate::error::{NcclError, Result};
use crate::version::{NcclVersion, MIN_SUPPORTED};

/// Offset and size of one field, as the C compiler put it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FieldLayout {
    /// The C struct, e.g. `ncclDevCommRequirements`.
    pub strukt: &'static str,
    /// The C field.
    pub field: &'static str,
    /// `offsetof`.
    pub offset: usize,
    /// `sizeof` the field.
    pub size: usize,
}

/// Size and alignment of one struct.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StructLayout {
    /// The C struct.
    pub strukt: &'static str,
    /// `sizeof`.
    pub size: usize,
    /// `alignof`.
    pub align: usize,
}

/// What cudajit needs to know of `ncclDevComm`, which is opaque to the host and passed
/// to kernels by value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DevCommLayout {
    /// `sizeof(ncclDevComm)`.
    pub size: usize,
    /// `alignof(ncclDevComm)`.
    pub align: usize,
    /// `offsetof(ncclDevComm, rank)`.
    pub rank: usize,
    /// `offsetof(ncclDevComm, nRanks)`.
    pub n_ranks: usize,
    /// `offsetof(ncclDevComm, lsaRank)`.
    pub lsa_rank: usize,
    /// `offsetof(ncclDevComm, lsaSize)`.
    pub lsa_size: usize,
}

/// An `int` field of `ncclDevCommRequirements` that cudajit sets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RequirementField {
    /// `lsaBarrierCount`.
    LsaBarrierCount,
    /// `barrierCount` (2.28.9+).
    BarrierCount,
    /// `railGinBarrierCount` (2.28.9+).
    RailGinBarrierCount,
    /// `worldGinBarrierCount` (2.30+).
    WorldGinBarrierCount,
    /// `ginContextCount` (2.28.9+).
    GinContextCount,
    /// `ginSignalCount` (2.28.9+).
    GinSignalCount,
    /// `ginCounterCount` (2.28.9+).
    GinCounterCount,
}

impl RequirementField {
    /// The C field name.
    pub fn c_name(self) -> &'static str {
        match self {
            RequirementField::LsaBarrierCount => "lsaBarrierCount",
            RequirementField::BarrierCount => "barrierCount",
            RequirementField::RailGinBarrierCount => "railGinBarrierCount",
            RequirementField::WorldGinBarrierCount => "worldGinBarrierCount",
            RequirementField::GinContextCount => "ginContextCount",
            RequirementField::GinSignalCount => "ginSignalCount",
            RequirementField::GinCounterCount => "ginCounterCount",
        }
    }
}

/// `ncclCommQueryProperties`' answer, in the fields every 2.29+ release has.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CommProperties {
    /// `rank`.
    pub rank: i32,
    /// `nRanks`.
    pub n_ranks: i32,
    /// `cudaDev`.
    pub cuda_device: i32,
    /// `deviceApiSupport`: whether `ncclDevCommCreate` can work.
    pub device_api_support: bool,
    /// `multimemSupport` (NVLS; cudajit keeps it off).
    pub multimem_support: bool,
    /// `nLsaTeams` (2.29.7+).
    pub n_lsa_teams: Option<i32>,
    /// `devCommRuntimeVersionSize`: the library's `sizeof(ncclDevComm)` (2.31+).
    pub dev_comm_runtime_size: Option<usize>,
}

/// Builds a generation's `ncclDevCommRequirements`: the initializer with `version` and
/// the given fields set; a field the generation lacks is returned as the error.
pub type RequirementsFn =
    fn(&[(RequirementField, c_int)], u32) -> std::result::Result<RawStruct, RequirementField>;

/// The `ncclCommQueryProperties` half of a generation (2.29+).
#[derive(Debug, Clone, Copy)]
pub struct PropertiesOps {
    /// `NCCL_COMM_PROPERTIES_INITIALIZER` with the given version code.
    pub init: fn(u32) -> RawStruct,
    /// Reads the filled struct.
    pub read: fn(&RawStruct) -> CommProperties,
}

/// One layout generation (see the module docs).
#[derive(Debug)]
pub struct Generation {
    /// The first release of the generation, e.g. `"2.28.3"`.
    pub name: &'static str,
    /// `NCCL_VERSION_CODE` of every release with these layouts.
    pub versions: &'static [u32],
    /// `ncclDevComm`.
    pub dev_comm: DevCommLayout,
    /// Every probed field (for tests).
    pub fields: &'static [FieldLayout],
    /// Every probed struct's size and alignment (for tests).
    pub structs: &'static [StructLayout],
    /// `NCCL_CONFIG_INITIALIZER` with `blocking` and `version` set.
    pub config: fn(bool, u32) -> RawStruct,
    /// `ncclDevCommRequirements` (see [`RequirementsFn`]).
    pub requirements: RequirementsFn,
    /// `ncclCommQueryProperties` support (2.29+).
    pub properties: Option<PropertiesOps>,
}

impl Generation {
    /// The size and alignment of `strukt`, if probed.
    pub fn struct_layout(&self, strukt: &str) -> Option<StructLayout> {
        self.structs.iter().copied().find(|s| s.strukt == strukt)
    }

    /// The releases of this generation, as text.
    pub fn releases(&self) -> Vec<NcclVersion> {
        self.versions
            .iter()
            .map(|&c| NcclVersion::from_code(c))
            .collect()
    }
}

/// Every generation, oldest first.
pub fn generations() -> &'static [&'static Generation] {
    generated::ALL
}

/// Every release with generated layouts, as text, e.g. `"2.28.3, 2.28.7, ..."`.
pub fn known_releases() -> String {
    let all: Vec<String> = generations()
        .iter()
        .flat_map(|g| g.releases())
        .map(|v| v.to_string())
        .collect();
    all.join(", ")
}

/// The layouts for a loaded release.
#[derive(Debug, Clone, Copy)]
pub struct Selection {
    /// The release.
    pub version: NcclVersion,
    /// Its generation, or the nearest older one when `exact` is false.
    pub generation: &'static Generation,
    /// Whether the release itself was probed.
    pub exact: bool,
}

impl Selection {
    /// The generation, if the release was probed; else [`NcclError::UnknownLayout`]
    /// naming `what`.
    pub fn exact(&self, what: &'static str) -> Result<&'static Generation> {
        if self.exact {
            Ok(self.generation)
        } else {
            Err(NcclError::UnknownLayout {
                version: self.version,
                what,
                known: known_releases(),
            })
        }
    }

    /// The `version` value to put into a self-describing struct: the release's own code
    /// when exact, else the code of the generation whose layout is passed.
    pub fn struct_version(&self) -> u32 {
        if self.exact {
            self.version.code()
        } else {
            self.generation.versions[0]
        }
    }
}

/// `version` is older than [`MIN_SUPPORTED`] (the caller reports it with the library's
/// path as [`NcclError::TooOld`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TooOld(pub NcclVersion);

/// Chooses the layouts for `version`.
pub fn select(version: NcclVersion) -> std::result::Result<Selection, TooOld> {
    if version < MIN_SUPPORTED {
        return Err(TooOld(version));
    }
    let code = version.code();
    let mut nearest = None;
    for generation in generations() {
        if generation.versions.contains(&code) {
            return Ok(Selection {
                version,
                generation,
                exact: true,
            });
        }
        if generation.versions[0] < code {
            nearest = Some(*generation);
        }
    }
    let generation = nearest.ok_or(TooOld(version))?;
    Ok(Selection {
        version,
        generation,
        exact: false,
    })
}

/// A C struct's bytes in 8-byte-aligned storage, handed to NCCL as `void*`.
#[derive(Clone)]
pub struct RawStruct {
    words: Vec<u64>,
    len: usize,
}

impl std::fmt::Debug for RawStruct {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "RawStruct({} bytes)", self.len)
    }
}

impl RawStruct {
    /// `len` zero bytes.
    pub fn zeroed(len: usize) -> Self {
        RawStruct {
            words: vec![0; len.div_ceil(8)],
            len,
        }
    }

    /// A copy of `value`'s bytes. `T` must be one of the generated `#[repr(C)]`
    /// structs: integers, `u8` for C `bool`, raw pointers, arrays of those.
    pub fn of<T: Copy>(value: &T) -> Self {
        const { assert!(align_of::<T>() <= 8) };
        let mut raw = RawStruct::zeroed(size_of::<T>());
        // SAFETY: the storage holds at least size_of::<T>() bytes and is 8-aligned
        // (checked above against T's alignment); `T: Copy` has no drop glue.
        unsafe { raw.words.as_mut_ptr().cast::<T>().write(*value) };
        raw
    }

    /// The bytes read back as `T`.
    ///
    /// # Safety
    /// `T` must be a generated layout struct (every bit pattern valid: integers, `u8`
    /// for `bool`, raw pointers) no larger than this value.
    pub unsafe fn read<T: Copy>(&self) -> T {
        assert!(
            size_of::<T>() <= self.words.len() * 8,
            "RawStruct too small"
        );
        const { assert!(align_of::<T>() <= 8) };
        // SAFETY: size and alignment checked; validity of the bits is the caller's.
        unsafe { self.words.as_ptr().cast::<T>().read() }
    }

    /// The bytes.
    pub fn bytes(&self) -> &[u8] {
        // SAFETY: `words` holds `len.div_ceil(8) * 8 >= len` initialised bytes.
        unsafe { std::slice::from_raw_parts(self.words.as_ptr().cast::<u8>(), self.len) }
    }

    /// Pointer for C to read.
    pub fn as_ptr(&self) -> *const std::ffi::c_void {
        self.words.as_ptr().cast()
    }

    /// Pointer for C to fill.
    pub fn as_mut_ptr(&mut self) -> *mut std::ffi::c_void {
        self.words.as_mut_ptr().cast()
    }
}
