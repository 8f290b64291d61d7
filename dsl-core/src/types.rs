//! Scalar types shared by the captured syntax and the IR.

use serde::{Deserialize, Serialize};

/// A scalar type of the kernel language. `usize`/`isize` are 64-bit on the device, as on
/// every host cudajit supports.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Scalar {
    Bool,
    I8,
    I16,
    I32,
    I64,
    Isize,
    U8,
    U16,
    U32,
    U64,
    Usize,
    F32,
    F64,
    /// IEEE binary16 (`half::f16` on the host).
    F16,
    /// bfloat16 (`half::bf16` on the host).
    BF16,
}

/// The broad class of a scalar, which decides which instructions operate on it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ScalarKind {
    Bool,
    Sint,
    Uint,
    Float,
}

impl Scalar {
    /// Every scalar, for tables and tests.
    pub const ALL: [Scalar; 15] = [
        Scalar::Bool,
        Scalar::I8,
        Scalar::I16,
        Scalar::I32,
        Scalar::I64,
        Scalar::Isize,
        Scalar::U8,
        Scalar::U16,
        Scalar::U32,
        Scalar::U64,
        Scalar::Usize,
        Scalar::F32,
        Scalar::F64,
        Scalar::F16,
        Scalar::BF16,
    ];

    /// The Rust name of the type (`f32`, `usize`, ...).
    pub fn rust_name(self) -> &'static str {
        match self {
            Scalar::Bool => "bool",
            Scalar::I8 => "i8",
            Scalar::I16 => "i16",
            Scalar::I32 => "i32",
            Scalar::I64 => "i64",
            Scalar::Isize => "isize",
            Scalar::U8 => "u8",
            Scalar::U16 => "u16",
            Scalar::U32 => "u32",
            Scalar::U64 => "u64",
            Scalar::Usize => "usize",
            Scalar::F32 => "f32",
            Scalar::F64 => "f64",
            Scalar::F16 => "f16",
            Scalar::BF16 => "bf16",
        }
    }

    /// Parses a Rust primitive type name.
    pub fn from_rust_name(name: &str) -> Option<Scalar> {
        Scalar::ALL.into_iter().find(|s| s.rust_name() == name)
    }

    /// The class of the scalar.
    pub fn kind(self) -> ScalarKind {
        match self {
            Scalar::Bool => ScalarKind::Bool,
            Scalar::I8 | Scalar::I16 | Scalar::I32 | Scalar::I64 | Scalar::Isize => {
                ScalarKind::Sint
            }
            Scalar::U8 | Scalar::U16 | Scalar::U32 | Scalar::U64 | Scalar::Usize => {
                ScalarKind::Uint
            }
            Scalar::F32 | Scalar::F64 | Scalar::F16 | Scalar::BF16 => ScalarKind::Float,
        }
    }

    /// Width in bits (bool counts as 1).
    pub fn bits(self) -> u32 {
        match self {
            Scalar::Bool => 1,
            Scalar::I8 | Scalar::U8 => 8,
            Scalar::I16 | Scalar::U16 | Scalar::F16 | Scalar::BF16 => 16,
            Scalar::I32 | Scalar::U32 | Scalar::F32 => 32,
            Scalar::I64 | Scalar::U64 | Scalar::Isize | Scalar::Usize | Scalar::F64 => 64,
        }
    }

    /// Size in bytes in memory (bool is one byte, as in Rust).
    pub fn size_bytes(self) -> u32 {
        self.bits().div_ceil(8)
    }

    /// Whether this is an integer type (signed or unsigned).
    pub fn is_integer(self) -> bool {
        matches!(self.kind(), ScalarKind::Sint | ScalarKind::Uint)
    }

    /// Whether this is `f32` or `f64`, the floats with full arithmetic and libdevice
    /// functions (the 16-bit floats convert through `f32`).
    pub fn is_wide_float(self) -> bool {
        matches!(self, Scalar::F32 | Scalar::F64)
    }

    /// Whether this is a floating-point type.
    pub fn is_float(self) -> bool {
        self.kind() == ScalarKind::Float
    }

    /// The unsigned integer type of the same width (itself for unsigned types).
    pub fn to_unsigned(self) -> Scalar {
        match self {
            Scalar::I8 => Scalar::U8,
            Scalar::I16 => Scalar::U16,
            Scalar::I32 => Scalar::U32,
            Scalar::I64 => Scalar::U64,
            Scalar::Isize => Scalar::Usize,
            other => other,
        }
    }

    /// Whether this is a signed integer type.
    pub fn is_signed(self) -> bool {
        self.kind() == ScalarKind::Sint
    }
}

impl std::fmt::Display for Scalar {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.rust_name())
    }
}
