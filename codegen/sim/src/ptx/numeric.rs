//! The narrow number formats of the tensor cores decoded to `f64` (every one of their
//! values is exact there): OCP FP8 e4m3 and e5m2, and tf32 as the MMA reads a 32-bit
//! register.

/// An OCP FP8 e4m3 value: 1 sign, 4 exponent (bias 7), 3 mantissa bits; `S.1111.111` is
/// NaN, there are no infinities.
pub(crate) fn e4m3(byte: u8) -> f64 {
    let sign = if byte & 0x80 != 0 { -1.0 } else { 1.0 };
    let exponent = i32::from((byte >> 3) & 0xf);
    let mantissa = f64::from(byte & 7);
    if byte & 0x7f == 0x7f {
        return f64::NAN;
    }
    if exponent == 0 {
        sign * mantissa / 8.0 * 2f64.powi(-6)
    } else {
        sign * (1.0 + mantissa / 8.0) * 2f64.powi(exponent - 7)
    }
}

/// An OCP FP8 e5m2 value: 1 sign, 5 exponent (bias 15), 2 mantissa bits, with IEEE 754's
/// infinities (`S.11111.00`) and NaNs (`S.11111.xx`, xx ≠ 0) — the upper byte of an f16.
pub(crate) fn e5m2(byte: u8) -> f64 {
    half::f16::from_bits(u16::from(byte) << 8).to_f64()
}

/// The tf32 value an MMA reads from a 32-bit register: sign, the 8 exponent bits and the
/// top 10 of f32's 23 mantissa bits; the low 13 bits are not read (round with
/// `cvt.rna.tf32.f32` first to get the nearest tf32 rather than the truncation).
pub(crate) fn tf32(word: u32) -> f64 {
    f64::from(f32::from_bits(word & !0x1fff))
}

/// `cvt.rna.tf32.f32`: `x` rounded to tf32's 10 mantissa bits, ties away from zero, as an
/// f32 bit pattern with the low 13 bits zero; NaN stays NaN (canonical), infinities stay.
pub(crate) fn round_to_tf32(x: f32) -> u32 {
    if x.is_nan() {
        return 0x7fff_ffff;
    }
    let bits = x.to_bits();
    if x.is_infinite() {
        return bits;
    }
    // Adding half of the dropped unit rounds ties away from zero in magnitude; a carry out
    // of the mantissa moves the exponent up, and past the largest finite to infinity, as
    // the PTX ISA's rounding does.
    (bits + 0x1000) & !0x1fff
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fp8_formats_decode_as_the_ocp_specification_gives() {
        assert_eq!(e4m3(0x38), 1.0);
        assert_eq!(e4m3(0x7e), 448.0);
        assert_eq!(e4m3(0x01), 2f64.powi(-9));
        assert!(e4m3(0xff).is_nan());
        assert_eq!(e5m2(0x3c), 1.0);
        assert_eq!(e5m2(0x7b), 57344.0);
        assert_eq!(e5m2(0x01), 2f64.powi(-16));
        assert_eq!(e5m2(0xc0), -2.0);
        assert_eq!(e5m2(0x7c), f64::INFINITY);
        assert!(e5m2(0x7d).is_nan());
    }

    #[test]
    fn tf32_keeps_ten_mantissa_bits() {
        let x = 1.0 + 2f32.powi(-10) + 2f32.powi(-11) + 2f32.powi(-20);
        assert_eq!(tf32(x.to_bits()), 1.0 + 2f64.powi(-10));
        // 1 + 2^-11 is a tie: away from zero.
        assert_eq!(
            f32::from_bits(round_to_tf32(1.0 + 2f32.powi(-11))),
            1.0 + 2f32.powi(-10)
        );
        assert_eq!(
            f32::from_bits(round_to_tf32(-(1.0 + 2f32.powi(-11)))),
            -(1.0 + 2f32.powi(-10))
        );
        assert_eq!(f32::from_bits(round_to_tf32(1.0 + 2f32.powi(-12))), 1.0);
        assert_eq!(f32::from_bits(round_to_tf32(f32::MAX)), f32::INFINITY);
        assert!(f32::from_bits(round_to_tf32(f32::NAN)).is_nan());
    }
}
