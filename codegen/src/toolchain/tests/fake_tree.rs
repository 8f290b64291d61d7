//! Throw-away directory trees under `std::env::temp_dir()`.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

static NEXT: AtomicU64 = AtomicU64::new(0);

/// A unique temporary directory, removed on drop.
pub(super) struct TempTree {
    root: PathBuf,
}

impl TempTree {
    pub(super) fn new(tag: &str) -> TempTree {
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let root = std::env::temp_dir().join(format!(
            "cudajit-toolchain-{tag}-{}-{n}",
            std::process::id()
        ));
        let _ = std::fs::remove_dir_all(&root);
        std::fs::create_dir_all(&root).expect("create temp tree");
        TempTree { root }
    }

    pub(super) fn path(&self, rel: &str) -> PathBuf {
        self.root.join(rel)
    }

    /// Creates `rel` (and its parents) as a small file.
    pub(super) fn file(&self, rel: &str) -> PathBuf {
        let p = self.path(rel);
        if let Some(parent) = p.parent() {
            std::fs::create_dir_all(parent).expect("create parent");
        }
        std::fs::write(&p, b"not a real library").expect("write fake file");
        p
    }

    /// Creates `rel` as a directory.
    pub(super) fn dir(&self, rel: &str) -> PathBuf {
        let p = self.path(rel);
        std::fs::create_dir_all(&p).expect("create dir");
        p
    }

    /// A fake CUDA toolkit at `rel`.
    pub(super) fn toolkit(&self, rel: &str) -> PathBuf {
        for f in [
            "nvvm/lib64/libnvvm.so",
            "nvvm/libdevice/libdevice.10.bc",
            "lib64/libnvJitLink.so.13",
            "lib64/libnvrtc.so.13",
            "bin/nvcc",
        ] {
            self.file(&format!("{rel}/{f}"));
        }
        self.path(rel)
    }

    /// Fake cu13 wheels inside the site-packages directory `rel`.
    pub(super) fn wheels(&self, rel: &str) -> PathBuf {
        for f in [
            "lib/libnvvm.so.4",
            "nvvm/libdevice/libdevice.10.bc",
            "lib/libnvJitLink.so.13",
            "lib/libnvrtc.so.13",
            "bin/nvcc",
        ] {
            self.file(&format!("{rel}/nvidia/cu13/{f}"));
        }
        self.path(rel)
    }

    /// A fake library directory for `LD_LIBRARY_PATH` plus nvcc for `PATH`.
    pub(super) fn loader_dir(&self, rel: &str) -> PathBuf {
        for f in [
            "libnvvm.so.4",
            "libnvJitLink.so.13",
            "libnvrtc.so.13",
            "nvcc",
        ] {
            self.file(&format!("{rel}/{f}"));
        }
        self.path(rel)
    }
}

impl Drop for TempTree {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.root);
    }
}

/// `p` as an owned string for `SearchEnv` pairs.
pub(super) fn s(p: &Path) -> String {
    p.display().to_string()
}
