//! The on-disk store: one file per entry, written atomically, verified on every read.
//!
//! Entries live at `<root>/<2 hex>/<64 hex>.cubin` in the format of [`super::entry`]. A file
//! that is truncated, corrupted, of another format or of another key is removed and
//! reported (at debug level) as a miss, never loaded. Writes go to a temporary file in the
//! same directory and are renamed into place, so readers (other processes too) see either
//! nothing or a whole entry; the entry is read back and checked after the rename. The
//! cache must never turn a working launch into a failing one: every I/O error degrades to
//! a miss, and a failed write to one warning, after which the process goes on with its
//! in-memory copies.

use std::fs;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::SystemTime;

use super::entry::{self, EntryMeta, Rejected, HEADER_LEN};
use super::evict;
use super::fs::{
    check_dir_owner, create_private_dir, entry_files, lock_path_for, open_trusted, read_trusted,
};
use super::key::CacheKey;

pub use super::entry::STORE_FORMAT;
pub use super::fs::{key_of_path, ENTRY_EXTENSION};

/// A directory of cache entries.
#[derive(Debug)]
pub struct DiskCache {
    root: PathBuf,
    max_bytes: Option<u64>,
    warned: AtomicBool,
}

/// An entry found by [`DiskCache::entries`], described by its header and metadata alone.
#[derive(Clone, Debug)]
pub struct EntryListing {
    /// The entry's file.
    pub path: PathBuf,
    /// The file's size in bytes.
    pub size: u64,
    /// The last time the entry was written or used (its modification time).
    pub last_used: Option<SystemTime>,
    /// The key and metadata, or why they could not be read.
    pub meta: Result<(CacheKey, EntryMeta), Rejected>,
}

impl DiskCache {
    /// Opens (creating, with mode 0700) the cache directory `root`, without a size cap.
    pub fn open(root: impl Into<PathBuf>) -> std::io::Result<DiskCache> {
        let root = root.into();
        create_private_dir(&root)?;
        check_dir_owner(&root)?;
        Ok(DiskCache {
            root,
            max_bytes: None,
            warned: AtomicBool::new(false),
        })
    }

    /// Caps the total size of the entries: after each write, least recently used entries
    /// are removed until the total is at most `max_bytes` (`None`: no cap).
    pub fn with_max_bytes(mut self, max_bytes: Option<u64>) -> DiskCache {
        self.max_bytes = max_bytes;
        self
    }

    /// The cache directory.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The size cap, if any.
    pub fn max_bytes(&self) -> Option<u64> {
        self.max_bytes
    }

    /// Where the entry of `key` lives: `<root>/<2 hex>/<64 hex>.cubin`.
    pub fn path_for(&self, key: &CacheKey) -> PathBuf {
        let hex = key.hex();
        self.root
            .join(&hex[..2])
            .join(format!("{hex}.{ENTRY_EXTENSION}"))
    }

    /// The lock file that serialises compiles of `key` across processes.
    pub fn lock_path(&self, key: &CacheKey) -> PathBuf {
        lock_path_for(&self.path_for(key))
    }

    /// The payload stored under `key`, if a valid entry exists. Invalid entries are removed.
    pub fn get(&self, key: &CacheKey) -> Option<Vec<u8>> {
        self.get_entry(key).map(|(_, payload)| payload)
    }

    /// The metadata and payload stored under `key`, if a valid entry exists. Invalid
    /// entries are removed. A hit marks the entry as recently used.
    pub fn get_entry(&self, key: &CacheKey) -> Option<(EntryMeta, Vec<u8>)> {
        self.lookup(key).ok()
    }

    /// As [`DiskCache::get_entry`], but a miss says whether an entry was there and was
    /// discarded, and why (`Err(None)`: there was none).
    pub fn lookup(&self, key: &CacheKey) -> Result<(EntryMeta, Vec<u8>), Option<Rejected>> {
        let path = self.path_for(key);
        let mut bytes = match read_trusted(&path) {
            Ok(Some(bytes)) => bytes,
            Ok(None) => return Err(None),
            Err(rejected) => {
                self.discard(&path, &rejected);
                return Err(Some(rejected));
            }
        };
        let (meta, range) = match entry::decode(&bytes, Some(key)) {
            Ok((meta, payload)) => {
                let start = payload.as_ptr() as usize - bytes.as_ptr() as usize;
                (meta, start..start + payload.len())
            }
            Err(rejected) => {
                self.discard(&path, &rejected);
                return Err(Some(rejected));
            }
        };
        touch(&path);
        bytes.truncate(range.end);
        bytes.drain(..range.start);
        Ok((meta, bytes))
    }

    /// Stores `payload` under `key`. Failures are logged once and otherwise ignored: the
    /// program goes on with its in-memory copy. Returns whether the entry is on disk.
    pub fn put(&self, key: &CacheKey, meta: &EntryMeta, payload: &[u8]) -> bool {
        match self.try_put(key, meta, payload) {
            Ok(()) => {
                if let Some(max) = self.max_bytes {
                    evict::enforce_cap(&self.root, max, &self.path_for(key));
                }
                true
            }
            Err(error) => {
                if !self.warned.swap(true, Ordering::Relaxed) {
                    crate::log::warn_always(&format!(
                        "cannot write the JIT cache in {} ({error}); compiled kernels are kept in memory only. Set CUDAJIT_CACHE_DIR to a writable directory with free space, or CUDAJIT_CACHE=0 to silence this.",
                        self.root.display()
                    ));
                }
                false
            }
        }
    }

    fn try_put(&self, key: &CacheKey, meta: &EntryMeta, payload: &[u8]) -> std::io::Result<()> {
        let path = self.path_for(key);
        let dir = path.parent().unwrap_or(&self.root);
        // Recreates the directory too if it was deleted while the process ran.
        create_private_dir(dir)?;
        let temp = dir.join(format!(".{}.{}.tmp", key.hex(), unique_suffix()));
        let bytes = entry::encode(key, meta, payload);
        let result = (|| {
            let mut file = fs::File::create(&temp)?;
            file.write_all(&bytes)?;
            file.sync_all()?;
            fs::rename(&temp, &path)?;
            // Read back what the path now names: a rename onto a full or failing disk, or
            // a concurrent writer of something else, must not leave a bad entry behind.
            match read_trusted(&path) {
                Ok(Some(back)) if back == bytes => Ok(()),
                Ok(Some(back)) if entry::decode(&back, Some(key)).is_ok() => Ok(()),
                _ => {
                    let _ = fs::remove_file(&path);
                    Err(std::io::Error::other(
                        "the entry read back after writing it differs",
                    ))
                }
            }
        })();
        if result.is_err() {
            let _ = fs::remove_file(&temp);
        }
        result
    }

    fn discard(&self, path: &Path, rejected: &Rejected) {
        tracing::debug!(
            "cudajit: discarding cache entry {} ({rejected}); it will be recompiled",
            path.display()
        );
        let _ = fs::remove_file(path);
    }

    /// Every entry file under the root, described from its header and metadata (the
    /// payload is not read or checked: see [`DiskCache::verify`]).
    pub fn entries(&self) -> Vec<EntryListing> {
        entry_files(&self.root)
            .into_iter()
            .map(|path| {
                let metadata = fs::metadata(&path).ok();
                EntryListing {
                    size: metadata.as_ref().map_or(0, fs::Metadata::len),
                    last_used: metadata.and_then(|m| m.modified().ok()),
                    meta: read_listing(&path),
                    path,
                }
            })
            .collect()
    }

    /// Re-reads every entry and checks its header, key, checksum and metadata, changing
    /// nothing; returns each entry with its verdict (see [`DiskCache::remove_damaged`]).
    pub fn verify(&self) -> Vec<(PathBuf, Result<EntryMeta, Rejected>)> {
        entry_files(&self.root)
            .into_iter()
            .map(|path| {
                let verdict = read_trusted(&path).and_then(|bytes| {
                    let bytes = bytes.ok_or(Rejected::Unreadable("vanished".into()))?;
                    let key = key_of_path(&path).ok_or(Rejected::OtherKey)?;
                    entry::decode(&bytes, Some(&key)).map(|(meta, _)| meta)
                });
                (path, verdict)
            })
            .collect()
    }

    /// [`DiskCache::verify`], then removes the damaged entries (as a read of them would);
    /// returns every verdict.
    pub fn remove_damaged(&self) -> Vec<(PathBuf, Result<EntryMeta, Rejected>)> {
        let verdicts = self.verify();
        for (path, verdict) in &verdicts {
            if let Err(rejected) = verdict {
                self.discard(path, rejected);
            }
        }
        verdicts
    }

    /// Removes every entry, stray temporary file and unheld lock file; keeps the
    /// toolchain memo. Returns the number of entries removed.
    pub fn clear(&self) -> usize {
        let entries = entry_files(&self.root);
        let removed = entries
            .iter()
            .filter(|path| fs::remove_file(path).is_ok())
            .count();
        evict::remove_strays(&self.root, std::time::Duration::ZERO);
        removed
    }

    /// Total size in bytes of the entry files.
    pub fn total_bytes(&self) -> u64 {
        entry_files(&self.root)
            .iter()
            .filter_map(|p| fs::metadata(p).ok())
            .map(|m| m.len())
            .sum()
    }
}

/// The key and metadata of an entry, reading only its header and metadata.
fn read_listing(path: &Path) -> Result<(CacheKey, EntryMeta), Rejected> {
    let mut file = open_trusted(path)?.ok_or(Rejected::Unreadable("vanished".into()))?;
    let mut head = vec![0u8; HEADER_LEN];
    file.read_exact(&mut head)
        .map_err(|_| Rejected::Truncated)?;
    let header = entry::decode_header(&head)?;
    head.resize(HEADER_LEN + header.meta_len, 0);
    file.read_exact(&mut head[HEADER_LEN..])
        .map_err(|_| Rejected::Truncated)?;
    let meta = entry::decode_meta(&head, &header)?;
    Ok((header.key, meta))
}

fn unique_suffix() -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let nanos = SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    format!(
        "{}.{}.{nanos}",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    )
}

/// Marks an entry as recently used (for least-recently-used eviction).
fn touch(path: &Path) {
    if let Ok(file) = fs::File::options().append(true).open(path) {
        let _ = file.set_modified(SystemTime::now());
    }
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

    fn meta(kernel: &str) -> EntryMeta {
        EntryMeta {
            kernel: kernel.into(),
            arch: "sm_90".into(),
            ..EntryMeta::default()
        }
    }

    #[test]
    fn round_trip_and_private_dir() {
        let dir = temp_dir("rt");
        let cache = DiskCache::open(&dir).unwrap();
        let k = key("a");
        assert_eq!(cache.get(&k), None);
        assert!(cache.put(&k, &meta("a"), b"payload"));
        assert_eq!(cache.get(&k).as_deref(), Some(&b"payload"[..]));
        assert_eq!(key_of_path(&cache.path_for(&k)), Some(k));
        let listed = cache.entries();
        assert_eq!(listed.len(), 1);
        assert_eq!(listed[0].meta.as_ref().unwrap().1.kernel, "a");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = fs::metadata(&dir).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o700);
        }
        assert_eq!(cache.clear(), 1);
        assert!(cache.entries().is_empty());
        let _ = fs::remove_dir_all(&dir);
    }

    #[test]
    fn damaged_entries_are_removed_not_loaded() {
        let dir = temp_dir("bad");
        let cache = DiskCache::open(&dir).unwrap();
        let k = key("b");
        let good = entry::encode(&k, &meta("b"), b"0123456789");
        let mut flipped = good.clone();
        *flipped.last_mut().unwrap() ^= 1;
        for (name, bytes) in [
            ("truncated", good[..good.len() - 3].to_vec()),
            ("flipped", flipped),
            ("other key", entry::encode(&key("c"), &meta("c"), b"x")),
        ] {
            let path = cache.path_for(&k);
            fs::create_dir_all(path.parent().unwrap()).unwrap();
            fs::write(&path, &bytes).unwrap();
            assert_eq!(cache.get(&k), None, "{name}");
            assert!(!path.exists(), "{name}: damaged entry must be removed");
        }
        let _ = fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_discarded_entry_says_why() {
        let dir = temp_dir("why");
        let cache = DiskCache::open(&dir).unwrap();
        let k = key("w");
        assert!(matches!(cache.lookup(&k), Err(None)), "absent");
        let mut bytes = entry::encode(&k, &meta("w"), b"0123456789");
        *bytes.last_mut().unwrap() ^= 1;
        let path = cache.path_for(&k);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(&path, &bytes).unwrap();
        assert!(matches!(cache.lookup(&k), Err(Some(_))), "discarded");
        assert!(matches!(cache.lookup(&k), Err(None)), "and removed");
        let _ = fs::remove_dir_all(&dir);
    }

    #[test]
    fn verify_reports_without_removing_and_remove_damaged_removes() {
        let dir = temp_dir("verify");
        let cache = DiskCache::open(&dir).unwrap();
        let (good, bad) = (key("g"), key("d"));
        assert!(cache.put(&good, &meta("g"), b"good"));
        let mut bytes = entry::encode(&bad, &meta("d"), b"0123456789");
        *bytes.last_mut().unwrap() ^= 1;
        let bad_path = cache.path_for(&bad);
        fs::create_dir_all(bad_path.parent().unwrap()).unwrap();
        fs::write(&bad_path, &bytes).unwrap();
        let damaged = |v: &[(PathBuf, Result<EntryMeta, Rejected>)]| {
            v.iter().filter(|(_, r)| r.is_err()).count()
        };
        for _ in 0..2 {
            let verdicts = cache.verify();
            assert_eq!((verdicts.len(), damaged(&verdicts)), (2, 1));
            assert!(bad_path.exists(), "verify changes nothing");
        }
        let verdicts = cache.remove_damaged();
        assert_eq!(damaged(&verdicts), 1);
        assert!(!bad_path.exists());
        assert_eq!(cache.get(&good).as_deref(), Some(&b"good"[..]));
        let _ = fs::remove_dir_all(&dir);
    }
}
