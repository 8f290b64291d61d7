//! The scalar types generated programs compute with.

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Ty {
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
    Bool,
}

impl Ty {
    pub const INTS: [Ty; 10] = [
        Ty::I8,
        Ty::I16,
        Ty::I32,
        Ty::I64,
        Ty::Isize,
        Ty::U8,
        Ty::U16,
        Ty::U32,
        Ty::U64,
        Ty::Usize,
    ];
    pub const FLOATS: [Ty; 2] = [Ty::F32, Ty::F64];
    pub const ALL: [Ty; 13] = [
        Ty::I8,
        Ty::I16,
        Ty::I32,
        Ty::I64,
        Ty::Isize,
        Ty::U8,
        Ty::U16,
        Ty::U32,
        Ty::U64,
        Ty::Usize,
        Ty::F32,
        Ty::F64,
        Ty::Bool,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Ty::I8 => "i8",
            Ty::I16 => "i16",
            Ty::I32 => "i32",
            Ty::I64 => "i64",
            Ty::Isize => "isize",
            Ty::U8 => "u8",
            Ty::U16 => "u16",
            Ty::U32 => "u32",
            Ty::U64 => "u64",
            Ty::Usize => "usize",
            Ty::F32 => "f32",
            Ty::F64 => "f64",
            Ty::Bool => "bool",
        }
    }

    pub fn is_int(self) -> bool {
        !matches!(self, Ty::F32 | Ty::F64 | Ty::Bool)
    }

    pub fn is_float(self) -> bool {
        matches!(self, Ty::F32 | Ty::F64)
    }

    pub fn is_signed(self) -> bool {
        matches!(self, Ty::I8 | Ty::I16 | Ty::I32 | Ty::I64 | Ty::Isize)
    }

    pub fn bits(self) -> u32 {
        match self {
            Ty::I8 | Ty::U8 => 8,
            Ty::I16 | Ty::U16 => 16,
            Ty::I32 | Ty::U32 | Ty::F32 => 32,
            Ty::Bool => 1,
            _ => 64,
        }
    }

    /// The output slice a value of this type is written to, and the cast into it.
    pub fn out_slot(self) -> (&'static str, &'static str) {
        match self {
            Ty::F32 => ("out_f32", ""),
            Ty::F64 => ("out_f64", ""),
            _ => ("out_i", " as i64"),
        }
    }
}
