//! Cache keys: SHA-256 over tagged, length-prefixed fields.
//!
//! Tagging and length-prefixing make the encoding unambiguous: two different lists of
//! fields can never produce the same byte stream, so they cannot collide by construction.

use sha2::{Digest, Sha256};

/// The identity of a cache entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct CacheKey(pub [u8; 32]);

impl CacheKey {
    /// Lowercase hex, the entry's file name.
    pub fn hex(&self) -> String {
        self.0.iter().map(|b| format!("{b:02x}")).collect()
    }
}

impl std::fmt::Display for CacheKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.hex())
    }
}

/// Builds a [`CacheKey`] field by field.
pub struct KeyBuilder {
    hasher: Sha256,
}

impl KeyBuilder {
    /// Starts a key in the namespace `domain` (which includes the format version, so a
    /// format change simply misses).
    pub fn new(domain: &str) -> Self {
        let mut builder = KeyBuilder {
            hasher: Sha256::new(),
        };
        builder.field("domain", domain.as_bytes());
        builder
    }

    /// Adds a field.
    pub fn field(&mut self, tag: &str, value: &[u8]) -> &mut Self {
        for part in [tag.as_bytes(), value] {
            self.hasher.update((part.len() as u64).to_le_bytes());
            self.hasher.update(part);
        }
        self
    }

    /// The key.
    pub fn finish(&self) -> CacheKey {
        CacheKey(self.hasher.clone().finalize().into())
    }
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
}
