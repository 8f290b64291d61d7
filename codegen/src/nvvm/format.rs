//! Writing `printf`-style output: format strings as module constants, arguments packed
//! for CUDA's `vprintf`.

use cudajit_core::ast::FormatPiece;
use cudajit_core::ir::{Expression, Handle};
use cudajit_core::Scalar;

use super::function::{WriteError, Writer};
use super::types;

impl Writer<'_> {
    /// A module-level constant holding `text` (NUL-terminated), as a generic `i8*`.
    pub(super) fn string_constant(&mut self, text: &str) -> String {
        let name = format!("@cudajit_str_{}_{}", self.symbol, self.constants.len());
        let mut bytes: Vec<u8> = text.as_bytes().to_vec();
        bytes.push(0);
        let encoded: String = bytes
            .iter()
            .map(|&b| {
                if b.is_ascii_graphic() && b != b'"' && b != b'\\' || b == b' ' {
                    (b as char).to_string()
                } else {
                    format!("\\{b:02X}")
                }
            })
            .collect();
        let n = bytes.len();
        self.constants.push(format!(
            "{name} = private unnamed_addr addrspace(4) constant [{n} x i8] c\"{encoded}\", align 1"
        ));
        let generic = self.value(format!(
            "addrspacecast [{n} x i8] addrspace(4)* {name} to [{n} x i8]*"
        ));
        self.value(format!(
            "getelementptr inbounds [{n} x i8], [{n} x i8]* {generic}, i64 0, i64 0"
        ))
    }

    /// `vprintf(format, arguments)`: arguments are packed into a local buffer with C's
    /// promotions (small integers to `i32`, `f32` to `double`), `bool`s print as
    /// `true`/`false` through `%s`.
    pub(super) fn print(
        &mut self,
        pieces: &[FormatPiece],
        arguments: &[Handle<Expression>],
    ) -> Result<(), WriteError> {
        let mut values = Vec::new();
        for argument in arguments {
            let ty = self.scalar_of(*argument)?;
            let value = self.expr(*argument)?.scalar();
            values.push((ty, value));
        }
        let mut format = String::new();
        let mut packed: Vec<(String, String)> = Vec::new();
        for piece in pieces {
            match piece {
                FormatPiece::Text(text) => format.push_str(&text.replace('%', "%%")),
                FormatPiece::Arg { index, spec } => {
                    let (ty, value) = values[*index].clone();
                    let mut conversion = String::from("%");
                    if let Some(width) = spec.width {
                        conversion.push_str(&width.to_string());
                    }
                    if let (Some(precision), true) = (spec.precision, ty.is_float()) {
                        conversion.push_str(&format!(".{precision}"));
                    }
                    let (letters, slot) = match ty {
                        Scalar::Bool => {
                            let yes = self.string_constant("true");
                            let no = self.string_constant("false");
                            let pick =
                                self.value(format!("select i1 {value}, i8* {yes}, i8* {no}"));
                            ("s", ("i8*".to_owned(), pick))
                        }
                        Scalar::F32 | Scalar::F16 | Scalar::BF16 => {
                            let wide = self.cast(value, ty, Scalar::F64);
                            ("f", ("double".to_owned(), wide))
                        }
                        Scalar::F64 => ("f", ("double".to_owned(), value)),
                        s if s.bits() == 64 => {
                            let letter = match (spec.hex, s.is_signed()) {
                                (Some(false), _) => "llx",
                                (Some(true), _) => "llX",
                                (None, true) => "lld",
                                (None, false) => "llu",
                            };
                            (letter, ("i64".to_owned(), value))
                        }
                        s => {
                            let wide = if s.bits() < 32 {
                                let op = if s.is_signed() { "sext" } else { "zext" };
                                self.value(format!("{op} {} {value} to i32", types::scalar(s)))
                            } else {
                                value
                            };
                            let letter = match (spec.hex, s.is_signed()) {
                                (Some(false), _) => "x",
                                (Some(true), _) => "X",
                                (None, true) => "d",
                                (None, false) => "u",
                            };
                            (letter, ("i32".to_owned(), wide))
                        }
                    };
                    conversion.push_str(letters);
                    format.push_str(&conversion);
                    packed.push(slot);
                }
            }
        }
        let format_pointer = self.string_constant(&format);
        self.declare("declare i32 @vprintf(i8*, i8*) nounwind".into());
        let buffer = if packed.is_empty() {
            "null".to_owned()
        } else {
            let struct_ty = format!(
                "{{ {} }}",
                packed
                    .iter()
                    .map(|(t, _)| t.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            );
            let storage = self.value(format!("alloca {struct_ty}, align 8"));
            for (field, (ty, value)) in packed.iter().enumerate() {
                let slot = self.value(format!(
                    "getelementptr inbounds {struct_ty}, {struct_ty}* {storage}, i32 0, i32 {field}"
                ));
                self.line(format!("store {ty} {value}, {ty}* {slot}"));
            }
            self.value(format!("bitcast {struct_ty}* {storage} to i8*"))
        };
        self.value(format!(
            "call i32 @vprintf(i8* {format_pointer}, i8* {buffer})"
        ));
        Ok(())
    }
}
