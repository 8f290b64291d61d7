//! Canonical bytes of the language's values that keys hold: every text and list is
//! length-prefixed (little-endian `u64`), every number fixed-width, every optional value
//! tagged, so two different values never encode alike and the bytes do not depend on how
//! a type happens to print (`Debug` text may change with any refactor).

use cudajit_core::ir::Literal;
use cudajit_core::layout::StructLayout;
use cudajit_core::lower::Specialization;
use cudajit_core::Scalar;

/// Appends canonical items to a byte buffer.
#[derive(Default)]
struct Encoder {
    bytes: Vec<u8>,
}

impl Encoder {
    fn number(&mut self, value: u64) -> &mut Self {
        self.bytes.extend_from_slice(&value.to_le_bytes());
        self
    }

    fn signed(&mut self, value: i64) -> &mut Self {
        self.bytes.extend_from_slice(&value.to_le_bytes());
        self
    }

    /// A length or count.
    fn count(&mut self, n: usize) -> &mut Self {
        self.number(n as u64)
    }

    fn text(&mut self, text: &str) -> &mut Self {
        self.count(text.len());
        self.bytes.extend_from_slice(text.as_bytes());
        self
    }

    fn tag(&mut self, tag: u8) -> &mut Self {
        self.bytes.push(tag);
        self
    }

    /// A scalar type by its Rust name (`f32`), which never changes meaning.
    fn scalar(&mut self, scalar: Scalar) -> &mut Self {
        self.text(scalar.rust_name())
    }

    fn optional_scalar(&mut self, scalar: Option<Scalar>) -> &mut Self {
        match scalar {
            None => self.tag(0),
            Some(s) => self.tag(1).scalar(s),
        }
    }

    fn literal(&mut self, literal: &Literal) -> &mut Self {
        match *literal {
            Literal::Bool(value) => self.tag(0).tag(u8::from(value)),
            Literal::Int { bits, ty } => self.tag(1).number(bits).scalar(ty),
            // The bits, so that -0.0 and 0.0 (and NaN payloads) stay apart.
            Literal::Float { value, ty } => self.tag(2).number(value.to_bits()).scalar(ty),
        }
    }
}

/// The canonical bytes of a specialisation: its type parameters, then its constants, each
/// list in its order (the order of the kernel's generic parameters).
/// A field's type: a tagged scalar, a nested struct's whole layout, or an array's length
/// and element type.
fn field_type(out: &mut Encoder, ty: &cudajit_core::layout::FieldType) {
    use cudajit_core::layout::FieldType;
    match ty {
        FieldType::Scalar(scalar) => {
            out.tag(0).scalar(*scalar);
        }
        FieldType::Struct(layout) => {
            let bytes = struct_layout(layout);
            out.tag(1).count(bytes.len());
            out.bytes.extend_from_slice(&bytes);
        }
        FieldType::Array { elem, len } => {
            out.tag(2).count(*len);
            field_type(out, elem);
        }
    }
}

pub fn specialization(spec: &Specialization) -> Vec<u8> {
    let mut out = Encoder::default();
    out.count(spec.types.len());
    for (name, scalar) in &spec.types {
        out.text(name).scalar(*scalar);
    }
    out.count(spec.consts.len());
    for (name, value) in &spec.consts {
        out.text(name).literal(value);
    }
    out.bytes
}

/// The canonical bytes of a struct's or enum's layout as rustc computed it: name, size,
/// alignment, fields, enum representation and variants, and the drop hook by the
/// function it names (its name and source hash, not where its pointer points).
pub fn struct_layout(layout: &StructLayout) -> Vec<u8> {
    let mut out = Encoder::default();
    out.text(layout.name)
        .count(layout.size)
        .count(layout.align)
        .count(layout.fields.len());
    for field in layout.fields {
        out.text(field.name);
        field_type(&mut out, &field.ty);
        out.count(field.offset);
    }
    out.optional_scalar(layout.enum_repr)
        .count(layout.variants.len());
    for variant in layout.variants {
        out.text(variant.name).signed(variant.value);
    }
    // A generic struct's arguments (`Pair<f32>`), as text: `f32`, `4`, `T`.
    out.count(layout.args.len());
    for arg in layout.args {
        out.text(&arg.to_string());
    }
    match layout.drop {
        None => out.tag(0),
        Some(hook) => {
            let function = hook.function();
            out.tag(1).text(function.name).text(function.source_hash)
        }
    };
    out.bytes
}

#[cfg(test)]
mod tests {
    use super::*;
    use cudajit_core::layout::{FieldLayout, VariantLayout};

    #[test]
    fn texts_are_length_prefixed() {
        let spec = |types: Vec<(&str, Scalar)>| Specialization {
            types: types.into_iter().map(|(n, s)| (n.to_owned(), s)).collect(),
            structs: Vec::new(),
            consts: Vec::new(),
        };
        // `T=f32` then nothing, against a name that swallows the value's text.
        assert_ne!(
            specialization(&spec(vec![("T", Scalar::F32)])),
            specialization(&spec(vec![("Tf32", Scalar::F32)]))
        );
        let mut expected = 1u64.to_le_bytes().to_vec();
        expected.extend_from_slice(&1u64.to_le_bytes());
        expected.push(b'T');
        expected.extend_from_slice(&3u64.to_le_bytes());
        expected.extend_from_slice(b"f32");
        expected.extend_from_slice(&0u64.to_le_bytes());
        assert_eq!(specialization(&spec(vec![("T", Scalar::F32)])), expected);
    }

    #[test]
    fn floats_are_encoded_by_their_bits() {
        let spec = |value: f64| Specialization {
            types: Vec::new(),
            structs: Vec::new(),
            consts: vec![(
                "X".to_owned(),
                Literal::Float {
                    value,
                    ty: Scalar::F32,
                },
            )],
        };
        assert_ne!(specialization(&spec(0.0)), specialization(&spec(-0.0)));
        assert_eq!(specialization(&spec(1.5)), specialization(&spec(1.5)));
    }

    #[test]
    fn an_enum_and_a_struct_of_one_name_differ() {
        static FIELDS: [FieldLayout; 1] = [FieldLayout {
            name: "a",
            ty: cudajit_core::layout::FieldType::Scalar(Scalar::I32),
            offset: 0,
        }];
        static VARIANTS: [VariantLayout; 1] = [VariantLayout {
            name: "a",
            value: 0,
        }];
        let base = StructLayout {
            name: "S",
            fields: &[],
            size: 4,
            align: 4,
            enum_repr: None,
            variants: &[],
            drop: None,
            methods: cudajit_core::methods::MethodTable::NONE,
            args: &[],
        };
        let with_field = StructLayout {
            fields: &FIELDS,
            ..base
        };
        let with_variant = StructLayout {
            enum_repr: Some(Scalar::I32),
            variants: &VARIANTS,
            ..base
        };
        assert_ne!(struct_layout(&with_field), struct_layout(&with_variant));
        assert_ne!(struct_layout(&base), struct_layout(&with_field));
        assert_eq!(struct_layout(&with_field), struct_layout(&with_field));
    }
}
