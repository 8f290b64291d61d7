//! The cache directory's files, as every part of the cache sees them: where entries and
//! their lock files are (`<root>/<2 hex>/<64 hex>.cubin`, `<64 hex>.lock`), how they are
//! listed, and how directories are created and files opened so that another user cannot
//! plant code (mode 0700, ownership checked on the opened file).
//!
//! The store, the compile lock, eviction and the toolchain memo all build on this module
//! and on nothing of each other's, so none of them imports another in a circle.

use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};

use super::entry::Rejected;
use super::key::CacheKey;

/// The extension of entry files.
pub const ENTRY_EXTENSION: &str = "cubin";

/// The lock file of an entry file (`<hex>.cubin` → `<hex>.lock`).
pub fn lock_path_for(entry: &Path) -> PathBuf {
    entry.with_extension("lock")
}

/// The key an entry file's name says it holds.
pub fn key_of_path(path: &Path) -> Option<CacheKey> {
    let stem = path.file_stem()?.to_str()?;
    if stem.len() != 64 {
        return None;
    }
    let mut key = [0u8; 32];
    for (i, byte) in key.iter_mut().enumerate() {
        *byte = u8::from_str_radix(stem.get(2 * i..2 * i + 2)?, 16).ok()?;
    }
    Some(CacheKey(key))
}

/// Every `<root>/<2 hex>/<64 hex>.cubin` file.
pub(crate) fn entry_files(root: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for shard in read_dir(root) {
        let is_shard = shard
            .file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|n| n.len() == 2 && n.bytes().all(|b| b.is_ascii_hexdigit()));
        if !is_shard || !shard.is_dir() {
            continue;
        }
        for file in read_dir(&shard) {
            if file.extension().and_then(|e| e.to_str()) == Some(ENTRY_EXTENSION)
                && key_of_path(&file).is_some()
            {
                files.push(file);
            }
        }
    }
    files.sort();
    files
}

/// The paths in `dir`; none when it cannot be read.
pub(crate) fn read_dir(dir: &Path) -> Vec<PathBuf> {
    fs::read_dir(dir)
        .map(|entries| entries.flatten().map(|e| e.path()).collect())
        .unwrap_or_default()
}

/// Creates `dir` and missing parents with mode 0700.
#[cfg(unix)]
pub(crate) fn create_private_dir(dir: &Path) -> std::io::Result<()> {
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

/// Creates `dir` and missing parents.
#[cfg(not(unix))]
pub(crate) fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    fs::create_dir_all(dir)
}

/// Refuses a cache directory owned by another user (they could plant entries).
pub(crate) fn check_dir_owner(dir: &Path) -> std::io::Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        let owner = fs::metadata(dir)?.uid();
        if owner != effective_uid() {
            return Err(std::io::Error::new(
                std::io::ErrorKind::PermissionDenied,
                format!("the directory belongs to user id {owner}, not to this user"),
            ));
        }
    }
    let _ = dir;
    Ok(())
}

/// Opens a file if it exists and is safe to trust: owned by this user and not writable by
/// others (a shared directory must not let another user plant code). The check is made
/// on the opened file, so the file cannot be swapped between check and read.
pub(crate) fn open_trusted(path: &Path) -> Result<Option<fs::File>, Rejected> {
    let file = match fs::File::open(path) {
        Ok(file) => file,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(Rejected::Unreadable(e.to_string())),
    };
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        let metadata = file
            .metadata()
            .map_err(|e| Rejected::Unreadable(e.to_string()))?;
        if metadata.uid() != effective_uid() || metadata.mode() & 0o002 != 0 {
            return Err(Rejected::UnsafeOwnership);
        }
    }
    Ok(Some(file))
}

/// Reads a whole file through [`open_trusted`].
pub(crate) fn read_trusted(path: &Path) -> Result<Option<Vec<u8>>, Rejected> {
    let Some(mut file) = open_trusted(path)? else {
        return Ok(None);
    };
    let mut bytes = Vec::new();
    match file.read_to_end(&mut bytes) {
        Ok(_) => Ok(Some(bytes)),
        Err(e) => Err(Rejected::Unreadable(e.to_string())),
    }
}

#[cfg(unix)]
fn effective_uid() -> u32 {
    extern "C" {
        fn geteuid() -> u32;
    }
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { geteuid() }
}
