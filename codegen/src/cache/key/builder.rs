//! The key builder: BLAKE3 over tagged, length-prefixed fields.
//!
//! BLAKE3 because the key is computed in the user's profile, and a captured kernel's source
//! is kilobytes: `sha2` at `-O0` runs at ~25 MB/s, `blake3` (its SIMD kernels are
//! assembly or intrinsics) at ~2 GB/s, see `docs/performance.md`.
//!
//! Tagging and length-prefixing make the encoding unambiguous: two different lists of
//! fields can never produce the same byte stream, so they cannot collide by construction.
//!
//! The builder also remembers each field as a [`KeyComponent`] (its tag and a short,
//! readable form of its value). Entries store them, so a later miss can say which
//! component was new (see [`crate::cache::explain`]).

/// The identity of a cache entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct CacheKey(pub [u8; 32]);

impl CacheKey {
    /// Lowercase hex, the entry's file name.
    pub fn hex(&self) -> String {
        hex(&self.0)
    }
}

impl std::fmt::Display for CacheKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.hex())
    }
}

/// Lowercase hex of `bytes`.
pub fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write;
    bytes.iter().fold(String::new(), |mut out, b| {
        let _ = write!(out, "{b:02x}");
        out
    })
}

/// `blake3:` and the first 16 hex digits of the BLAKE3 hash of `bytes`: how entries record
/// a value too long or too binary to show.
pub fn short_hash(bytes: &[u8]) -> String {
    format!("blake3:{}", &hex(blake3::hash(bytes).as_bytes())[..16])
}

/// One field of a key as entries record it: the tag and a short readable value (the value
/// itself when it is short text, else `blake3:` and the first 16 hex digits of its hash).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct KeyComponent {
    /// The field's tag, e.g. `arch`.
    pub tag: String,
    /// The value, or a short hash of it.
    pub value: String,
}

/// Values at most this long that are printable text are recorded as they are.
const READABLE_MAX: usize = 64;

impl KeyComponent {
    fn of(tag: &str, value: &[u8]) -> KeyComponent {
        let readable = std::str::from_utf8(value)
            .ok()
            .filter(|text| text.len() <= READABLE_MAX && !text.chars().any(char::is_control));
        let value = match readable {
            Some(text) => text.to_owned(),
            None => short_hash(value),
        };
        KeyComponent {
            tag: tag.to_owned(),
            value,
        }
    }
}

/// Builds a [`CacheKey`] field by field.
pub struct KeyBuilder {
    hasher: blake3::Hasher,
    components: Vec<KeyComponent>,
}

impl KeyBuilder {
    /// Starts a key in the namespace `domain` (which includes the format version, so a
    /// format change simply misses).
    pub fn new(domain: &str) -> Self {
        let mut builder = KeyBuilder {
            hasher: blake3::Hasher::new(),
            components: Vec::new(),
        };
        builder.field("domain", domain.as_bytes());
        builder
    }

    /// Adds a field; entries record it as its value when that is short text, else as a
    /// short hash.
    pub fn field(&mut self, tag: &str, value: &[u8]) -> &mut Self {
        self.hash_field(tag, value);
        self.components.push(KeyComponent::of(tag, value));
        self
    }

    /// Adds a field that entries record as `label` (for example a library's version and
    /// short hash in place of its full hash).
    pub fn field_labelled(&mut self, tag: &str, value: &[u8], label: &str) -> &mut Self {
        self.hash_field(tag, value);
        self.components.push(KeyComponent {
            tag: tag.to_owned(),
            value: label.to_owned(),
        });
        self
    }

    fn hash_field(&mut self, tag: &str, value: &[u8]) {
        for part in [tag.as_bytes(), value] {
            self.hasher.update(&(part.len() as u64).to_le_bytes());
            self.hasher.update(part);
        }
    }

    /// The key.
    pub fn finish(&self) -> CacheKey {
        CacheKey(self.hasher.finalize().into())
    }

    /// The fields added so far, in order, in their recorded form.
    pub fn components(&self) -> &[KeyComponent] {
        &self.components
    }

    /// The key with its components.
    pub fn parts(&self) -> KeyParts {
        KeyParts {
            key: self.finish(),
            components: self.components.clone(),
        }
    }
}

/// A key and the components it was made of (recorded in the entry, compared on a miss).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KeyParts {
    /// The key.
    pub key: CacheKey,
    /// Its fields in recorded form.
    pub components: Vec<KeyComponent>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_are_unambiguous() {
        let a = KeyBuilder::new("d").field("a", b"bc").finish();
        let b = KeyBuilder::new("d").field("ab", b"c").finish();
        assert_ne!(a, b);
        let c = KeyBuilder::new("d").field("a", b"bc").finish();
        assert_eq!(a, c);
        assert_eq!(a.hex().len(), 64);
    }

    #[test]
    fn components_are_readable_or_short_hashes() {
        let mut builder = KeyBuilder::new("d");
        builder.field("arch", b"sm_90").field("blob", &[0u8; 100]);
        let components = builder.components();
        assert_eq!(components[0].tag, "domain");
        assert_eq!(components[1].value, "sm_90");
        assert!(components[2].value.starts_with("blake3:"));
        assert_eq!(components[2].value.len(), "blake3:".len() + 16);
    }
}
