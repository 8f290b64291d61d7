//! The JIT cache: compiled cubins in memory (per process) and on disk (across runs).
//!
//! - [`compiler_identity`]: memoised hashes and versions of the compiler libraries the
//!   keys name;
//! - [`key`]: entry names derived from everything that changes a cubin (composed there,
//!   field by field, for the cubin key and the launch identity), with the components
//!   recorded for explanations;
//! - [`entry`]: the file format (header, metadata, checksum);
//! - [`store`]: entries on disk, written atomically, verified on read;
//! - `fs`: the directory's files (paths, listing, private directories, trusted reads),
//!   shared by the store, the lock, eviction and the memo;
//! - [`lock`]: at most one compile per key across threads and processes;
//! - [`evict`]: the size cap (`CUDAJIT_CACHE_MAX_BYTES`, least recently used first);
//! - [`explain`]: why a lookup missed.
//!
//! Where the disk cache lives is decided once per process by [`disk_cache`]:
//! `CUDAJIT_CACHE=0` disables it, `CUDAJIT_CACHE_DIR` chooses the directory, otherwise
//! `$XDG_CACHE_HOME/cudajit` or `~/.cache/cudajit`.

pub mod compiler_identity;
pub mod entry;
pub mod evict;
pub mod explain;
pub(crate) mod fs;
pub mod key;
pub mod lock;
pub mod store;

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

pub use entry::{EntryMeta, Rejected};
pub use explain::explain_miss;
pub use key::{
    cache_key, launch_identity, library_identity, CacheKey, KeyBuilder, KeyComponent, KeyParts,
};
pub use lock::CompileLock;
pub use store::DiskCache;

/// The size cap when `CUDAJIT_CACHE_MAX_BYTES` is not set: 1 GiB.
pub const DEFAULT_MAX_BYTES: u64 = 1 << 30;

/// Where the disk cache should be, from environment variables given as a lookup function
/// (so tests can drive it). `None` when disabled.
pub fn configured_dir(var: impl Fn(&str) -> Option<String>) -> Option<PathBuf> {
    if let Some(setting) = var("CUDAJIT_CACHE") {
        if matches!(
            setting.trim().to_ascii_lowercase().as_str(),
            "0" | "off" | "false" | "no"
        ) {
            return None;
        }
    }
    if let Some(dir) = var("CUDAJIT_CACHE_DIR").filter(|d| !d.is_empty()) {
        return Some(PathBuf::from(dir));
    }
    if let Some(xdg) = var("XDG_CACHE_HOME").filter(|d| !d.is_empty()) {
        return Some(PathBuf::from(xdg).join("cudajit"));
    }
    if let Some(home) = var("HOME").filter(|d| !d.is_empty()) {
        return Some(PathBuf::from(home).join(".cache").join("cudajit"));
    }
    Some(std::env::temp_dir().join("cudajit-cache"))
}

/// The size cap from `CUDAJIT_CACHE_MAX_BYTES` (default [`DEFAULT_MAX_BYTES`]; `0`: none).
pub fn configured_max_bytes(var: impl Fn(&str) -> Option<String>) -> Result<Option<u64>, String> {
    match var("CUDAJIT_CACHE_MAX_BYTES").filter(|v| !v.trim().is_empty()) {
        Some(text) => evict::parse_max_bytes(&text),
        None => Ok(Some(DEFAULT_MAX_BYTES)),
    }
}

/// Opens the cache configured by `var`: `Ok(None)` when disabled, `Err` with the reason
/// (and the fix) when configured but unusable.
pub fn open_configured(var: impl Fn(&str) -> Option<String>) -> Result<Option<DiskCache>, String> {
    let Some(dir) = configured_dir(&var) else {
        return Ok(None);
    };
    let max_bytes = configured_max_bytes(&var).unwrap_or_else(|error| {
        crate::log::warn_always(&format!("{error}; using the default cap of 1 GiB"));
        Some(DEFAULT_MAX_BYTES)
    });
    DiskCache::open(&dir)
        .map(|cache| Some(cache.with_max_bytes(max_bytes)))
        .map_err(|error| {
            format!(
                "cannot use {} as the JIT cache ({error}). Set CUDAJIT_CACHE_DIR to a directory of yours that is writable.",
                dir.display()
            )
        })
}

/// The process's disk cache, opened on first use; `None` if disabled or unusable (then a
/// single warning says why, and compiled kernels stay in memory).
pub fn disk_cache() -> Option<&'static DiskCache> {
    static CACHE: OnceLock<Option<DiskCache>> = OnceLock::new();
    CACHE
        .get_or_init(|| match open_configured(|name| std::env::var(name).ok()) {
            Ok(cache) => cache,
            Err(error) => {
                crate::log::warn_always(&format!(
                    "{error} Compiled kernels are kept in memory only."
                ));
                None
            }
        })
        .as_ref()
}

/// Where the toolchain digests are memoised: the disk cache's directory, when there is one.
pub fn memo_dir() -> Option<&'static Path> {
    disk_cache().map(DiskCache::root)
}

/// The payload of `key` from `disk` if present and accepted by `valid` (for cubins: a CUDA
/// ELF defining the kernel). A rejected entry is removed, and the miss says why
/// (`Err(Some(reason))`; `Err(None)`: no entry, or no disk cache).
pub fn disk_lookup(
    disk: Option<&DiskCache>,
    key: &CacheKey,
    valid: impl Fn(&[u8]) -> bool,
) -> Result<Vec<u8>, Option<String>> {
    let disk = disk.ok_or(None)?;
    let (_, bytes) = disk
        .lookup(key)
        .map_err(|rejected| rejected.map(|r| r.to_string()))?;
    if valid(&bytes) {
        return Ok(bytes);
    }
    tracing::debug!(
        "cudajit: cache entry {} is not a usable cubin for its kernel; recompiling",
        disk.path_for(key).display()
    );
    let _ = std::fs::remove_file(disk.path_for(key));
    Err(Some("not a usable cubin for its kernel".to_owned()))
}

/// The metadata of a new entry: the specialisation text is the value of the key's
/// `spec*` component, when it has one.
pub fn entry_meta(kernel: &str, arch: &str, components: &[KeyComponent]) -> EntryMeta {
    let specialisation = components
        .iter()
        .filter(|c| c.tag.starts_with("spec"))
        .map(|c| c.value.as_str())
        .collect::<Vec<_>>()
        .join(", ");
    EntryMeta {
        kernel: kernel.to_owned(),
        specialisation,
        arch: arch.to_owned(),
        created: std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs()),
        cudajit: env!("CARGO_PKG_VERSION").to_owned(),
        components: components.to_vec(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(pairs: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<String> {
        move |name: &str| {
            pairs
                .iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| v.to_string())
        }
    }

    #[test]
    fn configuration_order() {
        assert_eq!(
            configured_dir(env(&[("CUDAJIT_CACHE", "0"), ("HOME", "/h")])),
            None
        );
        assert_eq!(
            configured_dir(env(&[
                ("CUDAJIT_CACHE_DIR", "/c"),
                ("XDG_CACHE_HOME", "/x")
            ])),
            Some(PathBuf::from("/c"))
        );
        assert_eq!(
            configured_dir(env(&[("XDG_CACHE_HOME", "/x"), ("HOME", "/h")])),
            Some(PathBuf::from("/x/cudajit"))
        );
        assert_eq!(
            configured_dir(env(&[("HOME", "/h")])),
            Some(PathBuf::from("/h/.cache/cudajit"))
        );
    }

    #[test]
    fn size_cap_configuration() {
        assert_eq!(configured_max_bytes(env(&[])), Ok(Some(DEFAULT_MAX_BYTES)));
        assert_eq!(
            configured_max_bytes(env(&[("CUDAJIT_CACHE_MAX_BYTES", "64M")])),
            Ok(Some(64 << 20))
        );
        assert_eq!(
            configured_max_bytes(env(&[("CUDAJIT_CACHE_MAX_BYTES", "0")])),
            Ok(None)
        );
    }
}
