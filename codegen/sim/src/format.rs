//! `print!` on the simulator: the text the GPU's `vprintf` produces for the format string
//! the NVVM writer builds (`codegen/src/nvvm/format.rs`, `print`).
//!
//! The writer turns `{}` into C conversions: `%d`/`%u` for integers up to 32 bits
//! (promoted to 32 bits), `%lld`/`%llu` for 64-bit ones, `%x`/`%X`/`%llx`/`%llX` for
//! `{:x}`/`{:X}`, `%f` for floats (so `{}` of `1.5f32` prints `1.500000`, as on the GPU),
//! `%s` with `true`/`false` for `bool`; a width becomes C's right-aligned field width and
//! a precision applies to floats only.

use cudajit_core::ast::{FormatPiece, FormatSpec};
use cudajit_core::Scalar;

use super::value::{widen, RegisterValue};

/// The text of one `print!`: `pieces` with argument values `values` (register bits) of
/// types `types`.
pub(crate) fn format(pieces: &[FormatPiece], types: &[Scalar], values: &[u64]) -> String {
    let mut out = String::new();
    for piece in pieces {
        match piece {
            FormatPiece::Text(text) => out.push_str(text),
            FormatPiece::Arg { index, spec } => {
                let (Some(&ty), Some(&bits)) = (types.get(*index), values.get(*index)) else {
                    continue;
                };
                let text = conversion(ty, bits, spec);
                let width = spec.width.unwrap_or(0) as usize;
                for _ in text.chars().count()..width {
                    out.push(' ');
                }
                out.push_str(&text);
            }
        }
    }
    out
}

fn conversion(ty: Scalar, bits: u64, spec: &FormatSpec) -> String {
    match ty {
        Scalar::Bool => if bits & 1 == 1 { "true" } else { "false" }.to_owned(),
        Scalar::F32 => fixed(f64::from(f32::from_register(bits)), spec.precision),
        Scalar::F64 => fixed(f64::from_register(bits), spec.precision),
        Scalar::F16 => fixed(
            f64::from(half::f16::from_register(bits).to_f32()),
            spec.precision,
        ),
        Scalar::BF16 => fixed(
            f64::from(half::bf16::from_register(bits).to_f32()),
            spec.precision,
        ),
        s => {
            // C's promotions: narrow integers widen to 32 bits by their signedness.
            let wide = widen(bits, s);
            let (value, width) = if s.bits() == 64 {
                (wide, 64)
            } else {
                (wide & 0xffff_ffff, 32)
            };
            match spec.hex {
                Some(false) => format!("{value:x}"),
                Some(true) => format!("{value:X}"),
                None if s.is_signed() => {
                    if width == 64 {
                        (value as i64).to_string()
                    } else {
                        (value as u32 as i32).to_string()
                    }
                }
                None => value.to_string(),
            }
        }
    }
}

/// C's `%.Nf` (N = 6 by default), with C's spellings of infinities and NaNs.
fn fixed(value: f64, precision: Option<u32>) -> String {
    if value.is_nan() {
        return if value.is_sign_negative() {
            "-nan"
        } else {
            "nan"
        }
        .to_owned();
    }
    if value.is_infinite() {
        return if value < 0.0 { "-inf" } else { "inf" }.to_owned();
    }
    format!("{value:.*}", precision.unwrap_or(6) as usize)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn like_the_gpu_vprintf() {
        let pieces = vec![
            FormatPiece::Text("v ".into()),
            FormatPiece::Arg {
                index: 0,
                spec: FormatSpec::default(),
            },
            FormatPiece::Text(" ".into()),
            FormatPiece::Arg {
                index: 1,
                spec: FormatSpec {
                    precision: Some(2),
                    ..FormatSpec::default()
                },
            },
            FormatPiece::Text(" ".into()),
            FormatPiece::Arg {
                index: 2,
                spec: FormatSpec::default(),
            },
            FormatPiece::Text(" ".into()),
            FormatPiece::Arg {
                index: 3,
                spec: FormatSpec {
                    hex: Some(false),
                    ..FormatSpec::default()
                },
            },
            FormatPiece::Text("|".into()),
            FormatPiece::Arg {
                index: 4,
                spec: FormatSpec {
                    width: Some(5),
                    ..FormatSpec::default()
                },
            },
        ];
        let types = [
            Scalar::I32,
            Scalar::F32,
            Scalar::Bool,
            Scalar::I8,
            Scalar::F64,
        ];
        let values = [
            (-7i32).to_register(),
            3.5f32.to_register(),
            1,
            (-1i8).to_register(),
            1.0f64.to_register(),
        ];
        assert_eq!(
            format(&pieces, &types, &values),
            "v -7 3.50 true ffffffff|1.000000"
        );
    }
}
