//! LLVM 7 spellings of types and constants.

use cudajit_core::Scalar;

/// The register type of a scalar (`i1` for bool).
pub(super) fn scalar(s: Scalar) -> &'static str {
    match s {
        Scalar::Bool => "i1",
        Scalar::I8 | Scalar::U8 => "i8",
        Scalar::I16 | Scalar::U16 => "i16",
        Scalar::I32 | Scalar::U32 => "i32",
        Scalar::I64 | Scalar::U64 | Scalar::Isize | Scalar::Usize => "i64",
        Scalar::F32 => "float",
        Scalar::F64 => "double",
        Scalar::F16 => "half",
        // LLVM 7 has no bfloat type: bf16 lives in an `i16` and computes through `f32`.
        Scalar::BF16 => "i16",
    }
}

/// The in-memory type of a scalar (`i8` for bool, as Rust stores it).
pub(super) fn memory(s: Scalar) -> &'static str {
    match s {
        Scalar::Bool => "i8",
        other => scalar(other),
    }
}

/// An integer constant of width `bits`, written as LLVM expects (signed decimal).
pub(super) fn int_constant(bits: u64, width: u32) -> String {
    if width == 1 {
        return if bits & 1 == 1 { "true" } else { "false" }.into();
    }
    if width >= 64 {
        return (bits as i64).to_string();
    }
    let shift = 64 - width;
    (((bits << shift) as i64) >> shift).to_string()
}

/// A float constant. LLVM 7 wants floats as the hex bits of the equivalent `double`.
pub(super) fn float_constant(value: f64, ty: Scalar) -> String {
    match ty {
        Scalar::F16 => return format!("0xH{:04X}", half::f16::from_f64(value).to_bits()),
        Scalar::BF16 => return int_constant(u64::from(half::bf16::from_f64(value).to_bits()), 16),
        _ => {}
    }
    let value = if ty == Scalar::F32 {
        value as f32 as f64
    } else {
        value
    };
    format!("0x{:016X}", value.to_bits())
}

/// Whether a vector access of `count` `elem`s moves its 16-bit lanes in pairs, as 32-bit
/// words (see the vector load).
pub(super) fn paired_lanes(elem: Scalar, count: usize) -> bool {
    elem.size_bytes() == 2 && count == 8
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn constants() {
        assert_eq!(int_constant(255, 8), "-1");
        assert_eq!(int_constant(1, 1), "true");
        assert_eq!(int_constant(u64::MAX, 64), "-1");
        assert_eq!(int_constant(7, 32), "7");
        assert_eq!(float_constant(1.0, Scalar::F64), "0x3FF0000000000000");
        // 0.1f32 rounds before widening, as the device will see it.
        assert_eq!(float_constant(0.1, Scalar::F32), "0x3FB99999A0000000");
    }
}
