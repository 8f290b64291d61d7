//! Opening a located shared library and resolving its symbols into plain
//! function pointers, with typed errors instead of panics.
//!
//! Libraries opened here are never unloaded. NVIDIA's compiler libraries
//! start worker threads (nvJitLink's thread pool) and register thread-local
//! destructors; `dlclose` while any of those exist crashes at thread or
//! process exit. Keeping them mapped costs one mapping per load (loads happen
//! once per [`Toolchain`](super::Toolchain)) and makes every resolved function
//! pointer valid for the rest of the process, which is what lets the `sys`
//! tables be plain `Copy` data.

use std::mem::ManuallyDrop;
use std::path::{Path, PathBuf};

use super::counters;
use super::discover::{Component, Located};
use super::error::{Result, ToolchainError};

/// An opened library that is never closed.
pub(crate) struct DynLib {
    lib: ManuallyDrop<libloading::Library>,
    component: Component,
    path: PathBuf,
}

impl DynLib {
    /// `dlopen`s the located file (or bare soname).
    pub(crate) fn open(located: &Located) -> Result<Self> {
        // SAFETY: loading runs the library's initialisers. The file was found
        // as one of NVIDIA's compiler libraries, whose initialisers have no
        // preconditions on the caller; nothing else is executed here.
        let lib = unsafe { libloading::Library::new(&located.path) }.map_err(|e| {
            ToolchainError::Load {
                component: located.component,
                path: located.path.clone(),
                message: e.to_string(),
            }
        })?;
        counters::record_library_loaded();
        tracing::debug!(component = %located.component, path = %located.path.display(), "loaded library");
        Ok(DynLib {
            lib: ManuallyDrop::new(lib),
            component: located.component,
            path: located.path.clone(),
        })
    }

    /// The path the library was opened from.
    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// The first of `names` the library exports, or a `MissingSymbol` error
    /// naming the last (plain) spelling and listing every spelling tried.
    ///
    /// # Safety
    /// `T` must be the `extern "C"` function pointer type matching the C
    /// declaration of every symbol in `names`.
    pub(crate) unsafe fn required<T: Copy>(&self, names: &[&str]) -> Result<T> {
        // SAFETY: forwarded caller contract: `T` matches every name.
        let found = unsafe { self.optional(names) };
        found.ok_or_else(|| ToolchainError::MissingSymbol {
            component: self.component,
            path: self.path.clone(),
            symbol: names.last().map_or_else(String::new, |s| (*s).to_owned()),
            tried: names.iter().map(|s| (*s).to_owned()).collect(),
        })
    }

    /// The first of `names` the library exports, if any.
    ///
    /// # Safety
    /// As for [`DynLib::required`].
    pub(crate) unsafe fn optional<T: Copy>(&self, names: &[&str]) -> Option<T> {
        names.iter().find_map(|name| {
            // SAFETY: the caller guarantees `T` is the symbol's true type. The
            // copied-out pointer stays valid after the `Symbol` borrow ends
            // because the library is never unloaded (module docs).
            let sym = unsafe { self.lib.get::<T>(name.as_bytes()) }.ok()?;
            Some(*sym)
        })
    }
}
