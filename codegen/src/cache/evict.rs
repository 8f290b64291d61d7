//! The size cap: least recently used entries go first.
//!
//! "Last use" is an entry file's modification time, which a hit refreshes. Eviction runs
//! after each write (writes are rare: one per compile) and never removes the entry just
//! written. It also sweeps what interrupted processes leave behind: temporary files older
//! than an hour and lock files nobody holds whose entry is gone.

use std::fs;
use std::path::Path;
use std::time::{Duration, SystemTime};

use super::fs::{entry_files, lock_path_for, read_dir, ENTRY_EXTENSION};
use super::lock;

/// Temporary files older than this belong to a process that died while writing.
const STRAY_AGE: Duration = Duration::from_secs(3600);

/// Removes least recently used entries under `root` until their total size is at most
/// `max_bytes`, keeping `keep`. Returns the number of entries removed.
pub fn enforce_cap(root: &Path, max_bytes: u64, keep: &Path) -> usize {
    let mut entries: Vec<(SystemTime, u64, std::path::PathBuf)> = entry_files(root)
        .into_iter()
        .filter_map(|path| {
            let metadata = fs::metadata(&path).ok()?;
            let used = metadata.modified().unwrap_or(SystemTime::UNIX_EPOCH);
            Some((used, metadata.len(), path))
        })
        .collect();
    let mut total: u64 = entries.iter().map(|(_, size, _)| size).sum();
    if total <= max_bytes {
        return 0;
    }
    entries.sort();
    let mut removed = 0;
    for (_, size, path) in entries {
        if total <= max_bytes {
            break;
        }
        if path == keep {
            continue;
        }
        if fs::remove_file(&path).is_ok() {
            total = total.saturating_sub(size);
            removed += 1;
            lock::remove_if_unlocked(&lock_path_for(&path));
            tracing::debug!(
                "cudajit: evicted {} (cache over CUDAJIT_CACHE_MAX_BYTES = {max_bytes})",
                path.display()
            );
        }
    }
    remove_strays(root, STRAY_AGE);
    removed
}

/// Removes temporary files older than `age` and unheld lock files without an entry.
pub fn remove_strays(root: &Path, age: Duration) {
    let now = SystemTime::now();
    for shard in read_dir(root).into_iter().filter(|p| p.is_dir()) {
        for file in read_dir(&shard) {
            let name = file.file_name().and_then(|n| n.to_str()).unwrap_or("");
            if name.starts_with('.') && name.ends_with(".tmp") {
                let old = fs::metadata(&file)
                    .and_then(|m| m.modified())
                    .ok()
                    .and_then(|t| now.duration_since(t).ok())
                    .is_some_and(|elapsed| elapsed >= age);
                if old {
                    let _ = fs::remove_file(&file);
                }
            } else if name.ends_with(".lock")
                && (age.is_zero() || !file.with_extension(ENTRY_EXTENSION).exists())
            {
                lock::remove_if_unlocked(&file);
            }
        }
    }
}

/// What `CUDAJIT_CACHE_MAX_BYTES` accepts.
pub const SIZE_VALUES: &str =
    "a size such as `2G`, `512 MiB` or `1073741824` (K, M, G and T are powers of 1024; 0 = no cap)";

/// Parses a size (`CUDAJIT_CACHE_MAX_BYTES`): a byte count, optionally with a unit, the
/// decimal-looking ones (`K`, `MB`) read as binary (`KiB`, `MiB`), as the variable always
/// has. `None` when not a size. `parse-size` does the reading (a dependency of no
/// dependencies, 0.4 s to build).
pub fn parse_size(text: &str) -> Option<u64> {
    parse_size::Config::new()
        .with_binary()
        .parse_size(text)
        .ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cache::entry::EntryMeta;
    use crate::cache::key::KeyBuilder;
    use crate::cache::store::DiskCache;

    #[test]
    fn sizes_parse() {
        assert_eq!(parse_size("1024"), Some(1024));
        assert_eq!(parse_size("2G"), Some(2 << 30));
        assert_eq!(parse_size("2gb"), Some(2 << 30));
        assert_eq!(parse_size("3 MiB"), Some(3 << 20));
        assert_eq!(parse_size("1.5K"), Some(1536));
        assert_eq!(parse_size("0"), Some(0));
        for bad in ["lots", "5X", "-1G", "1.5.2G", "G"] {
            assert_eq!(parse_size(bad), None, "{bad}");
        }
    }

    #[test]
    fn oldest_entries_go_first_never_the_new_one() {
        let dir = std::env::temp_dir().join(format!("cudajit-evict-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        let cache = DiskCache::open(&dir).unwrap();
        let keys: Vec<_> = (0..4)
            .map(|i| KeyBuilder::new("evict").field("i", &[i]).finish())
            .collect();
        let payload = vec![7u8; 1000];
        for (age, key) in keys.iter().enumerate() {
            cache.put(key, &EntryMeta::default(), &payload);
            let file = fs::File::options()
                .append(true)
                .open(cache.path_for(key))
                .unwrap();
            let when = SystemTime::now() - Duration::from_secs(100 * (4 - age as u64));
            file.set_modified(when).unwrap();
        }
        let entry_size = fs::metadata(cache.path_for(&keys[0])).unwrap().len();
        // Room for two entries; the oldest (keys[0]) is the one just "written".
        let removed = enforce_cap(&dir, 2 * entry_size, &cache.path_for(&keys[0]));
        assert_eq!(removed, 2);
        assert!(cache.path_for(&keys[0]).exists());
        assert!(!cache.path_for(&keys[1]).exists());
        assert!(!cache.path_for(&keys[2]).exists());
        assert!(cache.path_for(&keys[3]).exists());
        let _ = fs::remove_dir_all(&dir);
    }
}
