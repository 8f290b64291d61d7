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

use cudajit_core::{EnvVar, EnvVarError};

pub use entry::{EntryMeta, Rejected};
pub use explain::explain_miss;
pub use key::{library_identity, CacheKey, KeyBuilder, KeyComponent, KeyParts};
pub use lock::CompileLock;
pub use store::DiskCache;

/// The size cap when `CUDAJIT_CACHE_MAX_BYTES` is not set: 1 GiB.
pub const DEFAULT_MAX_BYTES: u64 = 1 << 30;

/// The variable that turns the disk cache off (`0`).
pub const CACHE_VARIABLE: &str = "CUDAJIT_CACHE";
/// The variable naming the cache directory.
pub const DIR_VARIABLE: &str = "CUDAJIT_CACHE_DIR";
/// The variable setting the size cap.
pub const MAX_BYTES_VARIABLE: &str = "CUDAJIT_CACHE_MAX_BYTES";

/// A lookup of environment variables (the process's, or a test's).
fn setting(var: &impl Fn(&str) -> Option<String>, name: &'static str) -> EnvVar {
    EnvVar::given(name, var(name))
}

/// Where the disk cache should be, from environment variables given as a lookup function
/// (so tests can drive it). `None` when disabled; an error when `CUDAJIT_CACHE` is not an
/// on/off word.
pub fn configured_dir(
    var: impl Fn(&str) -> Option<String>,
) -> Result<Option<PathBuf>, EnvVarError> {
    if setting(&var, CACHE_VARIABLE).flag()? == Some(false) {
        return Ok(None);
    }
    let dir = if let Some(dir) = var(DIR_VARIABLE).filter(|d| !d.is_empty()) {
        PathBuf::from(dir)
    } else if let Some(xdg) = var("XDG_CACHE_HOME").filter(|d| !d.is_empty()) {
        PathBuf::from(xdg).join("cudajit")
    } else if let Some(home) = var("HOME").filter(|d| !d.is_empty()) {
        PathBuf::from(home).join(".cache").join("cudajit")
    } else {
        std::env::temp_dir().join("cudajit-cache")
    };
    Ok(Some(dir))
}

/// The size cap from `CUDAJIT_CACHE_MAX_BYTES` (default [`DEFAULT_MAX_BYTES`]; `0`: none);
/// an error when it is not a size.
pub fn configured_max_bytes(
    var: impl Fn(&str) -> Option<String>,
) -> Result<Option<u64>, EnvVarError> {
    let cap = setting(&var, MAX_BYTES_VARIABLE).parse(evict::SIZE_VALUES, evict::parse_size)?;
    Ok(match cap {
        None => Some(DEFAULT_MAX_BYTES),
        Some(bytes) => (bytes > 0).then_some(bytes),
    })
}

/// Why the configured cache cannot be used.
#[derive(Clone, PartialEq, Eq, thiserror::Error, cudajit_error_debug::ReadableDebug)]
#[non_exhaustive]
pub enum OpenError {
    /// A variable is set to a value cudajit cannot use: an error of the program's run.
    #[error(transparent)]
    Environment(EnvVarError),
    /// The directory cannot be used (with the reason and the fix): compiled kernels stay
    /// in memory.
    #[error("{0}")]
    Unusable(String),
}

/// Opens the cache configured by `var`: `Ok(None)` when disabled.
pub fn open_configured(
    var: impl Fn(&str) -> Option<String>,
) -> Result<Option<DiskCache>, OpenError> {
    let Some(dir) = configured_dir(&var).map_err(OpenError::Environment)? else {
        return Ok(None);
    };
    let max_bytes = configured_max_bytes(&var).map_err(OpenError::Environment)?;
    DiskCache::open(&dir)
        .map(|cache| Some(cache.with_max_bytes(max_bytes)))
        .map_err(|error| {
            OpenError::Unusable(format!(
                "cannot use {} as the JIT cache ({error}). Set CUDAJIT_CACHE_DIR to a directory of yours that is writable.",
                dir.display()
            ))
        })
}

/// The process's disk cache, opened on first use; `Ok(None)` if disabled or unusable (then
/// a single warning says why, and compiled kernels stay in memory); an error when one of
/// its variables is set to a value cudajit cannot use.
pub fn disk_cache() -> Result<Option<&'static DiskCache>, EnvVarError> {
    static CACHE: OnceLock<Result<Option<DiskCache>, EnvVarError>> = OnceLock::new();
    let opened = CACHE.get_or_init(|| match open_configured(|name| std::env::var(name).ok()) {
        Ok(cache) => Ok(cache),
        Err(OpenError::Environment(error)) => Err(error),
        Err(OpenError::Unusable(reason)) => {
            crate::log::warn_always(&format!(
                "{reason} Compiled kernels are kept in memory only."
            ));
            Ok(None)
        }
    });
    opened.as_ref().map(Option::as_ref).map_err(Clone::clone)
}

/// Where the toolchain digests are memoised: the disk cache's directory, when there is one
/// (a misconfigured cache has none; the compile reports the setting).
pub fn memo_dir() -> Option<&'static Path> {
    disk_cache().ok().flatten().map(DiskCache::root)
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
            Ok(None)
        );
        assert_eq!(
            configured_dir(env(&[("CUDAJIT_CACHE", "off"), ("HOME", "/h")])),
            Ok(None)
        );
        assert_eq!(
            configured_dir(env(&[
                ("CUDAJIT_CACHE_DIR", "/c"),
                ("XDG_CACHE_HOME", "/x")
            ])),
            Ok(Some(PathBuf::from("/c")))
        );
        assert_eq!(
            configured_dir(env(&[("XDG_CACHE_HOME", "/x"), ("HOME", "/h")])),
            Ok(Some(PathBuf::from("/x/cudajit")))
        );
        assert_eq!(
            configured_dir(env(&[("CUDAJIT_CACHE", "1"), ("HOME", "/h")])),
            Ok(Some(PathBuf::from("/h/.cache/cudajit")))
        );
        // A value that is neither on nor off is an error, not "on".
        let error = configured_dir(env(&[("CUDAJIT_CACHE", "of"), ("HOME", "/h")])).unwrap_err();
        assert_eq!(error.variable, "CUDAJIT_CACHE");
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
        for bad in ["lots", "5X", "-1G", "1.5.2G"] {
            let pairs: &'static [(&'static str, &'static str)] =
                Box::leak(Box::new([("CUDAJIT_CACHE_MAX_BYTES", bad)]));
            let error = configured_max_bytes(env(pairs)).unwrap_err();
            assert_eq!(error.variable, "CUDAJIT_CACHE_MAX_BYTES", "{bad}");
            assert!(error.to_string().contains("such as `2G`"), "{error}");
        }
        // A bad cap is an error of the configuration, not a default of 1 GiB.
        assert!(matches!(
            open_configured(env(&[("CUDAJIT_CACHE_MAX_BYTES", "lots"), ("HOME", "/h")])),
            Err(OpenError::Environment(_))
        ));
    }
}
