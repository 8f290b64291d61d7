//! Constant tables generated programs index (`TABLE_I32[(e) % 8]`): module-level `const`
//! and `static` arrays, evaluated by rustc for both compilations.

pub const TABLE_I32: [i32; 8] = [i32::MIN, -7, 0, 1, 42, i32::MAX, -1, 1 << 20];
pub const TABLE_U8: [u8; 4] = [0, 1, 0x80, u8::MAX];
pub static TABLE_F32: [f32; 5] = [0.0, -0.0, 1.5, -3.25, 1.0e30];
pub const TABLE_F64: [f64; 3] = [0.1, -2.5, f64::MIN_POSITIVE];
pub const TABLE_BOOL: [bool; 3] = [true, false, true];
