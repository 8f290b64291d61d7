//! The file format of one cache entry.
//!
//! ```text
//! magic "CUDAJIT\0" | format u32 LE | key [32] | metadata length u32 LE
//!   | payload length u64 LE | BLAKE3 of (metadata ‖ payload) [32] | metadata | payload
//! ```
//!
//! The metadata is JSON ([`EntryMeta`]): what the entry is (kernel, specialisation, arch,
//! creation time, key components), so `cudajit cache list` and miss explanations work
//! without the program. The checksum covers it as well as the cubin. It is BLAKE3 because
//! every hit checks it in the user's profile: for a 10 KB entry `sha2` at `-O0` took
//! 0.44 ms, `blake3` 0.007 ms (`docs/performance.md`).

use super::key::{CacheKey, KeyComponent};

/// The first bytes of every entry.
pub const MAGIC: &[u8; 8] = b"CUDAJIT\0";
/// Version of the entry layout above. Version 1 had no metadata; version 2 checksummed
/// with SHA-256 (its entries are rejected as another format, so they simply miss).
pub const STORE_FORMAT: u32 = 3;
/// Bytes before the metadata.
pub const HEADER_LEN: usize = 8 + 4 + 32 + 4 + 8 + 32;
/// Metadata larger than this is a damaged entry, not a real one.
const META_MAX: usize = 1 << 20;

/// What an entry says about itself.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct EntryMeta {
    /// The kernel's name.
    pub kernel: String,
    /// The specialisation values, as text (empty when the kernel has none).
    pub specialisation: String,
    /// The target, e.g. `sm_90`.
    pub arch: String,
    /// Seconds since the Unix epoch when the entry was written.
    pub created: u64,
    /// The cudajit version that wrote it.
    pub cudajit: String,
    /// The key's fields, as [`KeyComponent`]s.
    pub components: Vec<KeyComponent>,
}

impl EntryMeta {
    fn to_json(&self) -> Vec<u8> {
        let components: Vec<serde_json::Value> = self
            .components
            .iter()
            .map(|c| serde_json::json!([c.tag, c.value]))
            .collect();
        serde_json::json!({
            "kernel": self.kernel,
            "specialisation": self.specialisation,
            "arch": self.arch,
            "created": self.created,
            "cudajit": self.cudajit,
            "components": components,
        })
        .to_string()
        .into_bytes()
    }

    fn from_json(bytes: &[u8]) -> Option<EntryMeta> {
        let value: serde_json::Value = serde_json::from_slice(bytes).ok()?;
        let text = |name: &str| value.get(name)?.as_str().map(str::to_owned);
        let components = value
            .get("components")?
            .as_array()?
            .iter()
            .map(|pair| {
                Some(KeyComponent {
                    tag: pair.get(0)?.as_str()?.to_owned(),
                    value: pair.get(1)?.as_str()?.to_owned(),
                })
            })
            .collect::<Option<Vec<_>>>()?;
        Some(EntryMeta {
            kernel: text("kernel")?,
            specialisation: text("specialisation")?,
            arch: text("arch")?,
            created: value.get("created")?.as_u64()?,
            cudajit: text("cudajit")?,
            components,
        })
    }
}

/// Why an entry on disk was not used.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Rejected {
    /// Shorter than its header says (an interrupted write, a full disk).
    Truncated,
    /// Not a cudajit entry.
    BadMagic,
    /// Written by another version of the store.
    OtherFormat(u32),
    /// The entry of another key (a file copied or renamed by hand).
    OtherKey,
    /// The checksum does not match (bit rot, tampering).
    BadChecksum,
    /// The metadata is not what this store writes.
    BadMetadata,
    /// Owned by another user or writable by others.
    UnsafeOwnership,
    /// The file could not be read.
    Unreadable(String),
}

impl std::fmt::Display for Rejected {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Rejected::Truncated => f.write_str("truncated"),
            Rejected::BadMagic => f.write_str("not a cudajit cache entry"),
            Rejected::OtherFormat(v) => write!(
                f,
                "written by store format {v}, this cudajit reads format {STORE_FORMAT}"
            ),
            Rejected::OtherKey => f.write_str("holds another key's entry"),
            Rejected::BadChecksum => f.write_str("checksum mismatch"),
            Rejected::BadMetadata => f.write_str("unreadable metadata"),
            Rejected::UnsafeOwnership => f.write_str("owned by another user or writable by others"),
            Rejected::Unreadable(why) => write!(f, "unreadable ({why})"),
        }
    }
}

/// Serialises an entry.
pub fn encode(key: &CacheKey, meta: &EntryMeta, payload: &[u8]) -> Vec<u8> {
    let meta = meta.to_json();
    let mut checksum = blake3::Hasher::new();
    checksum.update(&meta);
    checksum.update(payload);
    let mut out = Vec::with_capacity(HEADER_LEN + meta.len() + payload.len());
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&STORE_FORMAT.to_le_bytes());
    out.extend_from_slice(&key.0);
    out.extend_from_slice(&(meta.len() as u32).to_le_bytes());
    out.extend_from_slice(&(payload.len() as u64).to_le_bytes());
    out.extend_from_slice(checksum.finalize().as_bytes());
    out.extend_from_slice(&meta);
    out.extend_from_slice(payload);
    out
}

/// The fixed-size header of an entry, parsed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Header {
    /// The key the entry was written for.
    pub key: CacheKey,
    /// Length of the metadata that follows the header.
    pub meta_len: usize,
    /// Length of the payload that follows the metadata.
    pub payload_len: u64,
    checksum: [u8; 32],
}

impl Header {
    /// The whole entry's length according to the header.
    pub fn entry_len(&self) -> u64 {
        HEADER_LEN as u64 + self.meta_len as u64 + self.payload_len
    }
}

/// Parses the header at the start of `bytes` (which may hold only the header).
pub fn decode_header(bytes: &[u8]) -> Result<Header, Rejected> {
    let at = |start: usize, len: usize| bytes.get(start..start + len).ok_or(Rejected::Truncated);
    if at(0, 8)? != MAGIC {
        return Err(Rejected::BadMagic);
    }
    let format = u32::from_le_bytes(array(at(8, 4)?)?);
    if format != STORE_FORMAT {
        return Err(Rejected::OtherFormat(format));
    }
    let key = CacheKey(array(at(12, 32)?)?);
    let meta_len = u32::from_le_bytes(array(at(44, 4)?)?) as usize;
    let payload_len = u64::from_le_bytes(array(at(48, 8)?)?);
    let checksum = array(at(56, 32)?)?;
    if meta_len > META_MAX {
        return Err(Rejected::BadMetadata);
    }
    Ok(Header {
        key,
        meta_len,
        payload_len,
        checksum,
    })
}

/// Parses the metadata of an entry whose header is `header`, from `bytes` holding at
/// least the header and the metadata. Does not check the checksum.
pub fn decode_meta(bytes: &[u8], header: &Header) -> Result<EntryMeta, Rejected> {
    let meta = bytes
        .get(HEADER_LEN..HEADER_LEN + header.meta_len)
        .ok_or(Rejected::Truncated)?;
    EntryMeta::from_json(meta).ok_or(Rejected::BadMetadata)
}

/// Checks a whole entry written for `expected` (any key when `None`) and returns its
/// metadata and payload.
pub fn decode<'a>(
    bytes: &'a [u8],
    expected: Option<&CacheKey>,
) -> Result<(EntryMeta, &'a [u8]), Rejected> {
    let header = decode_header(bytes)?;
    if expected.is_some_and(|key| *key != header.key) {
        return Err(Rejected::OtherKey);
    }
    if bytes.len() as u64 != header.entry_len() {
        return Err(Rejected::Truncated);
    }
    let body = &bytes[HEADER_LEN..];
    if *blake3::hash(body).as_bytes() != header.checksum {
        return Err(Rejected::BadChecksum);
    }
    let meta = decode_meta(bytes, &header)?;
    Ok((meta, &body[header.meta_len..]))
}

fn array<const N: usize>(bytes: &[u8]) -> Result<[u8; N], Rejected> {
    bytes.try_into().map_err(|_| Rejected::Truncated)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cache::key::KeyBuilder;

    fn key(tag: &str) -> CacheKey {
        KeyBuilder::new("test").field("k", tag.as_bytes()).finish()
    }

    fn meta() -> EntryMeta {
        EntryMeta {
            kernel: "saxpy".into(),
            specialisation: "N=4".into(),
            arch: "sm_90".into(),
            created: 1_700_000_000,
            cudajit: "0.1.0".into(),
            components: vec![KeyComponent {
                tag: "arch".into(),
                value: "sm_90".into(),
            }],
        }
    }

    #[test]
    fn round_trip() {
        let k = key("a");
        let bytes = encode(&k, &meta(), b"payload");
        let (m, payload) = decode(&bytes, Some(&k)).unwrap();
        assert_eq!(m, meta());
        assert_eq!(payload, b"payload");
    }

    #[test]
    fn damage_is_detected() {
        let k = key("b");
        let good = encode(&k, &meta(), b"0123456789");
        let mut flipped = good.clone();
        *flipped.last_mut().unwrap() ^= 1;
        let mut flipped_meta = good.clone();
        flipped_meta[HEADER_LEN + 3] ^= 1;
        let mut other_format = good.clone();
        other_format[8] = 99;
        let cases: Vec<(&str, Vec<u8>, Rejected)> = vec![
            (
                "truncated",
                good[..good.len() - 3].to_vec(),
                Rejected::Truncated,
            ),
            ("header only", good[..20].to_vec(), Rejected::Truncated),
            ("longer", [&good[..], b"x"].concat(), Rejected::Truncated),
            ("flipped payload", flipped, Rejected::BadChecksum),
            ("flipped metadata", flipped_meta, Rejected::BadChecksum),
            ("format", other_format, Rejected::OtherFormat(99)),
            (
                "other key",
                encode(&key("c"), &meta(), b"0123456789"),
                Rejected::OtherKey,
            ),
            ("magic", vec![b'E'; 200], Rejected::BadMagic),
            ("empty", Vec::new(), Rejected::Truncated),
        ];
        for (name, bytes, expected) in cases {
            assert_eq!(decode(&bytes, Some(&k)).unwrap_err(), expected, "{name}");
        }
    }
}
