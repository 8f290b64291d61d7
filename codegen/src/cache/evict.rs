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

/// Parses `CUDAJIT_CACHE_MAX_BYTES`: a byte count, optionally with a binary suffix
/// (`K`, `M`, `G`, `T`, also written `KiB`, `MB`, ...). `0` means no cap.
pub fn parse_max_bytes(text: &str) -> Result<Option<u64>, String> {
    let trimmed = text.trim();
    let digits_end = trimmed
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(trimmed.len());
    let (number, suffix) = trimmed.split_at(digits_end);
    let number: u64 = number.parse().map_err(|_| {
        format!("CUDAJIT_CACHE_MAX_BYTES=`{text}` is not a size: write a byte count such as 1073741824 or 1G")
    })?;
    let scale: u64 = match suffix.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "k" | "kb" | "kib" => 1 << 10,
        "m" | "mb" | "mib" => 1 << 20,
        "g" | "gb" | "gib" => 1 << 30,
        "t" | "tb" | "tib" => 1 << 40,
        _ => {
            return Err(format!(
                "CUDAJIT_CACHE_MAX_BYTES=`{text}` has an unknown unit: use K, M, G or T"
            ))
        }
    };
    let bytes = number
        .checked_mul(scale)
        .ok_or_else(|| format!("CUDAJIT_CACHE_MAX_BYTES=`{text}` is too large"))?;
    Ok((bytes > 0).then_some(bytes))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cache::entry::EntryMeta;
    use crate::cache::key::KeyBuilder;
    use crate::cache::store::DiskCache;

    #[test]
    fn sizes_parse() {
        assert_eq!(parse_max_bytes("1024"), Ok(Some(1024)));
        assert_eq!(parse_max_bytes("2G"), Ok(Some(2 << 30)));
        assert_eq!(parse_max_bytes(" 3 MiB "), Ok(Some(3 << 20)));
        assert_eq!(parse_max_bytes("0"), Ok(None));
        assert!(parse_max_bytes("lots").is_err());
        assert!(parse_max_bytes("5X").is_err());
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
