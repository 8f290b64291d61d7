//! The on-disk store: one file per entry, written atomically, verified on every read.
//!
//! Entry layout: magic `CUDAJIT\0`, format version (u32 LE), the 32-byte key, payload
//! length (u64 LE), SHA-256 of the payload, payload. A file that is truncated, corrupted,
//! of another format or of another key is removed and reported as a miss, never loaded.
//! Writes go to a temporary file in the same directory and are renamed into place, so
//! readers (other processes too) see either nothing or a whole entry. The cache must never
//! turn a working launch into a failing one: every I/O error degrades to a miss.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use sha2::{Digest, Sha256};

use super::key::CacheKey;

const MAGIC: &[u8; 8] = b"CUDAJIT\0";
/// Version of the entry layout above.
pub const STORE_FORMAT: u32 = 1;
const HEADER_LEN: usize = 8 + 4 + 32 + 8 + 32;

/// A directory of cache entries.
#[derive(Debug)]
pub struct DiskCache {
    root: PathBuf,
    warned: AtomicBool,
}

/// Why an entry on disk was not used.
#[derive(Debug, PartialEq, Eq)]
pub enum Rejected {
    Truncated,
    BadMagic,
    OtherFormat(u32),
    OtherKey,
    BadChecksum,
    UnsafeOwnership,
}

impl DiskCache {
    /// Opens (creating, with mode 0700) the cache directory `root`.
    pub fn open(root: impl Into<PathBuf>) -> std::io::Result<DiskCache> {
        let root = root.into();
        create_private_dir(&root)?;
        Ok(DiskCache {
            root,
            warned: AtomicBool::new(false),
        })
    }

    /// The cache directory.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Where the entry of `key` lives: `<root>/<2 hex>/<64 hex>.cubin`.
    pub fn path_for(&self, key: &CacheKey) -> PathBuf {
        let hex = key.hex();
        self.root.join(&hex[..2]).join(format!("{hex}.cubin"))
    }

    /// The payload stored under `key`, if a valid entry exists. Invalid entries are removed.
    pub fn get(&self, key: &CacheKey) -> Option<Vec<u8>> {
        let path = self.path_for(key);
        let bytes = match read_owned_file(&path) {
            Ok(Some(bytes)) => bytes,
            Ok(None) => return None,
            Err(rejected) => {
                self.discard(&path, rejected);
                return None;
            }
        };
        match decode(&bytes, key) {
            Ok(payload) => {
                touch(&path);
                Some(payload.to_vec())
            }
            Err(rejected) => {
                self.discard(&path, rejected);
                None
            }
        }
    }

    /// Stores `payload` under `key`. Failures are logged once and otherwise ignored: the
    /// program goes on with its in-memory copy.
    pub fn put(&self, key: &CacheKey, payload: &[u8]) {
        if let Err(error) = self.try_put(key, payload) {
            if !self.warned.swap(true, Ordering::Relaxed) {
                tracing::warn!(
                    "cudajit: cannot write the JIT cache in {} ({error}); compiled kernels are kept in memory only. Set CUDAJIT_CACHE_DIR to a writable directory or CUDAJIT_CACHE=0 to silence this.",
                    self.root.display()
                );
            }
        }
    }

    fn try_put(&self, key: &CacheKey, payload: &[u8]) -> std::io::Result<()> {
        let path = self.path_for(key);
        let dir = path.parent().unwrap_or(&self.root);
        create_private_dir(dir)?;
        let temp = dir.join(format!(".{}.{}.tmp", key.hex(), unique_suffix()));
        let result = (|| {
            let mut file = fs::File::create(&temp)?;
            file.write_all(&encode(key, payload))?;
            file.sync_all()?;
            fs::rename(&temp, &path)
        })();
        if result.is_err() {
            let _ = fs::remove_file(&temp);
        }
        result
    }

    fn discard(&self, path: &Path, rejected: Rejected) {
        tracing::debug!(
            "cudajit: discarding cache entry {} ({rejected:?}); it will be recompiled",
            path.display()
        );
        let _ = fs::remove_file(path);
    }
}

/// Serialises an entry.
pub fn encode(key: &CacheKey, payload: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(HEADER_LEN + payload.len());
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&STORE_FORMAT.to_le_bytes());
    out.extend_from_slice(&key.0);
    out.extend_from_slice(&(payload.len() as u64).to_le_bytes());
    out.extend_from_slice(&Sha256::digest(payload));
    out.extend_from_slice(payload);
    out
}

/// Checks an entry and returns its payload.
pub fn decode<'a>(bytes: &'a [u8], key: &CacheKey) -> Result<&'a [u8], Rejected> {
    if bytes.len() < HEADER_LEN {
        return Err(Rejected::Truncated);
    }
    let (magic, rest) = bytes.split_at(8);
    if magic != MAGIC {
        return Err(Rejected::BadMagic);
    }
    let (format, rest) = rest.split_at(4);
    let format = u32::from_le_bytes(format.try_into().map_err(|_| Rejected::Truncated)?);
    if format != STORE_FORMAT {
        return Err(Rejected::OtherFormat(format));
    }
    let (stored_key, rest) = rest.split_at(32);
    if stored_key != key.0 {
        return Err(Rejected::OtherKey);
    }
    let (length, rest) = rest.split_at(8);
    let length = u64::from_le_bytes(length.try_into().map_err(|_| Rejected::Truncated)?);
    let (checksum, payload) = rest.split_at(32);
    if payload.len() as u64 != length {
        return Err(Rejected::Truncated);
    }
    if Sha256::digest(payload).as_slice() != checksum {
        return Err(Rejected::BadChecksum);
    }
    Ok(payload)
}

fn unique_suffix() -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    format!(
        "{}.{}.{nanos}",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    )
}

/// Marks an entry as recently used (for size-capped eviction by age).
fn touch(path: &Path) {
    if let Ok(file) = fs::File::options().append(true).open(path) {
        let _ = file.set_modified(std::time::SystemTime::now());
    }
}

#[cfg(unix)]
fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    match fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
    {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && dir.is_dir() => Ok(()),
        Err(e) => Err(e),
    }
}

#[cfg(not(unix))]
fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    fs::create_dir_all(dir)
}

/// Reads an entry if it exists and is safe to trust: owned by this user and not writable
/// by others (a shared directory must not let another user plant code).
fn read_owned_file(path: &Path) -> Result<Option<Vec<u8>>, Rejected> {
    let metadata = match fs::metadata(path) {
        Ok(m) => m,
        Err(_) => return Ok(None),
    };
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        // SAFETY: geteuid has no preconditions and cannot fail.
        let uid = unsafe { libc_geteuid() };
        if metadata.uid() != uid || metadata.mode() & 0o002 != 0 {
            return Err(Rejected::UnsafeOwnership);
        }
    }
    let _ = metadata;
    Ok(fs::read(path).ok())
}

#[cfg(unix)]
extern "C" {
    #[link_name = "geteuid"]
    fn libc_geteuid() -> u32;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cache::key::KeyBuilder;

    fn temp_dir(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("cudajit-store-{name}-{}", unique_suffix()));
        let _ = fs::remove_dir_all(&dir);
        dir
    }

    fn key(tag: &str) -> CacheKey {
        KeyBuilder::new("test").field("k", tag.as_bytes()).finish()
    }

    #[test]
    fn round_trip_and_private_dir() {
        let dir = temp_dir("rt");
        let cache = DiskCache::open(&dir).unwrap();
        let k = key("a");
        assert_eq!(cache.get(&k), None);
        cache.put(&k, b"payload");
        assert_eq!(cache.get(&k).as_deref(), Some(&b"payload"[..]));
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = fs::metadata(&dir).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o700);
        }
        let _ = fs::remove_dir_all(&dir);
    }

    #[test]
    fn damaged_entries_are_removed_not_loaded() {
        let dir = temp_dir("bad");
        let cache = DiskCache::open(&dir).unwrap();
        let k = key("b");
        let good = encode(&k, b"0123456789");
        let mut flipped = good.clone();
        *flipped.last_mut().unwrap() ^= 1;
        let mut other_format = good.clone();
        other_format[8] = 99;
        let cases: Vec<(&str, Vec<u8>, Rejected)> = vec![
            ("truncated", good[..good.len() - 3].to_vec(), Rejected::Truncated),
            ("flipped", flipped, Rejected::BadChecksum),
            ("format", other_format, Rejected::OtherFormat(99)),
            ("other key", encode(&key("c"), b"0123456789"), Rejected::OtherKey),
            ("magic", b"ELF....................................................................................".to_vec(), Rejected::BadMagic),
        ];
        for (name, bytes, expected) in cases {
            assert_eq!(decode(&bytes, &k).unwrap_err(), expected, "{name}");
            let path = cache.path_for(&k);
            fs::create_dir_all(path.parent().unwrap()).unwrap();
            fs::write(&path, &bytes).unwrap();
            assert_eq!(cache.get(&k), None, "{name}");
            assert!(!path.exists(), "{name}: damaged entry must be removed");
        }
        let _ = fs::remove_dir_all(&dir);
    }
}
