//! A cheap fingerprint of the located toolchain for cache keys.
//!
//! Hashing the libraries themselves (60-100 MB each) on every process start
//! would cost more than many cache hits save, and loading them costs even
//! more. Path, size and modification time change whenever an installation is
//! upgraded or swapped, which is what a cache key has to notice.

use std::path::PathBuf;
use std::time::{Duration, UNIX_EPOCH};

use super::discover::{Component, Located};

/// Identity of one located file.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct FileIdentity {
    /// The component.
    pub component: Component,
    /// Canonical path (symlinks resolved), or the located path when it
    /// cannot be resolved (a bare soname from the loader).
    pub path: PathBuf,
    /// File size in bytes, when the file could be inspected.
    pub size: Option<u64>,
    /// Modification time since the Unix epoch, when available.
    pub modified: Option<Duration>,
}

impl FileIdentity {
    /// Inspects `located` with one `canonicalize` and one `metadata` call.
    pub fn of(located: &Located) -> FileIdentity {
        let path = located
            .path
            .canonicalize()
            .unwrap_or_else(|_| located.path.clone());
        let meta = std::fs::metadata(&path).ok();
        FileIdentity {
            component: located.component,
            size: meta.as_ref().map(|m| m.len()),
            modified: meta
                .and_then(|m| m.modified().ok())
                .and_then(|t| t.duration_since(UNIX_EPOCH).ok()),
            path,
        }
    }
}

/// Identity of the components a compilation depends on (libNVVM, libdevice,
/// nvJitLink), in that order.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ToolchainIdentity {
    /// One entry per component.
    pub files: Vec<FileIdentity>,
}

impl ToolchainIdentity {
    /// Feeds the identity into `h`, unambiguously (every field is tagged or
    /// length-prefixed) so distinct identities never hash alike.
    pub fn hash_into(&self, h: &mut blake3::Hasher) {
        h.update(b"cudajit-toolchain-identity-v1\0");
        h.update(&(self.files.len() as u64).to_le_bytes());
        for f in &self.files {
            let name = f.component.to_string();
            let path = f.path.as_os_str().as_encoded_bytes();
            for field in [name.as_bytes(), path] {
                h.update(&(field.len() as u64).to_le_bytes());
                h.update(field);
            }
            match f.size {
                Some(size) => {
                    h.update(&[1u8]);
                    h.update(&size.to_le_bytes());
                }
                None => {
                    h.update(&[0u8]);
                }
            }
            match f.modified {
                Some(t) => {
                    h.update(&[1u8]);
                    h.update(&t.as_secs().to_le_bytes());
                    h.update(&t.subsec_nanos().to_le_bytes());
                }
                None => {
                    h.update(&[0u8]);
                }
            }
        }
    }

    /// BLAKE3 of [`ToolchainIdentity::hash_into`] alone.
    pub fn digest(&self) -> [u8; 32] {
        let mut h = blake3::Hasher::new();
        self.hash_into(&mut h);
        h.finalize().into()
    }
}
