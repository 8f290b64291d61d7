//! The fingerprint of a package's own sources, for the build scripts of `cudajit-core` and
//! `cudajit-codegen`: a development build changes the IR or the generated code without
//! changing the version number, so the JIT cache key holds both packages' fingerprints.
//! Only the calling package's files are read, so a published crate builds on its own.

use std::path::{Path, PathBuf};

/// Fingerprints the files under `src/` of the package being built and sets the
/// environment variable `variable` of its compilation to the fingerprint (16 hex digits);
/// reruns the build script when `src/` changes.
pub fn emit_source_fingerprint(variable: &str) {
    println!("cargo:rerun-if-changed=src");
    let mut files = Vec::new();
    collect(Path::new("src"), &mut files);
    files.sort();
    println!("cargo:rustc-env={variable}={:016x}", fnv1a(&files));
}

/// FNV-1a over each file's path and contents: no dependencies, stable, enough to tell
/// builds apart.
fn fnv1a(files: &[PathBuf]) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for file in files {
        let bytes = std::fs::read(file).unwrap_or_default();
        for byte in file.to_string_lossy().bytes().chain(bytes) {
            hash ^= u64::from(byte);
            hash = hash.wrapping_mul(0x100_0000_01b3);
        }
    }
    hash
}

fn collect(dir: &Path, files: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            collect(&path, files);
        } else {
            files.push(path);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_fingerprint_changes_with_a_file_and_with_its_name() {
        let dir = std::env::temp_dir().join(format!("cudajit-fingerprint-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("a.rs");
        std::fs::write(&file, "fn a() {}").unwrap();
        let first = fnv1a(std::slice::from_ref(&file));
        std::fs::write(&file, "fn b() {}").unwrap();
        let changed = fnv1a(std::slice::from_ref(&file));
        let renamed = dir.join("b.rs");
        std::fs::rename(&file, &renamed).unwrap();
        let moved = fnv1a(std::slice::from_ref(&renamed));
        std::fs::remove_dir_all(&dir).unwrap();
        assert_ne!(first, changed);
        assert_ne!(changed, moved);
    }
}
