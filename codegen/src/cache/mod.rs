//! The JIT cache: compiled cubins in memory (per process) and on disk (across runs).
//!
//! [`key`] derives entry names from everything that changes a cubin; [`store`] keeps
//! entries on disk safely. Where the disk cache lives is decided once per process by
//! [`disk_cache`]: `CUDAJIT_CACHE=0` disables it, `CUDAJIT_CACHE_DIR` chooses the directory,
//! otherwise `$XDG_CACHE_HOME/cudajit` or `~/.cache/cudajit`.

pub mod key;
pub mod store;

use std::path::PathBuf;
use std::sync::OnceLock;

pub use key::{CacheKey, KeyBuilder};
pub use store::DiskCache;

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

/// The process's disk cache, opened on first use; `None` if disabled or unusable (then a
/// single warning says why, and compiled kernels stay in memory).
pub fn disk_cache() -> Option<&'static DiskCache> {
    static CACHE: OnceLock<Option<DiskCache>> = OnceLock::new();
    CACHE
        .get_or_init(|| {
            let dir = configured_dir(|name| std::env::var(name).ok())?;
            match DiskCache::open(&dir) {
                Ok(cache) => Some(cache),
                Err(error) => {
                    tracing::warn!(
                        "cudajit: cannot use {} as the JIT cache ({error}); compiled kernels are kept in memory only. Set CUDAJIT_CACHE_DIR to a writable directory.",
                        dir.display()
                    );
                    None
                }
            }
        })
        .as_ref()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn configuration_order() {
        let env = |pairs: &'static [(&'static str, &'static str)]| {
            move |name: &str| {
                pairs
                    .iter()
                    .find(|(k, _)| *k == name)
                    .map(|(_, v)| v.to_string())
            }
        };
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
}
